"""uvicorn's protocol classes, guarded: each connection reports its phase to the
:class:`~conflictology.server.connections.ConnectionGuard` and is dropped past its deadline, refused
past a cap, or evicted (see ``connections``); ``uvicorn_options`` gives uvicorn these classes and the
WebSocket limits."""

from __future__ import annotations

import asyncio
import json
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import PayloadTooBig, ProtocolError

from conflictology.server.connections import ConnectionGuard, ConnectionLimits, Phase
from conflictology.server.log_caps import install_uvicorn_line_cap

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from conflictology.server.config import ServerConfig

# ---- what a dropped connection is sent ----------------------------------------------------------------


def _response(status: int, code: str, message: str, retry_after: int | None = None) -> bytes:
    """A whole HTTP/1.1 response, written before the request was read (or finished): the same
    ``{"error", "code"}`` body as the application's errors, then the connection closes."""
    body = json.dumps({"error": message, "code": code}).encode()
    head = [
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}",
        "content-type: application/json",
        f"content-length: {len(body)}",
        "connection: close",
    ]
    if retry_after is not None:
        head.append(f"retry-after: {retry_after}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


REFUSED_ADDRESS = _response(
    429, "too_many_connections", "too many connections from your address; close some and retry", 5
)
REFUSED_SERVER = _response(503, "server_busy", "the server has too many connections; retry shortly", 5)
EVICTED = _response(503, "server_busy", "the server needed this connection; retry", 1)
TIMED_OUT = _response(408, "request_timeout", "the request did not arrive in time")


# ---- the protocol classes -------------------------------------------------------------------------------


class _GuardedHttp(asyncio.Protocol):
    """What the guarded HTTP protocols share. uvicorn's classes set ``transport``, ``client``,
    ``loop`` and ``cycle``; the subclasses below say when headers and bodies are complete."""

    guard: ClassVar[ConnectionGuard]
    transport: asyncio.Transport
    client: tuple[str, int] | None
    loop: asyncio.AbstractEventLoop
    cycle: Any
    _phase: Phase = Phase.HEADERS
    _deadline: asyncio.TimerHandle | None = None
    _unread: asyncio.TimerHandle | None = None
    _buffered: int = 0  # bytes still to send when an IDLE deadline last looked
    _refused: bool = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        refusal = self.guard.admit(transport, self.client, self._evicted)
        if refusal is not None:
            self._refused = True
            self.transport.write(REFUSED_ADDRESS if refusal == "address_cap" else REFUSED_SERVER)
            self.transport.close()
            return
        # The first request's deadline runs from the connection's opening, not its first byte:
        # a connection that sends nothing at all is a slow client too.
        self._phase = Phase.IDLE
        self._enter(Phase.HEADERS)

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_deadline()
        self._cancel_unread()
        self.guard.release(self.transport)
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        # The client is not reading what it asked for (the transport's buffer is full): it is a
        # slow client like one that does not send, evictable and dropped after send_timeout.
        super().pause_writing()
        if self._unread is None and not self._refused:
            self._unread = self.loop.call_later(self.guard.limits.send_timeout, self._expired, Phase.UNREAD)
            self.guard.enter(self.transport, Phase.UNREAD)

    def resume_writing(self) -> None:
        if self._unread is not None:
            self._cancel_unread()
            self.guard.enter(self.transport, self._phase)
        super().resume_writing()

    def _cancel_unread(self) -> None:
        if self._unread is not None:
            self._unread.cancel()
            self._unread = None

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        if self._phase is Phase.IDLE:
            # The first byte of the next request on a kept-alive connection starts its deadline.
            self._enter(Phase.HEADERS)
        super().data_received(data)

    def _enter(self, phase: Phase) -> None:
        if phase is self._phase:
            return
        self._phase = phase
        self._cancel_deadline()
        self._buffered = 0
        self.guard.enter(self.transport, phase)
        limits = self.guard.limits
        if phase is Phase.HEADERS or phase is Phase.IDLE:
            # IDLE: uvicorn's keep-alive timeout (5 s) closes an idle connection first; this deadline
            # backs it up where uvicorn leaves none armed (a body still arriving after the response).
            self._deadline = self.loop.call_later(limits.header_timeout, self._expired, phase)
        elif phase is Phase.BODY:
            self._deadline = self.loop.call_later(limits.body_timeout, self._expired, phase)

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self, phase: Phase) -> None:
        if phase is Phase.UNREAD:
            self._unread = None
        else:
            self._deadline = None
        if phase is Phase.IDLE:
            buffered = self.transport.get_write_buffer_size()
            if buffered and (not self._buffered or buffered < self._buffered):
                # The last response is still being read, at the client's pace: look again later
                # (one that stops reading altogether is dropped here next time, or by send_timeout).
                self._buffered = buffered
                self._deadline = self.loop.call_later(self.guard.limits.header_timeout, self._expired, phase)
                return
        if phase is not Phase.IDLE and not self.transport.is_closing():
            self.guard.timed_out_waiting(phase, self.client[0] if self.client else "?")
            if self.cycle is None or not self.cycle.response_started:
                self.transport.write(TIMED_OUT)
        self._drop()

    def _evicted(self) -> None:
        if not self.transport.is_closing() and (self.cycle is None or not self.cycle.response_started):
            self.transport.write(EVICTED)
        self._drop()

    def _drop(self) -> None:
        self._cancel_deadline()
        self._cancel_unread()
        if self.cycle is not None and not self.cycle.response_complete:
            # The application may be reading the body: it hears the client is gone, and anything it
            # still sends is dropped rather than written after this response.
            self.cycle.disconnected = True
            self.cycle.message_event.set()
        if self.transport.get_write_buffer_size():
            # close() would wait for the client to read what is buffered, and a slow client never
            # does: the socket (a file) would stay open, uncounted.
            self.transport.abort()
        else:
            self.transport.close()

    def _upgrading(self) -> None:
        """The WebSocket protocol takes the transport (and the connection's count) over."""
        self._cancel_deadline()
        self._cancel_unread()
        self._phase = Phase.WEBSOCKET

    def _response_done(self) -> None:
        if self._phase is Phase.HANDLING and (self.cycle is None or self.cycle.response_complete):
            self._enter(Phase.IDLE)


