"""The Starlette application: the HTTP API, the WebSocket, the static web client.

``create_app(config)`` builds everything; the hub starts with the application (restoring saved
rooms and their clocks) and stops with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import json
import logging
import re
import time
from collections import OrderedDict
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

from conflictology import bots, games, replay
from conflictology.server import protocol, standings
from conflictology.server.backend import BackendUnavailable, MemoryBackend, RoomBackend
from conflictology.server.config import ServerConfig
from conflictology.server.connections import ConnectionGuard, ConnectionLimits
from conflictology.server.hub import Connection, Hub
from conflictology.server.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from conflictology.server.metrics import Metrics
from conflictology.server.protocol import RoomSettings
from conflictology.server.rooms import (
    MYSTERY,
    Room,
    RoomError,
    RoomStatus,
    default_level,
    mystery_pool,
    normalize_code,
    plausible_code,
)
from conflictology.server.security import (
    HostPolicy,
    OriginPolicy,
    RateLimits,
    client_key,
    hash_token,
    own_host_names,
    same_hash,
)
from conflictology.server.store import Store

log = logging.getLogger("conflictology.server")


def error(status: int, code: str, message: str, retry_after: int | None = None) -> JSONResponse:
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    return JSONResponse({"error": message, "code": code}, status_code=status, headers=headers)


def _header(scope: Scope, name: bytes) -> str | None:
    for k, v in scope.get("headers", []):
        if k == name:
            return str(v.decode("latin-1"))
    return None


# Every response of the app carries these. The web client loads its scripts, styles and images
# from files of its own origin (no inline script: the Chrome extension forbids them too) and talks
# only to its own origin (its WebSocket named too: older browsers do not count ws: as 'self'); nobody
# may frame it (clickjacking); a room code in the address never leaves in a Referer.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'{sockets}; font-src 'self'; media-src 'self' data:; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS: list[tuple[bytes, bytes]] = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=(), payment=()"),
]
HSTS = (b"strict-transport-security", b"max-age=31536000")
_PLAIN_HOST = re.compile(r"^[A-Za-z0-9.\-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$")


@functools.lru_cache(maxsize=256)
def _csp(host: str | None) -> bytes:
    sockets = f" wss://{host} ws://{host}" if host and _PLAIN_HOST.match(host) else ""
    return CSP.format(sockets=sockets).encode()


# Listings: cached, but each answer is a page of JSON; nobody needs them often.
_LISTINGS = ("/api/rooms", "/api/games")

# A finished game replayed move by move (each is built once, then cached): bounded like a listing.
_REPLAYS = ("/replay", "/record.txt")


def _heavy(path: str) -> bool:
    return path in _LISTINGS or (path.startswith("/api/games/") and path.endswith(_REPLAYS))


# Paths that name a room: a request for a room that does not exist is a guess at its code.
_ROOM_PATHS = ("/api/rooms/", "/ws/")


def _names_room(path: str) -> bool:
    return path.startswith(_ROOM_PATHS) and len(path) > len("/ws/")


class GuardMiddleware:
    """Before any route: the Host and Origin allow-lists, CORS for allowed origins, body size, and
    the per-address limits — requests (reads and writes apart), rooms created, and wrong guesses at
    room codes; after: the security headers on every response, and a miss counted against its
    address."""

    def __init__(
        self,
        app: ASGIApp,
        config: ServerConfig,
        metrics: Metrics | None = None,
        backend: RoomBackend | None = None,
    ) -> None:
        self.app = app
        self.config = config
        self.metrics = metrics
        self.hosts = HostPolicy(config.allowed_hosts, own_host_names())
        self.origins = OriginPolicy(config.allow_origins)
        on = config.address_limits
        self.writes = RateLimits(config.http_rate_per_second if on else 0, config.http_rate_burst)
        self.reads = RateLimits(config.http_read_rate_per_second if on else 0, config.http_read_burst)
        # The room list and the recent games: a lobby polls them every few seconds at most.
        self.listings = RateLimits(config.listing_rate_per_second if on else 0, config.listing_burst)
        guess_rate = 1 / config.room_guess_seconds if on and config.room_guess_seconds > 0 else 0
        # Per address, and per IPv6 /48 (a household's many /64s), shared by every process of a
        # --redis deployment (else a client gets one budget per process): what the guessing odds
        # rest on.
        budgets = backend or MemoryBackend()
        self.guesses = budgets.budget("guess", guess_rate, config.room_guess_burst)
        creation_rate = config.rooms_per_hour / 3600 if on else 0
        self.creations = budgets.budget("create", creation_rate, config.rooms_burst)

    async def _refuse(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        status: int,
        code: str,
        message: str,
        retry: int | None = None,
    ) -> None:
        if self.metrics is not None:
            self.metrics.refused_requests.labels(code).inc()
        if scope["type"] == "websocket":
            await _deny_websocket(scope, receive, send, status, code, message, retry)
        else:
            await error(status, code, message, retry)(scope, receive, self._secured(scope, send))

    def _secured(self, scope: Scope, send: Send, extra: list[tuple[bytes, bytes]] | None = None) -> Send:
        csp = (b"content-security-policy", _csp(_header(scope, b"host")))
        headers = [csp, *SECURITY_HEADERS, *(extra or [])]
        if scope.get("scheme") == "https":
            headers.append(HSTS)

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = dict(message)
                message["headers"] = list(message.get("headers", [])) + headers
            await send(message)

        return send_secured

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = _header(scope, b"host")
        if not self.hosts.allowed(host):
            message = f"this server does not answer for {host}"
            await self._refuse(scope, receive, send, 400, "bad_host", message)
            return
        origin = _header(scope, b"origin")
        if not self.origins.allowed(origin, host):
            message = f"origin {origin} is not allowed"
            await self._refuse(scope, receive, send, 403, "origin_refused", message)
            return
        client = scope.get("client") or ("?", 0)
        address = client_key(str(client[0]))
        path: str = scope.get("path", "")
        method = "GET" if kind == "websocket" else scope["method"]
        limits = self.reads if method in ("GET", "HEAD", "OPTIONS") else self.writes
        if method == "GET" and _heavy(path):
            limits = self.listings if self.reads.take(address) else self.reads
        if not limits.take(address):
            retry = limits.retry_after(address)
            message = "too many requests; slow down"
            await self._refuse(scope, receive, send, 429, "rate_limited", message, retry)
            return
        wait = await self.creations.take(address) if method == "POST" and path == "/api/rooms" else None
        if wait is not None:
            message = "this address has made many rooms lately; wait before making another"
            await self._refuse(scope, receive, send, 429, "room_quota", message, wait)
            return
        # A request that names a room is a guess at its code: one is taken before it is answered
        # (so that many at once cannot outrun the budget) and given back unless the room did not
        # exist. Out of guesses, every room is out of reach for a while, so a blocked address learns
        # nothing more (and costs a dictionary lookup).
        guess = _names_room(path)
        wait = await self.guesses.take(address) if guess else None
        if wait is not None:
            message = "too many requests for rooms that do not exist; wait before trying another code"
            await self._refuse(scope, receive, send, 429, "too_many_misses", message, wait)
            return
        pending = [guess]

        async def answered(status: int) -> None:
            if pending[0]:
                pending[0] = False
                if status != 404:
                    await self.guesses.refund(address)

        if kind == "websocket":

            async def send_ws(message: Message) -> None:
                if message["type"] == "websocket.http.response.start":
                    await answered(message["status"])
                elif message["type"] == "websocket.accept":
                    await answered(101)
                await send(message)

            await self.app(scope, receive, send_ws)
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
        secured = self._secured(scope, send, cors)

        async def send_counted(message: Message) -> None:
            if message["type"] == "http.response.start":
                await answered(message["status"])
            await secured(message)

        if method == "OPTIONS" and origin is not None:
            await Response(status_code=204)(scope, receive, send_counted)
            return
        length = _header(scope, b"content-length")
        if length is not None and length.isdigit() and int(length) > self.config.max_body_bytes:
            message = f"bodies are limited to {self.config.max_body_bytes} bytes"
            await error(413, "too_large", message)(scope, receive, send_counted)
            return
        await self.app(scope, receive, send_counted)


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
    scope: Scope,
    receive: Receive,
    send: Send,
    status: int,
    code: str,
    message: str,
    retry_after: int | None = None,
) -> None:
    """Refuse a WebSocket at the handshake with an HTTP status (404 no room, 403 bad token/origin,
    429 a limit, 503 the rooms' backend unavailable)."""
    await receive()  # the websocket.connect message
    if "websocket.http.response" in scope.get("extensions", {}):
        _handshake_denied.set(True)
        body = json.dumps({"error": message, "code": code}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        if retry_after is not None:
            headers.append((b"retry-after", str(retry_after).encode()))
        await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1008, "reason": message[:120]})


