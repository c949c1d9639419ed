"""The ``serve`` and ``bot`` commands."""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Annotated

import typer

_TOKEN_RE = re.compile(r"(token=)[^&\s\"']+")


class RedactTokens(logging.Filter):
    """Access logs print WebSocket URLs, and a player's token travels in the query string: the
    log keeps the request but never the secret."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.args:
            record.args = tuple(_TOKEN_RE.sub(r"\1***", a) if isinstance(a, str) else a for a in record.args)
        if isinstance(record.msg, str):
            record.msg = _TOKEN_RE.sub(r"\1***", record.msg)
        return True


def _safe_url(url: str) -> str:
    """A database URL without its password, for printing."""
    return re.sub(r"://([^:/@]*):[^@]*@", r"://\1:***@", url)


def _check_redis(url: str) -> None:
    """Fail at once, clearly, when the Redis of --redis does not answer."""
    import redis as redis_sync

    try:
        client = redis_sync.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3)
        client.ping()
        client.close()
    except (redis_sync.RedisError, ValueError) as exc:
        typer.echo(f"error: no Redis answers at {_safe_url(url)}: {exc}", err=True)
        raise typer.Exit(2) from exc


# Python's default collector (700, 10, 10) runs a full collection every few seconds once a server
# holds thousands of sockets and rooms, and each one stops the event loop for 100-300 ms (measured at
# 1,000 rooms: the client-side p99 fell from 130 ms to 7 ms with these, memory the same; see
# benchmarks/server.md). Young objects are still collected often; full passes are much rarer.
GC_THRESHOLDS = (20_000, 20, 100)


# How long a SIGTERM waits for open connections to close before the application stops (the hub then
# saves every room and kills the bot workers): the whole stop stays under 5 s.
GRACEFUL_SHUTDOWN_SECONDS = 2


def tune_gc() -> None:
    import gc

    gc.set_threshold(*GC_THRESHOLDS)


def register(app: typer.Typer) -> None:
    from conflictology.server.loadtest import register as register_loadtest

    register_loadtest(app)

    @app.command()
    def serve(
        host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
        port: Annotated[int, typer.Option(help="port to listen on")] = 8000,
        db: Annotated[
            str | None,
            typer.Option("--db", help="SQLAlchemy URL (default: a SQLite file in the user data directory)"),
        ] = None,
        redis: Annotated[
            str | None,
            typer.Option("--redis", help="Redis URL: rooms shared by several processes (docs/scaling.md)"),
        ] = None,
        redis_prefix: Annotated[str, typer.Option("--redis-prefix", help="key prefix in Redis")] = "cfy:",
        redis_lease: Annotated[
            float,
            typer.Option(
                "--redis-lease", help="seconds without a heartbeat before a process is taken for dead"
            ),
        ] = 5.0,
        http_rate: Annotated[
            float,
            typer.Option("--http-rate", help="POST requests per second per client address (0: no limit)"),
        ] = 20.0,
        bot_delay: Annotated[
            float, typer.Option("--bot-delay", help="seconds a bot waits before acting")
        ] = 1.0,
        bot_workers: Annotated[
            int | None,
            typer.Option(
                "--bot-workers",
                min=1,
                help="bot worker processes: the most bot decisions at once (default: CPUs less one)",
            ),
        ] = None,
        bot_time_cap: Annotated[
            float,
            typer.Option(
                "--bot-time-cap",
                min=0.1,
                help="seconds one bot decision may take before its worker is killed (the seat times out)",
            ),
        ] = 2.0,
        bot_queue_wait: Annotated[
            float,
            typer.Option(
                "--bot-queue-wait",
                min=0.0,
                help="seconds a search may wait for a free worker before the default level plays instead",
            ),
        ] = 1.0,
        allow_origin: Annotated[
            list[str] | None,
            typer.Option("--allow-origin", help="another browser origin to admit (repeatable)"),
        ] = None,
        grace: Annotated[
            float, typer.Option("--grace", help="seconds before a bot plays for a disconnected player")
        ] = 30.0,
        log_level: Annotated[str, typer.Option("--log-level")] = "info",
        ws_compression: Annotated[
            bool,
            typer.Option(
                "--ws-compression/--no-ws-compression",
                help="permessage-deflate on WebSockets (saves bandwidth, costs CPU; benchmarks/server.md)",
            ),
        ] = True,
        ws_impl: Annotated[
            str, typer.Option("--ws", help="uvicorn WebSocket implementation (auto, websockets, ...)")
        ] = "auto",
    ) -> None:
        """Run the multiplayer server (HTTP API, WebSocket, web client)."""
        import uvicorn

        from conflictology.server.app import create_app
        from conflictology.server.config import ServerConfig

        if redis is not None:
            _check_redis(redis)
        config = ServerConfig(
            redis_url=redis,
            redis_prefix=redis_prefix,
            redis_lease_seconds=redis_lease,
            http_rate_per_second=http_rate,
            host=host,
            port=port,
            db_url=db,
            bot_delay=bot_delay,
            bot_workers=bot_workers,
            bot_time_cap=bot_time_cap,
            bot_queue_wait=bot_queue_wait,
            allow_origins=list(allow_origin or []),
            grace_seconds=grace,
        )
        for name in ("uvicorn.access", "uvicorn.error"):
            logging.getLogger(name).addFilter(RedactTokens())
        tune_gc()
        shared = f", rooms in Redis {_safe_url(redis)}" if redis else ""
        typer.echo(
            f"Conflictology on http://{host}:{port}/  "
            f"(database: {_safe_url(config.resolved_db_url())}{shared})"
        )
        uvicorn.run(
            create_app(config),
            host=host,
            port=port,
            log_level=log_level,
            ws_max_size=1 << 20,
            ws=ws_impl,
            ws_per_message_deflate=ws_compression,
            proxy_headers=False,
            # On SIGTERM, sockets that have not closed after this long are dropped and the rooms
            # are saved (uvicorn's default waits for every client forever).
            timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        )

    @app.command()
    def bot(
        server: Annotated[str, typer.Option("--server", help="server URL, e.g. http://127.0.0.1:8000")],
        room: Annotated[str, typer.Option("--room", help="room code")],
        level: Annotated[
            str | None, typer.Option("--level", help="bot level (default: a good opponent)")
        ] = None,
        name: Annotated[str | None, typer.Option("--name", help="the name shown at the table")] = None,
        token: Annotated[str | None, typer.Option("--token", help="resume a seat instead of joining")] = None,
        games_: Annotated[int, typer.Option("--games", help="games to play before leaving")] = 1,
    ) -> None:
        """A bot that joins a room over the network and plays."""
        from conflictology.server.netbot import run_bot

        try:
            result = asyncio.run(run_bot(server, room, level, name, token, games_to_play=games_))
        except (ValueError, RuntimeError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from exc
        typer.echo(
            f"seat {result.seat}: {result.decisions} decisions, winners {result.winners}"
            f"{' (won)' if result.seat in result.winners else ''}"
        )
