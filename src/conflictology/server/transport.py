"""The WebSocket endpoint, ``/ws/{code}``: who is admitted (a seat's token, or a spectator within
the caps), then frames read, bounded, rate-limited and decoded, handed to the hub, and answered.

What this module sends on its own (errors, pongs, a replaced tab's notice) is built by the few
functions at the top: the one place the transport's outgoing messages take their shape.
"""

from __future__ import annotations

import contextlib
import time

import msgspec
from starlette.websockets import WebSocket, WebSocketDisconnect

from conflictology.server import messages, protocol
from conflictology.server.backend import BackendUnavailable
from conflictology.server.config import ServerConfig
from conflictology.server.hub import Connection, Hub
from conflictology.server.metrics import Metrics
from conflictology.server.middleware import RAW_SEND
from conflictology.server.refusals import RETRY_AFTER, deny_websocket
from conflictology.server.rooms import Room, RoomError, normalize_code, plausible_code
from conflictology.server.security import RateLimits, client_key

# ---- what the transport sends --------------------------------------------------------------------


# A refusal quotes what was refused (an illegal action, say): at most this much of it, so that a
# small message cannot pull a large answer.
ERROR_CHARS = 300


def error_message(code: str, message: str) -> messages.Error:
    if len(message) > ERROR_CHARS:
        message = message[: ERROR_CHARS - 1] + "…"
    return messages.Error(code, message)


def pong_message() -> messages.Pong:
    return messages.Pong(time.time())


def replaced_message() -> messages.Replaced:
    return messages.Replaced()


# ---- the endpoint --------------------------------------------------------------------------------

# What a client may ask for with ``?v=`` (docs/protocol.md): 1, the whole view in every message (the
# default: a client written before deltas keeps working unchanged); 2, log deltas (``log_from``).
PROTOCOL_VERSIONS = ("1", "2")