# The room listing: built at most this often, from at most this many rooms (newest first).
LISTING_SECONDS = 1.0
LISTING_MAX = 500
RECENT_SECONDS = 5
REPLAYS_CACHED = 64
REPLAYS_BUILT = 16


class Api:
    """The endpoints, sharing one hub."""

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
        # The room listing, built at most once a second however many ask (page by page from it).
        self._listing: tuple[float, list[dict[str, Any]]] | None = None
        self._listing_task: asyncio.Task[list[dict[str, Any]]] | None = None
        # The recent public games, likewise (reading them decodes archived records).
        self._recent: tuple[tuple[int, int], list[dict[str, Any]]] | None = None
        # Finished games' replays as sent (building one reads the archive and computes every view).
        self._replays: OrderedDict[str, bytes] = OrderedDict()
        # Their archived records (who may read them) and their step-by-step replays, likewise.
        self._records: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._built: OrderedDict[str, dict[str, Any]] = OrderedDict()

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
        code = normalize_code(str(request.path_params["code"]))
        if not plausible_code(code):
            # Not a code the server ever makes: a miss without asking the rooms' store.
            raise RoomError(404, "no_room", f"no room {code[:16]}")
        return code

    def _health(self) -> dict[str, Any]:
        checks = self.hub.health()
        ok = all(v == "ok" for v in checks.values())
        return {"ok": ok, "status": "ok" if ok else "degraded", "checks": checks, "time": time.time()}

    async def healthz(self, request: Request) -> Response:
        """Liveness: 200 while the process serves, with what is degraded (a container restart would
        not bring Redis back)."""
        return JSONResponse(self._health())

    async def readyz(self, request: Request) -> Response:
        """Readiness: 503 while rooms cannot be served (a load balancer sends players elsewhere)."""
        health = self._health()
        return JSONResponse(health, status_code=200 if health["ok"] else 503)

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
            # A mystery bot too: one of the pool, drawn at each start and named only at the end.
            levels = [*bots.offered(game), MYSTERY]
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
                    "mystery": mystery_pool(game),
                    # The levels among `bots`, in their order (a client lists them first).
                    "levels": [lv for lv in bots.LEVELS if lv in levels],
                    # The names a set-valued option may hold (Capitol's steal_blockers).
                    "choices": game.option_choices(),
                }
            )
        return JSONResponse(
            {
                "games": out,
                "bots": list(offered),  # every game's, together
                "default_level": bots.DEFAULT_LEVEL,
                "settings": msgspec.to_builtins(RoomSettings()),
                # Each number of seconds a host may set: [least, most] (protocol.RoomSettings).
                "settings_limits": {
                    f.name: [kind.ge, kind.le]
                    for f in msgspec.structs.fields(RoomSettings)
                    if isinstance(kind := msgspec.inspect.type_info(f.type), msgspec.inspect.FloatType)
                },
                "bot_delay": self.config.bot_delay,
                "grace_seconds": self.config.grace_seconds,
                # Where players open the game (share links, QR codes); null: the page's own origin.
                "public_url": self.config.public_url,
                # The reactions a seated player may send ({"type": "react", "emoji": ...}).
                "reactions": list(protocol.REACTIONS),
            }
        )

    async def create_room(self, request: Request) -> Response:
        body = await self._body(request, protocol.CreateRoom)
        if self.hub.room_count() >= self.config.max_rooms:
            raise RoomError(503, "server_full", "this server holds as many rooms as it can; try again later")
        room, token = await self.hub.create_room(body)
        return JSONResponse(
            {"code": room.code, "seat": 0, "token": token, "join_url": f"/?room={room.code}"},
            status_code=201,
        )

    async def list_rooms(self, request: Request) -> Response:
        """Public rooms in the lobby or playing, newest first, a page at a time (``?offset=&limit=``,
        at most 100 a page, the newest LISTING_MAX in all)."""
        try:
            offset = max(0, int(request.query_params.get("offset", "0")))
            limit = min(100, max(1, int(request.query_params.get("limit", "50"))))
        except ValueError:
            raise RoomError(400, "bad_request", "offset and limit are whole numbers") from None
        listing = await self._cached_listing()
        page = listing[offset : offset + limit]
        following = offset + limit if offset + limit < len(listing) else None
        return JSONResponse({"rooms": page, "total": len(listing), "offset": offset, "next": following})

    async def _cached_listing(self) -> list[dict[str, Any]]:
        now = time.monotonic()
        if self._listing is not None and now - self._listing[0] < LISTING_SECONDS:
            return self._listing[1]
        if self._listing_task is None or self._listing_task.done():
            self._listing_task = asyncio.ensure_future(self._build_listing())
        return await asyncio.shield(self._listing_task)

    async def _build_listing(self) -> list[dict[str, Any]]:
        rooms = await self.hub.backend.listed(LISTING_MAX)
        listing = [room.info(self.hub.connected_seats(room)) for room in rooms]
        self._listing = (time.monotonic(), listing)
        return listing

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
            r.patch(body.options, settings, body.game)

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

    # ---- the standing table ----------------------------------------------------------------------

    @staticmethod
    def _standings(room: Room) -> dict[str, Any]:
        # Counts and names only, added once a game is over: nothing of a game being played.
        out = {"code": room.code, "standing": room.settings.standing, **standings.public(room.standings)}
        if not room.settings.standing:
            # Any room lists its earlier games (before its rematches), for their replays.
            out["games"] = [{"id": g} for g in room.past_games[-standings.MAX_GAMES :]]
        return out

    async def get_standings(self, request: Request) -> Response:
        room = await self.hub.room(self._code(request))
        return JSONResponse(self._standings(room))

    async def reset_standings(self, request: Request) -> Response:
        await self._body(request, protocol.Empty)
        token = self._token(request)

        def reset(r: Room) -> None:
            r.require_host(token)
            r.reset_standings(time.time())

        room, _ = await self.hub.change(self._code(request), reset)
        return JSONResponse(self._standings(room))

    async def claim(self, request: Request) -> Response:
        body = await self._body(request, protocol.Claim)
        _, (seat, token, name) = await self.hub.change(self._code(request), lambda r: r.claim(body.token))
        return JSONResponse({"seat": seat, "token": token, "name": name}, status_code=201)

    async def leave(self, request: Request) -> Response:
        await self._body(request, protocol.Empty)
        token = self._token(request)

        def leave(r: Room) -> None:
            r.leave(r.require_seat(token))

        _room, _ = await self.hub.change(self._code(request), leave)
        return JSONResponse({"left": True})

    async def rejoin(self, request: Request) -> Response:
        await self._body(request, protocol.Empty)
        token = self._token(request)
        # Durable before anyone hears of it: hub.change returns once the room is committed and shown.
        room, seat = await self.hub.change(self._code(request), lambda r: r.rejoin(token))
        return JSONResponse({"seat": seat, "room": room.info(self.hub.connected_seats(room))})

    async def pause(self, request: Request) -> Response:
        """The host stops every clock (and the bots) until they resume."""
        await self._body(request, protocol.Empty)
        token = self._token(request)

        def pause(r: Room) -> None:
            r.host_pause(r.require_host(token), time.time())

        room, _ = await self.hub.change(self._code(request), pause)
        return JSONResponse({"pause": room.pause_info(), "deadline": room.deadline, "seq": room.seq})

    async def resume(self, request: Request) -> Response:
        """The host starts the clocks again (ending their pause, or a player's hold early)."""
        await self._body(request, protocol.Empty)
        token = self._token(request)

        def resume(r: Room) -> None:
            r.require_host(token)
            r.resume(time.time())

        room, _ = await self.hub.change(self._code(request), resume)
        return JSONResponse({"pause": None, "deadline": room.deadline, "seq": room.seq})

    @staticmethod
    def _game_id(request: Request) -> str:
        game_id = str(request.path_params["game_id"])
        if not (0 < len(game_id) <= 64 and game_id.isalnum()):
            raise RoomError(404, "no_game", "no such game")
        return game_id

    async def _archived(self, game_id: str) -> dict[str, Any] | None:
        """A finished game's archived record (the latest ones kept decoded: a replay viewer asks
        for the record, the replay and the text of the same game)."""
        record = self._records.get(game_id)
        if record is not None:
            self._records.move_to_end(game_id)
            return record
        await self.hub.persist()
        record = await asyncio.to_thread(self.hub.store.get_game, game_id)
        if record is not None:
            self._records[game_id] = record
            if len(self._records) > REPLAYS_CACHED:
                self._records.popitem(last=False)
        return record

    def _may_replay(self, request: Request, record: dict[str, Any]) -> None:
        """A private room's finished game is for its players only: the token of one of its seats
        (``Authorization: Bearer``). Public rooms' games are anyone's; a game archived before the
        players' keys were kept stays reachable by its id alone, as it was."""
        keys = record.get("keys")
        if record.get("public", False) or not keys:
            return
        token = self._token(request)
        if not token:
            message = "a private room's game is replayed for its players only (Authorization: Bearer …)"
            raise RoomError(401, "no_token", message)
        mine = hash_token(token)
        if not any(same_hash(mine, k) for k in keys):
            raise RoomError(403, "private_game", "a private room's game is replayed for its players only")

    async def get_game(self, request: Request) -> Response:
        """A replay: public events while the game goes on; everything once it is over."""
        game_id = self._game_id(request)
        record = await self._archived(game_id)
        if record is not None:
            self._may_replay(request, record)
            cached = self._replays.get(game_id)
            if cached is not None:  # a finished game's replay never changes
                self._replays.move_to_end(game_id)
                return Response(cached, media_type="application/json")
            game = games.get(record["game"])
            final = game.from_json(record["final"])
            response = JSONResponse(
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
            self._replays[game_id] = bytes(response.body)
            if len(self._replays) > REPLAYS_CACHED:
                self._replays.popitem(last=False)
            return response
        found = await self.hub.backend.find_game(game_id)
        room = await self.hub.room(found.code) if found is not None else None
        if room is not None and room.game_id == game_id and room.state is not None:
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
                    "players": [{"seat": i, "name": s.name, "bot": s.bot} for i, s in enumerate(room.seats)],
                    "log": view.get("log", []),
                    "view": view,
                }
            )
        raise RoomError(404, "no_game", f"no game {game_id}")

    async def _finished_replay(self, request: Request) -> dict[str, Any]:
        """The step-by-step replay of a finished game the asker may read (``replay.build``)."""
        game_id = self._game_id(request)
        record = await self._archived(game_id)
        if record is None:
            found = await self.hub.backend.find_game(game_id)
            if found is not None and found.game_id == game_id:
                # A game still being played (or not archived yet) shows nothing face up.
                raise RoomError(409, "not_over", "a game is replayed once it is over")
            raise RoomError(404, "no_game", f"no game {game_id}")
        self._may_replay(request, record)
        built = self._built.get(game_id)
        if built is None:
            # Replaying every move with every card face up is work: off the event loop, once.
            built = await asyncio.to_thread(replay.build, record)
            self._built[game_id] = built
            if len(self._built) > REPLAYS_BUILT:
                self._built.popitem(last=False)
        else:
            self._built.move_to_end(game_id)
        return built

    async def get_replay(self, request: Request) -> Response:
        """A finished game step by step, every card face up (the replay viewer's data)."""
        return JSONResponse(await self._finished_replay(request))

    async def get_record(self, request: Request) -> Response:
        """A finished game as a plain text record, to download."""
        built = await self._finished_replay(request)
        name = f"conflictology-{built['game']}-{built['id'][:12]}.txt"
        return Response(
            replay.text_record(built),
            media_type="text/plain; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    async def list_games(self, request: Request) -> Response:
        """The latest public games, read again when this process archived one or after a few seconds
        (reading them decodes archived records: not once per request)."""
        await self.hub.persist()
        key = (self.hub.games_archived, int(time.monotonic() // RECENT_SECONDS))
        if self._recent is None or self._recent[0] != key:
            self._recent = (key, await asyncio.to_thread(self.hub.store.recent_games))
        return JSONResponse({"games": self._recent[1]})

    # ---- the WebSocket ---------------------------------------------------------------------------

    async def websocket(self, websocket: WebSocket) -> None:
        code = normalize_code(str(websocket.path_params["code"]))
        token = websocket.query_params.get("token")
        scope, receive, send = websocket.scope, websocket.receive, websocket.send
        try:
            room = await self.hub.backend.get(code) if plausible_code(code) else None
        except BackendUnavailable as exc:
            await _deny_websocket(scope, receive, send, exc.status, exc.code, exc.message, RETRY_AFTER)
            return
        if room is None:
            await _deny_websocket(scope, receive, send, 404, "no_room", f"no room {code[:16]}")
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
        else:
            # A seated player is always admitted; spectators have a cap of their own, so a crowd of
            # them can never lock a player out of their own table.
            conns = self.hub.connections.get(code, ())
            if sum(1 for c in conns if c.seat_id is None) >= self.config.max_spectators_per_room:
                refusal = "this room has as many spectators as it admits"
                await _deny_websocket(scope, receive, send, 429, "too_many_spectators", refusal, 10)
                return
            # Spectators are never evicted to make room (players are admitted by the connection
            # guard before anyone is): one address may not hold many of them.
            client = websocket.scope.get("client") or ("?", 0)
            if self.hub.spectating(client_key(str(client[0]))) >= self.config.max_spectators_per_address:
                refusal = "this address watches as many tables as it may"
                await _deny_websocket(scope, receive, send, 429, "too_many_spectators", refusal, 10)
                return
        client = websocket.scope.get("client") or ("?", 0)
        conn = Connection(websocket, code, seat_id, self.config, client_key(str(client[0])))
        self.hub.admit(conn)  # counted now, before the handshake's answer lets others through
        try:
            # Inside the try: a handshake or an attach that fails half-way (Redis gone) must not
            # leave the connection counted in the room for good.
            await websocket.accept()
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
            conn.send({"type": "error", "code": exc.code, "message": exc.message})
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
            old.send({"type": "replaced", "message": "this seat was opened in another tab"})
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
        conn.send({"type": "error", "code": code, "message": message})

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
            conn.send({"type": "pong", "time": time.time()})
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


# Seconds a client is asked to wait (Retry-After) when the rooms' store is unavailable.
RETRY_AFTER = 2


async def _room_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RoomError | BackendUnavailable)
    return error(exc.status, exc.code, exc.message, RETRY_AFTER if exc.status == 503 else None)


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
    metrics = Metrics(
        connections=lambda: sum(len(c) for c in hub.connections.values()),
        rooms=lambda: len(hub.connections),
        backend_stats=hub.backend.stats,
        bot_stats=hub.bot_pool.stats,
        bot_totals=hub.bot_pool.totals,
    )
    api = Api(config, hub, metrics)
    # Counted by the protocol classes of connections.uvicorn_options; rendered with the app's metrics.
    connections = ConnectionGuard(ConnectionLimits.from_config(config))
    metrics.count_connections(connections.stats)

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
        Route("/readyz", api.readyz),
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
        Route("/api/rooms/{code}/standings", api.get_standings, methods=["GET"]),
        Route("/api/rooms/{code}/standings/reset", api.reset_standings, methods=["POST"]),
        Route("/api/rooms/{code}/claim", api.claim, methods=["POST"]),
        Route("/api/rooms/{code}/rejoin", api.rejoin, methods=["POST"]),
        Route("/api/rooms/{code}/pause", api.pause, methods=["POST"]),
        Route("/api/rooms/{code}/resume", api.resume, methods=["POST"]),
        Route("/api/games", api.list_games, methods=["GET"]),
        Route("/api/games/{game_id}", api.get_game, methods=["GET"]),
        Route("/api/games/{game_id}/replay", api.get_replay, methods=["GET"]),
        Route("/api/games/{game_id}/record.txt", api.get_record, methods=["GET"]),
        WebSocketRoute("/ws/{code}", api.websocket),
    ]
    index = config.web_dir / "index.html"

    async def join_link(request: Request) -> Response:
        # /r/CODE is the same page as /?room=CODE: the client reads the code from the path.
        if index.is_file():
            return FileResponse(index)
        return HTMLResponse(_PLACEHOLDER, status_code=200)

    routes.append(Route("/r/{code}", join_link))
    viewer = config.web_dir / "replay.html"

    async def replay_page(request: Request) -> Response:
        # /replay/GAME_ID: the replay viewer (its own page and module; it reads the id from the path).
        if viewer.is_file():
            return FileResponse(viewer)
        return HTMLResponse(_PLACEHOLDER, status_code=200)

    routes.append(Route("/replay/{game_id}", replay_page))
    if config.web_dir.is_dir():
        routes.append(Mount("/", app=StaticFiles(directory=config.web_dir, html=True), name="web"))
    else:
        routes.append(Route("/", join_link))

    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={RoomError: _room_error, BackendUnavailable: _room_error},
    )
    app.state.hub = hub
    app.state.config = config
    app.state.connections = connections
    app.add_middleware(GuardMiddleware, config=config, metrics=metrics, backend=hub.backend)
    return app


_PLACEHOLDER = """<!doctype html><meta charset="utf-8"><title>Conflictology</title>
<h1>Conflictology</h1><p>The web client is not installed; the API is at <code>/api</code>
(see docs/protocol.md).</p>"""
