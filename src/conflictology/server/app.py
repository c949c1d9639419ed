"""The Starlette application: the table of routes, the WebSocket, the static web client.

``create_app(config)`` builds everything; the hub starts with the application (restoring saved
rooms and their clocks) and stops with it. The routes live by resource in ``server.routes``, the
WebSocket in ``server.transport``, what every request passes first in ``server.middleware``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.routing import BaseRoute, Route, WebSocketRoute

from conflictology.server.backend import BackendUnavailable, RoomBackend
from conflictology.server.collector import PacedCollector, PauseWatch
from conflictology.server.config import ServerConfig
from conflictology.server.connections import ConnectionGuard, ConnectionLimits
from conflictology.server.hub import Hub
from conflictology.server.metrics import Metrics
from conflictology.server.middleware import GuardMiddleware
from conflictology.server.refusals import install_denied_handshake_filter
from conflictology.server.rooms import RoomError
from conflictology.server.routes.common import room_error
from conflictology.server.routes.games import GameRoutes
from conflictology.server.routes.health import HealthRoutes
from conflictology.server.routes.pages import page_routes
from conflictology.server.routes.rooms import RoomRoutes
from conflictology.server.routes.standings import StandingRoutes
from conflictology.server.store import Store
from conflictology.server.transport import SocketTransport
from conflictology.server.webclient import WebClient


def _backend(config: ServerConfig) -> RoomBackend | None:
    if not config.redis_url:
        return None
    from conflictology.server.redis_backend import RedisBackend

    return RedisBackend(
        config.redis_url,
        prefix=config.redis_prefix,
        lease_seconds=config.redis_lease_seconds,
        heartbeat_seconds=min(1.0, config.redis_lease_seconds / 4),
    )


def _api_routes(
    health: HealthRoutes,
    rooms: RoomRoutes,
    standings: StandingRoutes,
    games: GameRoutes,
    transport: SocketTransport,
) -> list[BaseRoute]:
    """Every route of the API (docs/protocol.md), in the order they are matched."""
    return [
        Route("/healthz", health.healthz),
        Route("/readyz", health.readyz),
        Route("/metrics", health.metrics_text),
        Route("/api/info", health.info),
        Route("/api/rooms", rooms.create_room, methods=["POST"]),
        Route("/api/rooms", rooms.list_rooms, methods=["GET"]),
        Route("/api/rooms/{code}", rooms.get_room, methods=["GET"]),
        Route("/api/rooms/{code}", rooms.patch, methods=["PATCH"]),
        Route("/api/rooms/{code}/join", rooms.join, methods=["POST"]),
        Route("/api/rooms/{code}/bots", rooms.add_bots, methods=["POST"]),
        Route("/api/rooms/{code}/start", rooms.start, methods=["POST"]),
        Route("/api/rooms/{code}/kick", rooms.kick, methods=["POST"]),
        Route("/api/rooms/{code}/rematch", rooms.rematch, methods=["POST"]),
        Route("/api/rooms/{code}/leave", rooms.leave, methods=["POST"]),
        Route("/api/rooms/{code}/standings", standings.get_standings, methods=["GET"]),
        Route("/api/rooms/{code}/standings/reset", standings.reset_standings, methods=["POST"]),
        Route("/api/rooms/{code}/claim", rooms.claim, methods=["POST"]),
        Route("/api/rooms/{code}/rejoin", rooms.rejoin, methods=["POST"]),
        Route("/api/rooms/{code}/pause", rooms.pause, methods=["POST"]),
        Route("/api/rooms/{code}/resume", rooms.resume, methods=["POST"]),
        Route("/api/games", games.list_games, methods=["GET"]),
        Route("/api/games/{game_id}", games.get_game, methods=["GET"]),
        Route("/api/games/{game_id}/replay", games.get_replay, methods=["GET"]),
        Route("/api/games/{game_id}/record.txt", games.get_record, methods=["GET"]),
        Route("/api/games/{game_id}/recap", games.get_recap, methods=["GET"]),
        WebSocketRoute("/ws/{code}", transport.websocket),
    ]


def create_app(config: ServerConfig | None = None, store: Store | None = None) -> Starlette:
    config = config or ServerConfig()
    install_denied_handshake_filter()
    store = store or Store(config.resolved_db_url())
    hub = Hub(config, store, _backend(config))
    metrics = Metrics(
        connections=lambda: sum(len(c) for c in hub.connections.values()),
        rooms=lambda: len(hub.connections),
        backend_stats=hub.backend.stats,
        bot_stats=hub.bot_pool.stats,
        bot_totals=hub.bot_pool.totals,
        bot_fallbacks=hub.bot_pool.fallbacks,
        bot_searched=hub.bot_pool.searched,
    )
    transport = SocketTransport(config, hub, metrics)
    games = GameRoutes(config, hub)
    client = WebClient.read(config.web_dir)
    routes = _api_routes(
        HealthRoutes(config, hub, metrics, client_version=client.version),
        RoomRoutes(config, hub),
        StandingRoutes(config, hub),
        games,
        transport,
    )
    routes += page_routes(config.web_dir, client)
    # Counted by the protocol classes of guarded_protocols.uvicorn_options; rendered with the app's metrics.
    connections = ConnectionGuard(ConnectionLimits.from_config(config))
    metrics.count_connections(connections.stats)
    metrics.count_archive(hub.durability.archive_stats)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await hub.start()
        lag = asyncio.create_task(metrics.watch_event_loop())
        pauses = PauseWatch(metrics.gc_pause_seconds.observe)
        pauses.install()
        collector = PacedCollector() if config.gc == "paced" else None
        if collector is not None:
            collector.start()  # after the rooms are restored: they are frozen with the rest
        checks = asyncio.create_task(collector.run()) if collector is not None else None
        try:
            yield
        finally:
            lag.cancel()
            if checks is not None:
                checks.cancel()
            if collector is not None:
                collector.stop()
            pauses.remove()
            await games.stop()  # the replay builds under way: no process outlives the server
            await hub.stop()
            store.close()

    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={RoomError: room_error, BackendUnavailable: room_error},
    )
    app.state.hub = hub
    app.state.config = config
    app.state.connections = connections
    app.state.replays = games.replays
    app.add_middleware(GuardMiddleware, config=config, metrics=metrics, backend=hub.backend)
    return app
