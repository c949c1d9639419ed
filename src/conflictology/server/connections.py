"""Connections below the application: timeouts, caps and eviction, in uvicorn's own protocol classes.

uvicorn 0.54 lets a connection take as long as it likes to send a request: one that dribbles a
header line every few seconds holds a socket (an open file) for good, and with a 1,024-file limit
about a thousand of them leave no file for anyone else (issue 13: every request failed, nothing was
logged). The application never sees such a connection (its request never completes), so the limits
live here, in subclasses of uvicorn's HTTP protocols (httptools, h11) and WebSocket protocols, which
``uvicorn_options`` hands to uvicorn:

- **timeouts**: a request's line and headers must all arrive within ``header_timeout`` seconds of
  the connection opening (or, on a kept-alive connection, of the request's first byte) — one
  deadline, not reset by each line — and its body within ``body_timeout`` of its headers; a
  response the client stops reading (the transport's buffer stays full) for ``send_timeout`` is
  dropped too;
- **caps**: at most ``max_connections_per_address`` connections per client address (an IPv6 client
  is counted by its /64, which one host usually gets whole) and ``max_connections`` in all, a number
  below the process's open-file limit so the database, Redis and worker pipes always have files;
- **eviction**: at the total cap, a new connection closes the one that has waited longest for its
  client's request (a slow sender's, not a player's: an open WebSocket is never evicted) before it
  is ever refused;
- a connection is counted once, from accept to close, across its HTTP → WebSocket upgrade.

Each refusal, eviction, timeout and refused WebSocket frame is counted in ``/metrics`` and logged in
one short line, at most one line per kind every ten seconds (the next line says how many were left
out), so an attack cannot flood the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import ipaddress
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import PayloadTooBig, ProtocolError

from conflictology.server.security import address_key

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from conflictology.server.config import ServerConfig

log = logging.getLogger("conflictology.server.connections")

# ---- the open-file limit ----------------------------------------------------------------------------

# Raised to the hard limit, but no further than this: past it memory, not files, bounds a process
# (each open WebSocket costs tens of KB), and a larger table only hides a leak for longer.
OPEN_FILES_CEILING = 65_536


def open_file_limit() -> int:
    """The process's soft RLIMIT_NOFILE (``OPEN_FILES_CEILING`` if unlimited or unknown)."""
    try:
        import resource
    except ImportError:  # not on POSIX: no limit to read
        return OPEN_FILES_CEILING
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return OPEN_FILES_CEILING if soft == resource.RLIM_INFINITY else int(soft)


def raise_open_file_limit(ceiling: int = OPEN_FILES_CEILING) -> tuple[int, int]:
    """Raise the soft open-file limit to the hard one (at most ``ceiling``; never lowered).

    Many systems start a process with a soft limit of 1,024 and a much higher hard limit; the soft
    one is the process's own to raise. Returns the limit (before, after)."""
    try:
        import resource
    except ImportError:
        return OPEN_FILES_CEILING, OPEN_FILES_CEILING
    before = open_file_limit()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = ceiling if hard == resource.RLIM_INFINITY else min(int(hard), ceiling)
    if soft != resource.RLIM_INFINITY and soft < target:
        # A sandbox may refuse: the old limit stands.
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return before, open_file_limit()


