"""The Starlette application: the HTTP API, the WebSocket, the static web client.

``create_app(config)`` builds everything; the hub starts with the application (restoring saved
rooms and their clocks) and stops with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import msgspec
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from conflictology import bots, games
from conflictology.server import protocol
from conflictology.server.backend import RoomBackend
from conflictology.server.config import ServerConfig
from conflictology.server.hub import Connection, Hub
from conflictology.server.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from conflictology.server.metrics import Metrics
from conflictology.server.protocol import RoomSettings
from conflictology.server.rooms import Room, RoomError, RoomStatus, default_level, normalize_code
from conflictology.server.security import OriginPolicy, RateLimits
from conflictology.server.store import Store

log = logging.getLogger("conflictology.server")


def error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": message, "code": code}, status_code=status)


def _header(scope: Scope, name: bytes) -> str | None:
    for k, v in scope.get("headers", []):
        if k == name:
            return str(v.decode("latin-1"))
    return None


class GuardMiddleware:
    """Origin allow-list (HTTP and WebSocket), CORS for allowed origins, body size and rate limits."""

    def __init__(self, app: ASGIApp, config: ServerConfig) -> None:
        self.app = app
        self.config = config
        self.origins = OriginPolicy(config.allow_origins)
        self.limits = RateLimits(config.http_rate_per_second, config.http_rate_burst)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        origin = _header(scope, b"origin")
        host = _header(scope, b"host")
        if not self.origins.allowed(origin, host):
            if scope["type"] == "websocket":
                await _deny_websocket(
                    scope, receive, send, 403, "origin_refused", f"origin {origin} is not allowed"
                )
            else:
                await error(403, "origin_refused", f"origin {origin} is not allowed")(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await self.app(scope, receive, send)
            return
        client = scope.get("client") or ("?", 0)
        limited = self.config.http_rate_per_second > 0
        if limited and scope["method"] != "GET" and not self.limits.take(str(client[0])):
            await error(429, "rate_limited", "too many requests; slow down")(scope, receive, send)
            return
        cors: list[tuple[bytes, bytes]] = []
        if origin is not None:
            cors = [
                (b"access-control-allow-origin", origin.encode("latin-1")),
                (b"vary", b"Origin"),
                (b"access-control-allow-headers", b"authorization, content-type"),
                (b"access-control-allow-methods", b"GET, POST, PATCH, OPTIONS"),
                (b"access-control-max-age", b"600"),
            ]
        if scope["method"] == "OPTIONS" and origin is not None:
            await Response(status_code=204, headers={k.decode(): v.decode() for k, v in cors})(
                scope, receive, send
            )
            return
        length = _header(scope, b"content-length")
        if length is not None and length.isdigit() and int(length) > self.config.max_body_bytes:
            await error(413, "too_large", f"bodies are limited to {self.config.max_body_bytes} bytes")(
                scope, receive, send
            )
            return

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start" and cors:
                message = dict(message)
                message["headers"] = list(message.get("headers", [])) + cors
            await send(message)

        await self.app(scope, receive, send_with_cors)


# Set (in the connection's own task) once this app has refused a handshake on purpose.
_handshake_denied: contextvars.ContextVar[bool] = contextvars.ContextVar("handshake_denied", default=False)


class DeniedHandshakeFilter(logging.Filter):
    """uvicorn's default WebSocket implementation (websockets-sansio) sends an ASGI denial response
    (the ``websocket.http.response`` extension, what Starlette's ``send_denial_response`` uses) but
    never marks the handshake done, so it logs an ERROR for every deliberate 403/404. The log call
    runs in the connection's task, where ``_deny_websocket`` set the flag: only that record is
    dropped; a real handshake failure is still logged."""

    MESSAGE = "ASGI callable returned without completing handshake."

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.msg == self.MESSAGE and _handshake_denied.get())


def _install_denied_handshake_filter() -> None:
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, DeniedHandshakeFilter) for f in logger.filters):
        logger.addFilter(DeniedHandshakeFilter())


async def _deny_websocket(
    scope: Scope, receive: Receive, send: Send, status: int, code: str, message: str
) -> None:
    """Refuse a WebSocket at the handshake with an HTTP status (404 no room, 403 bad token/origin)."""
    await receive()  # the websocket.connect message
    if "websocket.http.response" in scope.get("extensions", {}):
        _handshake_denied.set(True)
        body = json.dumps({"error": message, "code": code}).encode()
        await send(
            {
                "type": "websocket.http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1008, "reason": message[:120]})


class Api:
    """The endpoints, sharing one hub."""

    def __init__(self, config: ServerConfig, hub: Hub) -> None:
        self.config = config
        self.hub = hub
        self.metrics = Metrics(
            connections=lambda: sum(len(c) for c in hub.connections.values()),
            rooms=lambda: len(hub.connections),
            backend_stats=hub.backend.stats,
            bot_stats=hub.bot_pool.stats,
            bot_totals=hub.bot_pool.totals,
        )

    async def _body(self, request: Request, kind: type[Any]) -> Any:
        # Read the stream ourselves so a body without Content-Length cannot grow without bound.
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in request.stream():
                size += len(chunk)
                if size > self.config.max_body_bytes:
                    raise RoomError(
                        413, "too_large", f"bodies are limited to {self.config.max_body_bytes} bytes"
                    )
                chunks.append(chunk)
        except ClientDisconnect:
            # The client hung up half-way (a closed tab, a cancelled request): nothing to do, and
            # nothing to log as a server error.
            raise RoomError(400, "client_gone", "the connection closed before the request was read") from None
        data = b"".join(chunks)
        try:
            return protocol.decode_body(data, kind)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise RoomError(400, "bad_request", f"malformed body: {exc}") from None

    @staticmethod
    def _token(request: Request) -> str | None:
        auth = request.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:].strip() or None
        return None

    @staticmethod
    def _code(request: Request) -> str:
        return normalize_code(str(request.path_params["code"]))

    async def healthz(self, request: Request) -> Response:
        return JSONResponse({"ok": True, "time": time.time()})

    async def metrics_text(self, request: Request) -> Response:
        return Response(self.metrics.render(), media_type=METRICS_CONTENT_TYPE)

    async def info(self, request: Request) -> Response:
        """What a client needs to build its forms: games, bot levels, default settings."""
        out = []
        offered: dict[str, None] = {}
        for name in games.names():
            try:
                game = games.get(name)
            except Exception:  # a game not installed yet is simply not offered
                continue
            levels = bots.offered(game)
            offered.update(dict.fromkeys(levels))
            out.append(
                {
                    "name": name,
                    "title": game.title,
                    "min_players": game.min_players,
                    "max_players": game.max_players,
                    "options": game.default_options(),
                    # The closed list POST /api/rooms/{code}/bots accepts for this game.
                    "bots": levels,
                    "default_level": default_level(game),
                }
            )
        return JSONResponse(
            {
                "games": out,
                "bots": list(offered),  # every game's, together
                "default_level": bots.DEFAULT_LEVEL,
                "settings": msgspec.to_builtins(RoomSettings()),
                "bot_delay": self.config.bot_delay,
                "grace_seconds": self.config.grace_seconds,
            }
        )

    async def create_room(self, request: Request) -> Response:
        body = await self._body(request, protocol.CreateRoom)
        room, token = await self.hub.create_room(body)
        return JSONResponse(
            {"code": room.code, "seat": 0, "token": token, "join_url": f"/?room={room.code}"},
            status_code=201,
        )

    async def list_rooms(self, request: Request) -> Response:
        rooms = []
        for room in await self.hub.backend.summaries():
            if room.settings.public and room.status is not RoomStatus.OVER:
                rooms.append(room.info(self.hub.connected_seats(room)))
        return JSONResponse({"rooms": rooms})

    async def get_room(self, request: Request) -> Response:
        room = await self.hub.room(self._code(request))
        return JSONResponse(room.info(self.hub.connected_seats(room)))

    async def join(self, request: Request) -> Response:
        body = await self._body(request, protocol.JoinRoom)
        _, (seat, token) = await self.hub.change(self._code(request), lambda r: r.join(body.name))
        return JSONResponse({"seat": seat, "token": token}, status_code=201)

    async def add_bots(self, request: Request) -> Response:
        body = await self._body(request, protocol.AddBots)
        token = self._token(request)

        def add(r: Room) -> list[int]:
            r.require_host(token)
            return r.add_bots(body.count, body.level)

        _, seats = await self.hub.change(self._code(request), add)
        return JSONResponse({"seats": seats}, status_code=201)

    async def start(self, request: Request) -> Response:
        await self._body(request, protocol.Empty)
        token = self._token(request)

        def start(r: Room) -> None:
            r.require_host(token)
            r.start(time.time())

        room, _ = await self.hub.change(self._code(request), start)
        return JSONResponse({"status": room.status.value, "game_id": room.game_id, "seq": room.seq})

    async def kick(self, request: Request) -> Response:
        body = await self._body(request, protocol.Kick)
        token = self._token(request)

        def kick(r: Room) -> None:
            r.require_host(token)
            r.kick(body.seat)

        room, _ = await self.hub.change(self._code(request), kick)
        return JSONResponse(room.info(self.hub.connected_seats(room)))

    async def patch(self, request: Request) -> Response:
        body = await self._body(request, protocol.PatchRoom)
        token = self._token(request)

        def patch(r: Room) -> None:
            r.require_host(token)
            settings = body.settings.apply_to(r.settings) if body.settings is not None else None
            r.patch(body.options, settings)

        room, _ = await self.hub.change(self._code(request), patch)
        return JSONResponse(room.info(self.hub.connected_seats(room)))

    async def rematch(self, request: Request) -> Response:
        await self._body(request, protocol.Empty)
        token = self._token(request)

        def rematch(r: Room) -> None:
            r.require_host(token)
            r.rematch()

        room, _ = await self.hub.change(self._code(request), rematch)
        return JSONResponse(room.info(self.hub.connected_seats(room)))

    async def leave(self, request: Request) -> Response:
        await self._body(request, protocol.Empty)
        token = self._token(request)

        def leave(r: Room) -> None:
            r.leave(r.require_seat(token))

        _room, _ = await self.hub.change(self._code(request), leave)
        return JSONResponse({"left": True})

    async def get_game(self, request: Request) -> Response:
        """A replay: public events while the game goes on; everything once it is over."""
        game_id = str(request.path_params["game_id"])
        await self.hub.persist()
        record = await asyncio.to_thread(self.hub.store.get_game, game_id)
        if record is not None:
            game = games.get(record["game"])
            final = game.from_json(record["final"])
            return JSONResponse(
                {
                    **{
                        k: record[k]
                        for k in (
                            "id",
                            "room",
                            "game",
                            "options",
                            "players",
                            "started",
                            "finished",
                            "winners",
                            "log",
                            "actions",
                        )
                    },
                    "status": "over",
                    "initial": record["initial"],
                    "final": record["final"],
                    "final_views": [final.view(i) for i in range(len(record["players"]))],
                }
            )
        for room in await self.hub.backend.summaries():
            if room.game_id == game_id and room.state is not None:
                if not room.settings.spectators and room.status is RoomStatus.PLAYING:
                    # The live public view is what a spectator sees: refused like the spectator socket.
                    raise RoomError(403, "no_spectators", "this room has no spectators")
                view = room.state.view(None)
                return JSONResponse(
                    {
                        "id": game_id,
                        "room": room.code,
                        "game": room.game_name,
                        "status": room.status.value,
                        "players": [
                            {"seat": i, "name": s.name, "bot": s.bot} for i, s in enumerate(room.seats)
                        ],
                        "log": view.get("log", []),
                        "view": view,
                    }
                )
        raise RoomError(404, "no_game", f"no game {game_id}")

    async def list_games(self, request: Request) -> Response:
        await self.hub.persist()
        return JSONResponse({"games": await asyncio.to_thread(self.hub.store.recent_games)})

    # ---- the WebSocket ---------------------------------------------------------------------------

    async def websocket(self, websocket: WebSocket) -> None:
        code = normalize_code(str(websocket.path_params["code"]))
        token = websocket.query_params.get("token")
        room = await self.hub.backend.get(code)
        scope, receive, send = websocket.scope, websocket.receive, websocket.send
        if room is None:
            await _deny_websocket(scope, receive, send, 404, "no_room", f"no room {code}")
            return
        seat_id: str | None = None
        if token:
            idx = room.seat_of_token(token)
            if idx is None:
                await _deny_websocket(scope, receive, send, 403, "bad_token", "unknown token for this room")
                return
            seat_id = room.seats[idx].id
        elif not room.settings.spectators:
            await _deny_websocket(scope, receive, send, 403, "no_spectators", "this room has no spectators")
            return
        if len(self.hub.connections.get(code, ())) >= self.config.max_connections_per_room:
            await _deny_websocket(scope, receive, send, 429, "too_many", "this room has too many connections")
            return
        await websocket.accept()
        conn = Connection(websocket, code, seat_id, self.config)
        try:
            # Inside the try: an attach that fails half-way (Redis gone) must not leave the
            # connection counted in the room for good.
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
        finally:
            await self.hub.detach(conn)

    def _refuse(self, conn: Connection, code: str, message: str) -> None:
        self.metrics.refused.labels(code).inc()
        conn.send({"type": "error", "code": code, "message": message})

    async def _on_message(self, conn: Connection, raw: bytes) -> None:
        arrived = time.perf_counter()
        if len(raw) > self.config.max_message_bytes:
            self._refuse(conn, "too_large", f"messages are limited to {self.config.max_message_bytes} bytes")
            return
        if not conn.bucket.take():
            self._refuse(conn, "rate_limited", "too many messages; slow down")
            return
        try:
            msg = protocol.decode_client(raw)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            self._refuse(conn, "bad_message", f"malformed message: {exc}")
            return
        if isinstance(msg, protocol.Ping):
            conn.send({"type": "pong", "time": time.time()})
            return
        if isinstance(msg, protocol.Sync):
            await self.hub.send_current(conn)
            return
        if conn.seat_id is None:
            self._refuse(conn, "spectator", "spectators cannot act")
            return
        seat_id = conn.seat_id

        def act(r: Room) -> None:
            idx = r.seat_index(seat_id)
            if idx is None or r.seats[idx].left:
                raise RoomError(403, "no_seat", "you no longer hold a seat in this room")
            r.act(idx, msg.action, msg.seq, time.time())

        try:
            await self.hub.change(conn.code, act)
        except RoomError as exc:
            self._refuse(conn, exc.code, exc.message)
            return
        # The change's views were queued for every local socket before hub.change returned.
        self.metrics.action_seconds.observe(time.perf_counter() - arrived)


async def _room_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RoomError)
    return error(exc.status, exc.code, exc.message)


def create_app(config: ServerConfig | None = None, store: Store | None = None) -> Starlette:
    config = config or ServerConfig()
    _install_denied_handshake_filter()
    store = store or Store(config.resolved_db_url())
    backend: RoomBackend | None = None
    if config.redis_url:
        from conflictology.server.redis_backend import RedisBackend

        backend = RedisBackend(
            config.redis_url,
            prefix=config.redis_prefix,
            lease_seconds=config.redis_lease_seconds,
            heartbeat_seconds=min(1.0, config.redis_lease_seconds / 4),
        )
    hub = Hub(config, store, backend)
    api = Api(config, hub)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await hub.start()
        lag = asyncio.create_task(api.metrics.watch_event_loop())
        try:
            yield
        finally:
            lag.cancel()
            await hub.stop()
            store.close()

    routes: list[Any] = [
        Route("/healthz", api.healthz),
        Route("/metrics", api.metrics_text),
        Route("/api/info", api.info),
        Route("/api/rooms", api.create_room, methods=["POST"]),
        Route("/api/rooms", api.list_rooms, methods=["GET"]),
        Route("/api/rooms/{code}", api.get_room, methods=["GET"]),
        Route("/api/rooms/{code}", api.patch, methods=["PATCH"]),
        Route("/api/rooms/{code}/join", api.join, methods=["POST"]),
        Route("/api/rooms/{code}/bots", api.add_bots, methods=["POST"]),
        Route("/api/rooms/{code}/start", api.start, methods=["POST"]),
        Route("/api/rooms/{code}/kick", api.kick, methods=["POST"]),
        Route("/api/rooms/{code}/rematch", api.rematch, methods=["POST"]),
        Route("/api/rooms/{code}/leave", api.leave, methods=["POST"]),
        Route("/api/games", api.list_games, methods=["GET"]),
        Route("/api/games/{game_id}", api.get_game, methods=["GET"]),
        WebSocketRoute("/ws/{code}", api.websocket),
    ]
    index = config.web_dir / "index.html"

    async def join_link(request: Request) -> Response:
        # /r/CODE is the same page as /?room=CODE: the client reads the code from the path.
        if index.is_file():
            return FileResponse(index)
        return HTMLResponse(_PLACEHOLDER, status_code=200)

    routes.append(Route("/r/{code}", join_link))
    if config.web_dir.is_dir():
        routes.append(Mount("/", app=StaticFiles(directory=config.web_dir, html=True), name="web"))
    else:
        routes.append(Route("/", join_link))

    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={RoomError: _room_error},
    )
    app.state.hub = hub
    app.state.config = config
    app.add_middleware(GuardMiddleware, config=config)
    return app


_PLACEHOLDER = """<!doctype html><meta charset="utf-8"><title>Conflictology</title>
<h1>Conflictology</h1><p>The web client is not installed; the API is at <code>/api</code>
(see docs/protocol.md).</p>"""
