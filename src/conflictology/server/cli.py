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


def log_to_stderr(level: str) -> None:
    """The server's own log lines (rooms restored, Redis outages, refused connections) on stderr, in
    uvicorn's format, at the ``--log-level`` (without a handler Python printed only warnings, bare)."""
    logger = logging.getLogger("conflictology")
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s:%(padding)s%(message)s"))
        handler.addFilter(_pad_level)
        logger.addHandler(handler)
        logger.propagate = False
    logger.setLevel(level.upper())


def _pad_level(record: logging.LogRecord) -> bool:
    record.padding = " " * max(1, 9 - len(record.levelname))  # "INFO:     ", as uvicorn aligns them
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
            typer.Option("--http-rate", help="POST/PATCH requests a second per client address (0: no limit)"),
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
        allowed_host: Annotated[
            list[str] | None,
            typer.Option(
                "--allowed-host",
                help="a host name this server answers (repeatable; '*.example' or '*'); "
                "none: localhost, IP addresses and this machine's names",
            ),
        ] = None,
        address_limits: Annotated[
            bool,
            typer.Option(
                "--address-limits/--no-address-limits",
                help="per-address limits on requests, messages, rooms made and wrong room codes "
                "(off only for a load test from one machine)",
            ),
        ] = True,
        rooms_per_hour: Annotated[
            float, typer.Option("--rooms-per-hour", help="rooms an address may create an hour, after a burst")
        ] = 30.0,
        max_rooms: Annotated[
            int, typer.Option("--max-rooms", help="live rooms this process keeps at most")
        ] = 20_000,
        max_spectators: Annotated[
            int, typer.Option("--max-spectators", help="spectator sockets one room admits")
        ] = 50,
        # Connection limits (server/connections.py, docs/scaling.md); defaults as in ServerConfig.
        header_timeout: Annotated[
            float, typer.Option("--header-timeout", help="seconds for a request's line and headers to arrive")
        ] = 10.0,
        body_timeout: Annotated[
            float, typer.Option("--body-timeout", help="seconds for a request's body to arrive")
        ] = 10.0,
        send_timeout: Annotated[
            float, typer.Option("--send-timeout", help="seconds a client may leave a response unread")
        ] = 30.0,
        max_connections: Annotated[
            int, typer.Option("--max-connections", help="open connections in all (0: by the open-file limit)")
        ] = 0,
        max_per_address: Annotated[
            int,
            typer.Option(
                "--max-connections-per-address", help="open connections per client address (0: no cap)"
            ),
        ] = 128,
        cap_exempt: Annotated[
            list[str] | None,
            typer.Option("--cap-exempt", help="an address or network not held to the per-address cap"),
        ] = None,
    ) -> None:
        """Run the multiplayer server (HTTP API, WebSocket, web client)."""
        import uvicorn

        from conflictology.server.app import create_app
        from conflictology.server.config import ServerConfig
        from conflictology.server.connections import describe, raise_open_file_limit, uvicorn_options

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
            allowed_hosts=list(allowed_host or []),
            address_limits=address_limits,
            rooms_per_hour=rooms_per_hour,
            max_rooms=max_rooms,
            max_spectators_per_room=max_spectators,
            header_timeout=header_timeout,
            body_timeout=body_timeout,
            send_timeout=send_timeout,
            max_connections=max_connections,
            max_connections_per_address=max_per_address,
            connection_cap_exempt=list(cap_exempt or []),
        )
        for name in ("uvicorn.access", "uvicorn.error"):
            logging.getLogger(name).addFilter(RedactTokens())
        log_to_stderr(log_level)
        tune_gc()
        shared = f", rooms in Redis {_safe_url(redis)}" if redis else ""
        typer.echo(
            f"Conflictology on http://{host}:{port}/  "
            f"(database: {_safe_url(config.resolved_db_url())}{shared})"
        )
        # Before the app is built: its connection cap is drawn from the open-file limit.
        files = raise_open_file_limit()
        app = create_app(config)
        try:
            options = uvicorn_options(
                app, log_level=log_level, ws=ws_impl, ws_per_message_deflate=ws_compression
            )
        except ValueError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from exc
        typer.echo(describe(app.state.connections.limits, *files))
        uvicorn.run(app, **options)

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