def reserved_files(open_files: int) -> int:
    """Files kept out of the connection cap: standard streams, the event loop's, the listening
    sockets, SQLite's three files per pooled connection (or the database's sockets), Redis's pool
    and subscription, bot worker pipes, static files being sent and log files. 128 covers them
    with room to spare on a small server; a large limit keeps a sixteenth."""
    return max(128, open_files // 16)


def default_max_connections(open_files: int | None = None) -> int:
    files = open_file_limit() if open_files is None else open_files
    return max(16, files - reserved_files(files))


# ---- what the guard counts ----------------------------------------------------------------------------

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout: float
    body_timeout: float
    send_timeout: float
    max_connections: int
    max_per_address: int  # 0: no per-address cap
    # Client networks not held to the per-address cap. A hook for a trusted reverse proxy (every
    # client arrives from its address); reading the client's real address from the proxy's headers
    # is issue 14's, not done here.
    exempt: tuple[Network, ...] = ()

    @classmethod
    def from_config(cls, config: ServerConfig) -> ConnectionLimits:
        exempt = list(config.connection_cap_exempt)
        per_address = config.max_connections_per_address if config.address_limits else 0
        if config.proxy_headers:
            # Every client arrives through a trusted proxy: the proxy's own connections are not one
            # client's (the proxy limits each client's connections; deploy/nginx.conf does).
            if "*" in config.forwarded_allow_ips:
                per_address = 0
            else:
                exempt += config.forwarded_allow_ips
        return cls(
            header_timeout=config.header_timeout,
            body_timeout=config.body_timeout,
            send_timeout=config.send_timeout,
            max_connections=config.max_connections or default_max_connections(),
            # (--no-address-limits, a load test from one machine, lifts this per-address cap too.)
            max_per_address=per_address,
            exempt=tuple(ipaddress.ip_network(n, strict=False) for n in exempt),
        )


class RateCap:
    """At most one event per reason every ``interval`` seconds; counts the ones refused meanwhile."""

    def __init__(self, interval: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self.clock = clock
        self._last: dict[str, float] = {}
        self._left_out: dict[str, int] = {}

    def allow(self, reason: str) -> int | None:
        """None if this one is left out; else how many were left out since the last one allowed."""
        now = self.clock()
        last = self._last.get(reason)
        if last is not None and now - last < self.interval:
            self._left_out[reason] = self._left_out.get(reason, 0) + 1
            return None
        self._last[reason] = now
        return self._left_out.pop(reason, 0)


LEFT_OUT = " (%d more like it since the last such line)"


class RateCappedLog:
    """One warning line per reason at most every ``interval`` seconds; the next line that is
    written says how many were left out meanwhile (``/metrics`` keeps the exact counts)."""

    def __init__(
        self, logger: logging.Logger, interval: float = 10.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.logger = logger
        self.cap = RateCap(interval, clock)

    def __call__(self, reason: str, message: str, *args: object) -> bool:
        left_out = self.cap.allow(reason)
        if left_out is None:
            return False
        if left_out:
            message += LEFT_OUT
            args = (*args, left_out)
        self.logger.warning(message, *args)
        return True


class RateCappedUvicornLines(logging.Filter):
    """uvicorn's own lines that any client can cause once per connection ("Invalid HTTP request
    received.", "Unsupported upgrade request."), capped like ours: a client sending garbage on
    thousands of connections must not write thousands of lines."""

    MESSAGES = frozenset({"Invalid HTTP request received.", "Unsupported upgrade request."})

    def __init__(self, interval: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.cap = RateCap(interval, clock)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg not in self.MESSAGES or record.args:
            return True
        left_out = self.cap.allow(str(record.msg))
        if left_out is None:
            return False
        if left_out:
            record.msg = f"{record.msg}{LEFT_OUT % left_out}"
        return True


def _install_uvicorn_line_cap() -> None:
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, RateCappedUvicornLines) for f in logger.filters):
        logger.addFilter(RateCappedUvicornLines())


class Phase(enum.Enum):
    """Where a connection is. The first three wait on the client (and may be evicted); the last two
    wait on the server or belong to an open WebSocket."""

    HEADERS = "headers"  # a request's line and headers are arriving
    BODY = "body"  # its body is arriving
    IDLE = "idle"  # kept alive between requests
    HANDLING = "handling"  # the application has the request
    UNREAD = "unread"  # a response waits for the client to read it (writing is paused)
    WEBSOCKET = "websocket"  # upgraded


WAITING_ON_CLIENT = frozenset({Phase.HEADERS, Phase.BODY, Phase.IDLE, Phase.UNREAD})


@dataclass
class _Open:
    key: str | None
    evict: Callable[[], None]
    client: str
    waiting_since: float = 0.0


@dataclass
class ConnectionStats:
    open: int
    waiting: int
    max_connections: int
    refused: dict[str, int]
    evicted: int
    timed_out: dict[str, int]
    frames_refused: dict[str, int]


class ConnectionGuard:
    """The connections of one server (one event loop): who is open, from where, and in which phase.
    The protocol classes bound to it (``uvicorn_options``) report to it; ``/metrics`` reads ``stats``."""

    def __init__(
        self,
        limits: ConnectionLimits,
        log_line: RateCappedLog | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limits = limits
        self.log = log_line or RateCappedLog(log)
        self.clock = clock
        # By transport: the same object before and after a WebSocket upgrade.
        self._open: dict[object, _Open] = {}
        self._per_key: dict[str, int] = {}
        # Connections waiting on their client, the longest waiting first.
        self._waiting: OrderedDict[object, None] = OrderedDict()
        self.refused = {"address_cap": 0, "server_cap": 0}
        self.evicted = 0
        self.timed_out = {"headers": 0, "body": 0, "response": 0}
        self.frames_refused = {"invalid_utf8": 0, "protocol_error": 0, "too_big": 0, "other": 0}

    @property
    def open_count(self) -> int:
        return len(self._open)

    def open_from(self, host: str) -> int:
        key = address_key(host)
        return self._per_key.get(key, 0) if key is not None else 0

    def _capped(self, host: str | None) -> str | None:
        key = address_key(host)
        if key is None or self.limits.max_per_address <= 0:
            return None
        if self.limits.exempt:
            ip = ipaddress.ip_address(host.split("%", 1)[0]) if host else None
            if ip is not None and any(ip in net for net in self.limits.exempt):
                return None
        return key

    def admit(
        self, transport: object, client: tuple[str, int] | None, evict: Callable[[], None]
    ) -> str | None:
        """Count a new connection in, or say why not ("address_cap" or "server_cap"). At the total
        cap the connection that has waited longest on its client is evicted to make room."""
        host = client[0] if client else None
        key = self._capped(host)
        if key is not None and self._per_key.get(key, 0) >= self.limits.max_per_address:
            self.refused["address_cap"] += 1
            self.log(
                "address_cap",
                "connection from %s refused: %d open from its address (--max-connections-per-address)",
                host,
                self._per_key[key],
            )
            return "address_cap"
        if len(self._open) >= self.limits.max_connections and not self._evict_one():
            self.refused["server_cap"] += 1
            self.log(
                "server_cap",
                "connection from %s refused: %d open, none of them evictable (--max-connections)",
                host,
                len(self._open),
            )
            return "server_cap"
        self._open[transport] = _Open(key, evict, host or "?")
        if key is not None:
            self._per_key[key] = self._per_key.get(key, 0) + 1
        return None

    def _evict_one(self) -> bool:
        if not self._waiting:
            return False
        transport = next(iter(self._waiting))
        entry = self._open[transport]
        self.release(transport)
        self.evicted += 1
        self.log(
            "evicted",
            "connection from %s evicted after waiting %.1f s for its request: %d open (--max-connections)",
            entry.client,
            self.clock() - entry.waiting_since,
            self.limits.max_connections,
        )
        entry.evict()
        return True

    def enter(self, transport: object, phase: Phase) -> None:
        entry = self._open.get(transport)
        if entry is None:
            return
        if phase in WAITING_ON_CLIENT:
            if transport not in self._waiting:
                entry.waiting_since = self.clock()
                self._waiting[transport] = None
        else:
            self._waiting.pop(transport, None)

    def upgraded(self, transport: object, client: tuple[str, int] | None) -> None:
        """A WebSocket protocol took the transport over: the same connection, now never evicted.
        (One not admitted by an HTTP protocol of this guard is counted, never refused: it is open.)"""
        if transport not in self._open:
            key = self._capped(client[0] if client else None)
            self._open[transport] = _Open(key, lambda: None, client[0] if client else "?")
            if key is not None:
                self._per_key[key] = self._per_key.get(key, 0) + 1
        self.enter(transport, Phase.WEBSOCKET)

    def release(self, transport: object) -> None:
        entry = self._open.pop(transport, None)
        if entry is None:
            return
        self._waiting.pop(transport, None)
        if entry.key is not None:
            left = self._per_key[entry.key] - 1
            if left:
                self._per_key[entry.key] = left
            else:
                del self._per_key[entry.key]

    def timed_out_waiting(self, phase: Phase, client: str) -> None:
        limits = self.limits
        if phase is Phase.UNREAD:
            self.timed_out["response"] += 1
            self.log(
                "send_timeout",
                "connection from %s dropped: its response unread for %g s (--send-timeout)",
                client,
                limits.send_timeout,
            )
            return
        part, flag, seconds = (
            ("headers", "header", limits.header_timeout)
            if phase is Phase.HEADERS
            else ("body", "body", limits.body_timeout)
        )
        self.timed_out[part] += 1
        self.log(
            f"{part}_timeout",
            "connection from %s dropped: request %s incomplete after %g s (--%s-timeout)",
            client,
            part,
            seconds,
            flag,
        )

    def refused_frame(self, client: str, reason: str, detail: str, close_code: int | None) -> None:
        self.frames_refused[reason if reason in self.frames_refused else "other"] += 1
        self.log(
            f"frame_{reason}",
            "WebSocket frame from %s refused: %s (closed with %s)",
            client,
            detail,
            close_code if close_code is not None else "no code",
        )

    def stats(self) -> ConnectionStats:
        return ConnectionStats(
            open=len(self._open),
            waiting=len(self._waiting),
            max_connections=self.limits.max_connections,
            refused=dict(self.refused),
            evicted=self.evicted,
            timed_out=dict(self.timed_out),
            frames_refused=dict(self.frames_refused),
        )


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
    _install_uvicorn_line_cap()
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
        # Behind a proxy, uvicorn takes the client's address from X-Forwarded-For, believed only from
        # the trusted proxies (before any of this app's limits count it).
        "proxy_headers": config.proxy_headers,
        "forwarded_allow_ips": ",".join(config.forwarded_allow_ips),
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