class GuardedHttpToolsProtocol(_GuardedHttp, HttpToolsProtocol):
    def on_headers_complete(self) -> None:
        self._enter(Phase.BODY)
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        if self._phase is Phase.BODY:
            # A response sent before the body was read (413) leaves the connection idle, not busy.
            answered = self.cycle is not None and self.cycle.response_complete
            self._enter(Phase.IDLE if answered else Phase.HANDLING)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._response_done()

    def handle_websocket_upgrade(self) -> None:
        self._upgrading()
        super().handle_websocket_upgrade()
        # Done: the WebSocket protocol has the transport, and this one's connection_lost, which
        # lets go of the parser (a cycle: it holds this protocol's callbacks), will not be called.
        self.parser = None  # type: ignore[assignment]


class GuardedH11Protocol(_GuardedHttp, H11Protocol):
    """h11 reports no per-callback progress: the phase follows the client's h11 state after each
    batch of events."""

    def handle_events(self) -> None:
        super().handle_events()
        if self._phase is Phase.WEBSOCKET or self.transport.is_closing():
            return
        theirs = self.conn.their_state
        if theirs is h11.SEND_BODY:
            self._enter(Phase.BODY)
        elif theirs is h11.DONE or theirs is h11.MUST_CLOSE:
            answered = self.cycle is not None and self.cycle.response_complete
            self._enter(Phase.IDLE if answered else Phase.HANDLING)
        elif theirs is h11.IDLE and self._phase in (Phase.BODY, Phase.HANDLING):
            # A new cycle: idle, unless the next request's first bytes are already buffered.
            self._enter(Phase.HEADERS if self.conn.trailing_data[0] else Phase.IDLE)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._response_done()

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        self._upgrading()
        super().handle_websocket_upgrade(event)


class _GuardedWebSocket(asyncio.Protocol):
    """Counts the upgraded connection (already admitted by the HTTP protocol) until it closes."""

    guard: ClassVar[ConnectionGuard]
    _guarded_transport: object = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._guarded_transport = transport
        super().connection_made(transport)
        client = getattr(self, "client", None)
        self.guard.upgraded(transport, client)

    def connection_lost(self, exc: Exception | None) -> None:
        try:
            super().connection_lost(exc)
        finally:
            self.guard.release(self._guarded_transport)


def _close_code(conn: Any) -> int | None:
    sent = getattr(conn, "close_sent", None)
    return int(sent.code) if sent is not None else None


class GuardedWebSocketsSansIOProtocol(_GuardedWebSocket, WebSocketsSansIOProtocol):
    """uvicorn's default WebSocket protocol, with one short, rate-capped line per refused frame.

    uvicorn logs a text message that is not UTF-8 with ``logger.exception`` — a full traceback at
    ERROR for each one, from any client (issue 13) — and malformed frames (bad opcode, unmasked,
    oversize) not at all. Here each closes the socket with its code, is counted, and is logged as
    one line."""

    client: tuple[str, int] | None
    _frame_refused: bool = False

    def _client_host(self) -> str:
        return self.client[0] if self.client else "?"

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        exc = self.conn.parser_exc
        if exc is not None and not self._frame_refused:
            self._frame_refused = True
            if isinstance(exc, UnicodeDecodeError):
                reason, detail = "invalid_utf8", "invalid UTF-8"
            elif isinstance(exc, PayloadTooBig):
                reason, detail = "too_big", f"larger than {self.config.ws_max_size} bytes"
            elif isinstance(exc, ProtocolError):
                reason, detail = "protocol_error", str(exc)[:80]
            else:
                reason, detail = "other", type(exc).__name__
            self.guard.refused_frame(self._client_host(), reason, detail, _close_code(self.conn))

    def send_receive_event_to_app(self) -> None:
        if self.curr_msg_data_type != "text" or self.close_sent:
            super().send_receive_event_to_app()
            return
        # uvicorn's own text branch, except for what happens to a message that is not UTF-8.
        data = self.frames[0] if len(self.frames) == 1 else b"".join(self.frames)
        self.frames = []
        try:
            text = data.decode()
        except UnicodeDecodeError:
            self._frame_refused = True
            self.conn.send_close(1007, "invalid UTF-8")
            self.guard.refused_frame(self._client_host(), "invalid_utf8", "a text message not in UTF-8", 1007)
            self.handle_parser_exception()
            return
        self.queue.put_nowait({"type": "websocket.receive", "text": text})
        if not self.read_paused:
            self.read_paused = True
            self.transport.pause_reading()