class SocketTransport:
    """The WebSocket of every room, sharing one hub."""

    def __init__(self, config: ServerConfig, hub: Hub, metrics: Metrics) -> None:
        self.config = config
        self.hub = hub
        self.metrics = metrics
        # Socket messages per client address, over all of its sockets (besides each socket's own).
        self.messages = RateLimits(
            config.ws_address_rate_per_second if config.address_limits else 0, config.ws_address_burst
        )
        # Reactions per seat (whatever process its sockets are on) and per client address.
        self.reactions_by_seat = hub.backend.budget(
            "react-seat", config.reaction_rate_per_second, config.reaction_burst
        )
        self.reactions_by_address = hub.backend.budget(
            "react",
            config.reaction_address_rate_per_second if config.address_limits else 0,
            config.reaction_address_burst,
        )

    async def websocket(self, websocket: WebSocket) -> None:
        code = normalize_code(str(websocket.path_params["code"]))
        token = websocket.query_params.get("token")
        scope, receive, send = websocket.scope, websocket.receive, websocket.send
        version = websocket.query_params.get("v", "1")
        if version not in PROTOCOL_VERSIONS:
            known = ", ".join(PROTOCOL_VERSIONS)
            await deny_websocket(scope, receive, send, 400, "bad_version", f"v is one of {known}")
            return
        try:
            room = await self.hub.backend.get(code) if plausible_code(code) else None
        except BackendUnavailable as exc:
            await deny_websocket(scope, receive, send, exc.status, exc.code, exc.message, RETRY_AFTER)
            return
        if room is None:
            await deny_websocket(scope, receive, send, 404, "no_room", f"no room {code[:16]}")
            return
        seat_id: str | None = None
        if token:
            idx = room.seat_of_token(token)
            if idx is None:
                await deny_websocket(scope, receive, send, 403, "bad_token", "unknown token for this room")
                return
            seat_id = room.seats[idx].id
        elif not room.settings.spectators:
            await deny_websocket(scope, receive, send, 403, "no_spectators", "this room has no spectators")
            return
        else:
            # A seated player is always admitted; spectators have a cap of their own, so a crowd of
            # them can never lock a player out of their own table.
            conns = self.hub.connections.get(code, ())
            if sum(1 for c in conns if c.seat_id is None) >= self.config.max_spectators_per_room:
                refusal = "this room has as many spectators as it admits"
                await deny_websocket(scope, receive, send, 429, "too_many_spectators", refusal, 10)
                return
            # Spectators are never evicted to make room (players are admitted by the connection
            # guard before anyone is): one address may not hold many of them.
            client = websocket.scope.get("client") or ("?", 0)
            if self.hub.spectating(client_key(str(client[0]))) >= self.config.max_spectators_per_address:
                refusal = "this address watches as many tables as it may"
                await deny_websocket(scope, receive, send, 429, "too_many_spectators", refusal, 10)
                return
        client = websocket.scope.get("client") or ("?", 0)
        conn = Connection(websocket, code, seat_id, self.config, client_key(str(client[0])), version == "2")
        self.hub.admit(conn)  # counted now, before the handshake's answer lets others through
        try:
            # Inside the try: a handshake or an attach that fails half-way (Redis gone) must not
            # leave the connection counted in the room for good.
            await websocket.accept()
            conn.raw_send = scope.get(RAW_SEND)
            if seat_id is not None:
                self._make_room_for(conn)
            await self.hub.attach(conn)
            while not conn.closed:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                data = message.get("text")
                raw = data.encode() if data is not None else (message.get("bytes") or b"")
                await self._on_message(conn, raw)
        except (WebSocketDisconnect, RuntimeError):
            pass
        except (RoomError, BackendUnavailable) as exc:  # the rooms' store went away meanwhile
            conn.send(error_message(exc.code, exc.message))
            conn.close()
        finally:
            with contextlib.suppress(RoomError, BackendUnavailable):
                await self.hub.detach(conn)

    def _make_room_for(self, conn: Connection) -> None:
        """A seat's newest socket is admitted; past ``max_sockets_per_seat`` tabs the oldest is told
        why and closed (its client does not reconnect on ``replaced``)."""
        conns = self.hub.connections.get(conn.code, ())
        mine = [c for c in conns if c is not conn and c.seat_id == conn.seat_id and not c.closed]
        mine.sort(key=lambda c: c.opened)
        for old in mine[: max(0, len(mine) - self.config.max_sockets_per_seat + 1)]:
            old.send(replaced_message())
            old.close()

    async def _react(self, conn: Connection, seat_id: str, emoji: str) -> None:
        if emoji not in protocol.REACTIONS:
            self._refuse(conn, "bad_emoji", f"a reaction is one of {' '.join(protocol.REACTIONS)}")
            return
        try:
            wait = await self.reactions_by_seat.take(seat_id)
            if wait is None:
                wait = await self.reactions_by_address.take(conn.address)
            if wait is not None:
                self._refuse(conn, "rate_limited", f"too many reactions; wait {wait} s")
                return
            await self.hub.react(conn, emoji)
        except (RoomError, BackendUnavailable) as exc:
            self._refuse(conn, exc.code, exc.message)

    def _refuse(self, conn: Connection, code: str, message: str) -> None:
        self.metrics.refused.labels(code).inc()
        conn.send(error_message(code, message))

    async def _on_message(self, conn: Connection, raw: bytes) -> None:
        arrived = time.perf_counter()
        if len(raw) > self.config.max_message_bytes:
            self._refuse(conn, "too_large", f"messages are limited to {self.config.max_message_bytes} bytes")
            return
        if not conn.bucket.take() or not self.messages.take(conn.address):
            if conn.flooding():
                # Far past its limit for a while: not a client that slowed down. Refusing each of
                # its messages one by one would cost more than the messages; the socket goes.
                self._refuse(conn, "flooding", "too many messages; this connection is closed")
                conn.close()
                return
            self._refuse(conn, "rate_limited", "too many messages; slow down")
            return
        try:
            msg = protocol.decode_client(raw)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            self._refuse(conn, "bad_message", f"malformed message: {exc}")
            return
        if isinstance(msg, protocol.Ping):
            conn.send(pong_message())
            return
        if isinstance(msg, protocol.Sync):
            try:
                await self.hub.send_current(conn)
            except BackendUnavailable as exc:
                self._refuse(conn, exc.code, exc.message)
            return
        if conn.seat_id is None:
            what = "react" if isinstance(msg, protocol.React) else "act"
            self._refuse(conn, "spectator", f"spectators cannot {what}")
            return
        seat_id = conn.seat_id
        if isinstance(msg, protocol.React):
            await self._react(conn, seat_id, msg.emoji)
            return

        def act(r: Room) -> None:
            idx = r.seat_index(seat_id)
            if idx is None or r.seats[idx].left:
                raise RoomError(403, "no_seat", "you no longer hold a seat in this room")
            if isinstance(msg, protocol.Hold):
                r.hold(idx, time.time())
            else:
                r.act(idx, msg.action, msg.seq, time.time())

        try:
            await self.hub.change(conn.code, act)
        except (RoomError, BackendUnavailable) as exc:
            # Refused, or the store is unavailable: either way the socket stays, and says why.
            self._refuse(conn, exc.code, exc.message)
            return
        # The change's views were queued for every local socket before hub.change returned.
        self.metrics.action_seconds.observe(time.perf_counter() - arrived)
