"""What every request passes before any route, and every response carries after it.

The Host and Origin allow-lists, CORS for allowed origins, the body size, the per-address limits
(reads and writes apart, listings, rooms made, wrong guesses at room codes), and the security
headers (CSP and the rest; HSTS over HTTPS).
"""

from __future__ import annotations

import functools
import re

from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from conflictology.server.backend import MemoryBackend, RoomBackend
from conflictology.server.config import ServerConfig
from conflictology.server.metrics import Metrics
from conflictology.server.proxies import TrustedProxies, apply_forwarded
from conflictology.server.refusals import deny_websocket, error
from conflictology.server.security import HostPolicy, OriginPolicy, RateLimits, client_key, own_host_names


def _header(scope: Scope, name: bytes) -> str | None:
    for k, v in scope.get("headers", []):
        if k == name:
            return str(v.decode("latin-1"))
    return None


# Every response of the app carries these. The web client loads its scripts, styles and images
# from files of its own origin (no inline script: the Chrome extension forbids them too) and talks
# only to its own origin (its WebSocket named too: older browsers do not count ws: as 'self'); nobody
# may frame it (clickjacking); a room code in the address never leaves in a Referer. The installed
# app's worker (/sw.js) and manifest are the origin's own too (named, though default-src says it).
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'{sockets}; font-src 'self'; media-src 'self' data:; object-src 'none'; "
    "worker-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS: list[tuple[bytes, bytes]] = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=(), payment=()"),
]
# The scope's key for a WebSocket's own send, under the wrappers (transport.py sends on it).
RAW_SEND = "conflictology.raw_send"

HSTS = (b"strict-transport-security", b"max-age=31536000")
_PLAIN_HOST = re.compile(r"^[A-Za-z0-9.\-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$")


@functools.lru_cache(maxsize=256)
def _csp(host: str | None) -> bytes:
    sockets = f" wss://{host} ws://{host}" if host and _PLAIN_HOST.match(host) else ""
    return CSP.format(sockets=sockets).encode()


# Listings: cached, but each answer is a page of JSON; nobody needs them often.
_LISTINGS = ("/api/rooms", "/api/games")

# A finished game replayed move by move (each is built once, then cached): bounded like a listing.
_REPLAYS = ("/replay", "/record.txt", "/recap")


def _heavy(path: str) -> bool:
    return path in _LISTINGS or (path.startswith("/api/games/") and path.endswith(_REPLAYS))


# Everything the API, the sockets and the metrics do not answer is a file of the web client (or a
# 404): the pages, scripts, styles, languages and icons a visit loads by the dozen.
_NOT_FILES = ("/api/", "/ws/", "/metrics", "/healthz", "/readyz")


def _client_file(path: str) -> bool:
    return not path.startswith(_NOT_FILES)


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
        # Behind a proxy the client is read from X-Forwarded-For here, before anything counts it
        # (uvicorn's own reading is off: it believes the client-written leftmost entry; proxies.py).
        self.proxies = TrustedProxies(config.forwarded_allow_ips) if config.proxy_headers else None
        on = config.address_limits
        self.writes = RateLimits(config.http_rate_per_second if on else 0, config.http_rate_burst)
        self.reads = RateLimits(config.http_read_rate_per_second if on else 0, config.http_read_burst)
        self.files = RateLimits(config.client_file_rate_per_second if on else 0, config.client_file_burst)
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
            await deny_websocket(scope, receive, send, status, code, message, retry)
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
        if self.proxies is not None:
            apply_forwarded(self.proxies, scope)
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
        if method in ("GET", "HEAD") and kind == "http" and _client_file(path):
            limits = self.files
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

            # The sockets' messages go to the server's own send once the socket is open (transport.py):
            # every message through three wrappers that look only at the handshake cost a tenth of
            # sending it.
            scope[RAW_SEND] = send
            try:
                await self.app(scope, receive, send_ws)
            finally:
                # uvicorn's protocol holds the scope, and the send is its own bound method: a cycle
                # that would keep a closed socket (~70 objects) for the collector's full pass.
                scope.pop(RAW_SEND, None)
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
