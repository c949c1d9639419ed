"""Whether this process serves (liveness, readiness), its metrics, and what a client needs to build
its forms (``/api/info``)."""

from __future__ import annotations

import time
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from conflictology import bots, games
from conflictology.server import protocol
from conflictology.server.config import ServerConfig
from conflictology.server.hub import Hub
from conflictology.server.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from conflictology.server.metrics import Metrics
from conflictology.server.protocol import RoomSettings
from conflictology.server.rooms import MYSTERY, default_level, mystery_pool


class HealthRoutes:
    """``/healthz``, ``/readyz``, ``/metrics`` and ``/api/info``."""

    def __init__(
        self, config: ServerConfig, hub: Hub, metrics: Metrics, client_version: str | None = None
    ) -> None:
        self.config = config
        self.client_version = client_version
        self.hub = hub
        self.metrics = metrics

    def _health(self) -> dict[str, Any]:
        checks = self.hub.health()
        ok = all(v == "ok" for v in checks.values())
        # The finished games the database has not taken yet (kept until it does: docs/deploy.md).
        archive = self.hub.durability.archive_stats()
        return {
            "ok": ok,
            "status": "ok" if ok else "degraded",
            "checks": checks,
            "archive": {"waiting": archive.waiting, "oldest_seconds": round(archive.oldest_seconds, 3)},
            "time": time.time(),
        }

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
                # The web client this process serves (null: none): a page loaded with another one
                # reloads to take it (docs/web.md, "On the phone").
                "client_version": self.client_version,
            }
        )