# ---- uvicorn's settings ---------------------------------------------------------------------------------

# A WebSocket message a little over the application's limit still reaches it and is answered with a
# clear ``too_large`` error; a larger one is refused by the protocol (close 1009) before it is
# buffered whole. uvicorn's default buffers up to 16 MiB per socket.
WS_MESSAGE_MARGIN = 4096


def _bind(cls: type[Any], guard: ConnectionGuard) -> type[asyncio.Protocol]:
    bound: type[asyncio.Protocol] = type(cls.__name__, (cls,), {"guard": guard, "__module__": __name__})
    return bound


def http_protocol(name: str, guard: ConnectionGuard) -> type[asyncio.Protocol]:
    classes: dict[str, type[Any]] = {
        "auto": GuardedHttpToolsProtocol,
        "httptools": GuardedHttpToolsProtocol,
        "h11": GuardedH11Protocol,
    }
    if name not in classes:
        raise ValueError(f"HTTP implementation {name!r}: connection limits need one of {sorted(classes)}")
    return _bind(classes[name], guard)


def ws_protocol(name: str, guard: ConnectionGuard) -> type[asyncio.Protocol] | None:
    """The guarded WebSocket protocol. Every one must be guarded: an upgraded connection is released
    only by its WebSocket protocol."""
    if name == "none":
        return None
    if name in ("auto", "websockets-sansio"):
        return _bind(GuardedWebSocketsSansIOProtocol, guard)
    if name == "websockets":
        from uvicorn.protocols.websockets.websockets_impl import WebSocketProtocol

        base: type[Any] = WebSocketProtocol
    elif name == "wsproto":
        from uvicorn.protocols.websockets.wsproto_impl import WSProtocol

        base = WSProtocol
    else:
        expected = "auto, websockets-sansio, websockets, wsproto or none"
        raise ValueError(f"WebSocket implementation {name!r}: expected {expected}")
    guarded = type(f"Guarded{base.__name__}", (_GuardedWebSocket, base), {"__module__": __name__})
    return _bind(guarded, guard)


def uvicorn_options(
    app: Starlette,
    *,
    log_level: str = "info",
    http: str = "auto",
    ws: str = "auto",
    ws_per_message_deflate: bool = True,
) -> dict[str, Any]:
    """uvicorn's settings for an app of ``create_app``: its host and port, the guarded protocols and
    the WebSocket limits. ``serve`` and the tests' servers both use it, so tests run with the same
    protections as a deployment."""
    config: ServerConfig = app.state.config
    guard: ConnectionGuard = app.state.connections
    install_uvicorn_line_cap()
    return {
        "host": config.host,
        "port": config.port,
        "log_level": log_level,
        "http": http_protocol(http, guard),
        "ws": ws_protocol(ws, guard),
        "ws_max_size": config.max_message_bytes + WS_MESSAGE_MARGIN,
        "ws_per_message_deflate": ws_per_message_deflate,
        "ws_ping_interval": config.ws_ping_interval,
        "ws_ping_timeout": config.ws_ping_timeout,
        "timeout_graceful_shutdown": config.shutdown_seconds,
        # Behind a proxy the app's guard reads the client's address (server/proxies.py: the rightmost
        # untrusted hop); uvicorn's own reading would believe the leftmost, client-written one.
        "proxy_headers": False,
    }


def describe(limits: ConnectionLimits, before: int, after: int) -> str:
    """The start-up line: the open-file limit (``before``/``after`` raising it) and what it allows."""
    raised = f" (raised from {before})" if after != before else ""
    per = f"{limits.max_per_address} per address" if limits.max_per_address > 0 else "no cap per address"
    return (
        f"open files: {after}{raised}; connections: at most {limits.max_connections}, {per}; "
        f"a request's headers must arrive within {limits.header_timeout:g} s, "
        f"its body within {limits.body_timeout:g} s"
    )
