"""The ``serve`` command."""

from __future__ import annotations

import logging
import os
import re
from typing import Annotated, Any

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




ENV_PREFIX = "CONFLICTOLOGY_"
ENV_EPILOG = (
    "Every flag can also come from the environment: --db from CONFLICTOLOGY_DB, --allow-origin from "
    "CONFLICTOLOGY_ALLOW_ORIGIN (comma-separated), --ws-compression from CONFLICTOLOGY_WS_COMPRESSION "
    "(true/false), and so on; a flag given wins over its variable. PORT (what a PaaS sets) is the port "
    "when neither --port nor CONFLICTOLOGY_PORT is given."
)


def env_name(flag: str) -> str:
    """The environment variable a flag can come from: ``--allow-origin`` → ``CONFLICTOLOGY_ALLOW_ORIGIN``
    (a switch ``--x/--no-x`` by its first name)."""
    return ENV_PREFIX + flag.split("/")[0].lstrip("-").upper().replace("-", "_")


def _comma_separated(values: list[str] | None) -> list[str] | None:
    # A list flag may be repeated or comma-separated (an environment variable holds one string).
    if values is None:
        return None
    return [item.strip() for value in values for item in value.split(",") if item.strip()]


def option(flag: str, help: str, **kwargs: Any) -> Any:
    """A ``serve`` flag that may also come from its environment variable (shown in ``--help``)."""
    return typer.Option(flag, help=help, envvar=env_name(flag), show_envvar=True, **kwargs)


def _port_from_environment() -> int:
    raw = os.environ.get("PORT", "").strip()
    if not raw:
        return 8000
    if not raw.isdigit() or not 0 < int(raw) < 65536:
        typer.echo(f"error: PORT={raw!r} is not a port number", err=True)
        raise typer.Exit(2)
    return int(raw)


def check_configuration(config: Any) -> int:
    """``serve --check``: the configuration in effect (passwords masked), and whether the database
    and Redis answer. Returns the exit status: 0 when everything answers."""
    from dataclasses import fields

    from conflictology.server.config import SECRET_FIELDS

    for f in fields(config):
        value = getattr(config, f.name)
        if f.name == "web_dir":
            continue
        if isinstance(value, str) and f.name in SECRET_FIELDS:
            value = _safe_url(value)
        typer.echo(f"{f.name:28} {value}")
    status = 0
    url = config.resolved_db_url()
    try:
        from sqlalchemy import text

        from conflictology.server.store import Store

        store = Store(url)
        with store.engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        store.close()
        typer.echo(f"database: answers ({_safe_url(url)})")
    except Exception as exc:
        typer.echo(f"database: does not answer ({_safe_url(url)}): {exc}", err=True)
        status = 1
    if config.redis_url:
        import redis as redis_sync

        try:
            client = redis_sync.Redis.from_url(config.redis_url, socket_connect_timeout=3, socket_timeout=3)
            client.ping()
            client.close()
            typer.echo(f"redis: answers ({_safe_url(config.redis_url)})")
        except (redis_sync.RedisError, ValueError) as exc:
            typer.echo(f"redis: does not answer ({_safe_url(config.redis_url)}): {exc}", err=True)
            status = 1
    else:
        typer.echo("redis: not used (rooms in this process's memory)")
    from conflictology import native

    typer.echo(f"rules: {native.running}")  # compiled, or run from their source and why
    return status


def tune_gc() -> None:
    """Python's own collector as ``serve --gc python`` runs it (collector.py); ``paced`` takes over
    from it once the app has started."""
    import gc

    from conflictology.server.collector import GC_THRESHOLDS

    gc.set_threshold(*GC_THRESHOLDS)


def register(app: typer.Typer) -> None:
    @app.command(epilog=ENV_EPILOG)
    def serve(
        host: Annotated[
            str, option("--host", "address to listen on (0.0.0.0: every interface)")
        ] = "127.0.0.1",
        port: Annotated[
            int | None, option("--port", "port to listen on (default: $PORT when set, else 8000)")
        ] = None,
        public_url: Annotated[
            str | None,
            option(
                "--public-url",
                "the address players open, e.g. https://play.example: the host answered, the origin "
                "admitted, and what share links and QR codes show",
            ),
        ] = None,
        db: Annotated[
            str | None, option("--db", "SQLAlchemy URL (default: a SQLite file in the user data directory)")
        ] = None,
        redis: Annotated[
            str | None, option("--redis", "Redis URL: rooms shared by several processes (docs/scaling.md)")
        ] = None,
        redis_prefix: Annotated[str, option("--redis-prefix", "key prefix in Redis")] = "cfy:",
        redis_lease: Annotated[
            float, option("--redis-lease", "seconds without a heartbeat before a process is taken for dead")
        ] = 5.0,
        proxy_headers: Annotated[
            bool,
            option(
                "--proxy-headers/--no-proxy-headers",
                "take the client's address and scheme from X-Forwarded-For/-Proto, from the "
                "addresses of --forwarded-allow-ips only",
            ),
        ] = False,
        forwarded_allow_ips: Annotated[
            list[str] | None,
            option(
                "--forwarded-allow-ips",
                "proxies trusted with X-Forwarded-* (addresses or networks, repeatable or "
                "comma-separated; the client is the rightmost X-Forwarded-For entry not listed; "
                "'*' trusts whatever peer connects, one hop only; default 127.0.0.1, ::1)",
            ),
        ] = None,
        http_rate: Annotated[
            float, option("--http-rate", "POST/PATCH requests a second per client address (0: no limit)")
        ] = 20.0,
        bot_delay: Annotated[float, option("--bot-delay", "seconds a bot waits before acting")] = 1.0,
        bot_workers: Annotated[
            int | None,
            option(
                "--bot-workers",
                "bot worker processes: the most bot decisions at once (default: CPUs less one)",
                min=1,
            ),
        ] = None,
        bot_time_cap: Annotated[
            float,
            option(
                "--bot-time-cap",
                "seconds one bot decision may take before its worker is killed (the seat times out)",
                min=0.1,
            ),
        ] = 2.0,
        bot_queue_wait: Annotated[
            float,
            option(
                "--bot-queue-wait",
                "seconds a search may wait for a free worker before the default level plays instead",
                min=0.0,
            ),
        ] = 1.0,
        replay_workers: Annotated[
            int,
            option(
                "--replay-workers",
                "child processes finished games' replays are built in, at once (0: in a thread of the "
                "server: no process, but other rooms wait while a long game's replay builds)",
                min=0,
            ),
        ] = 1,
        allow_origin: Annotated[
            list[str] | None,
            option("--allow-origin", "another browser origin to admit (repeatable or comma-separated)"),
        ] = None,
        grace: Annotated[
            float, option("--grace", "seconds before a bot plays for a disconnected player")
        ] = 30.0,
        standing_days: Annotated[
            float,
            option(
                "--standing-days", "days a standing room lasts with nobody in it and nothing played", min=0.01
            ),
        ] = 30.0,
        log_level: Annotated[str, option("--log-level", "debug, info, warning or error")] = "info",
        ws_compression: Annotated[
            bool,
            option(
                "--ws-compression/--no-ws-compression",
                "permessage-deflate on WebSockets (saves bandwidth, costs CPU; benchmarks/server.md)",
            ),
        ] = True,
        ws_impl: Annotated[
            str, option("--ws", "uvicorn WebSocket implementation (auto, websockets, ...)")
        ] = "auto",
        gc_policy: Annotated[
            str,
            option(
                "--gc",
                "when Python's cycle collector runs: paced (young passes in slices of 10,000 objects, "
                "what survives frozen; a full pass when memory grew by a quarter, at most every 10 "
                "minutes) or python (its own passes)",
            ),
        ] = "paced",
        allowed_host: Annotated[
            list[str] | None,
            option(
                "--allowed-host",
                "a host name this server answers (repeatable or comma-separated; '*.example' or '*'); "
                "none: localhost, IP addresses and this machine's names (and --public-url's host)",
            ),
        ] = None,
        address_limits: Annotated[
            bool,
            option(
                "--address-limits/--no-address-limits",
                "per-address limits on requests, messages, rooms made and wrong room codes "
                "(off only for a load test from one machine)",
            ),
        ] = True,
        rooms_per_hour: Annotated[
            float, option("--rooms-per-hour", "rooms an address may create an hour, after a burst")
        ] = 30.0,
        max_rooms: Annotated[int, option("--max-rooms", "live rooms this process keeps at most")] = 20_000,
        max_spectators: Annotated[int, option("--max-spectators", "spectator sockets one room admits")] = 50,
        # Connection limits (server/connections.py, docs/scaling.md); defaults as in ServerConfig.
        header_timeout: Annotated[
            float, option("--header-timeout", "seconds for a request's line and headers to arrive")
        ] = 10.0,
        body_timeout: Annotated[
            float, option("--body-timeout", "seconds for a request's body to arrive")
        ] = 10.0,
        send_timeout: Annotated[
            float, option("--send-timeout", "seconds a client may leave a response unread")
        ] = 30.0,
        max_connections: Annotated[
            int, option("--max-connections", "open connections in all (0: by the open-file limit)")
        ] = 0,
        max_per_address: Annotated[
            int, option("--max-connections-per-address", "open connections per client address (0: no cap)")
        ] = 128,
        cap_exempt: Annotated[
            list[str] | None,
            option("--cap-exempt", "an address or network not held to the per-address cap (repeatable)"),
        ] = None,
        check: Annotated[
            bool,
            typer.Option(
                "--check",
                help="print the configuration in effect and whether the database and Redis answer, then exit",
            ),
        ] = False,
    ) -> None:
        """Run the multiplayer server (HTTP API, WebSocket, web client)."""
        import uvicorn

        from conflictology.server.app import create_app
        from conflictology.server.config import ServerConfig, public_origin
        from conflictology.server.guarded_protocols import describe, uvicorn_options
        from conflictology.server.open_files import raise_open_file_limit

        if port is None:
            port = _port_from_environment()
        origins, hosts = _comma_separated(allow_origin) or [], _comma_separated(allowed_host) or []
        if public_url is not None:
            try:
                origin, public_host = public_origin(public_url)
            except ValueError as exc:
                typer.echo(f"error: {exc}", err=True)
                raise typer.Exit(2) from exc
            origins.append(origin)
            hosts.append(public_host)
        proxies = _comma_separated(forwarded_allow_ips) or ["127.0.0.1", "::1"]
        if gc_policy not in ("paced", "python"):
            typer.echo(f"error: --gc is paced or python, not {gc_policy!r}", err=True)
            raise typer.Exit(2)
        config = ServerConfig(
            redis_url=redis,
            redis_prefix=redis_prefix,
            redis_lease_seconds=redis_lease,
            http_rate_per_second=http_rate,
            host=host,
            port=port,
            public_url=public_url.rstrip("/") if public_url else None,
            db_url=db,
            bot_delay=bot_delay,
            bot_workers=bot_workers,
            bot_time_cap=bot_time_cap,
            bot_queue_wait=bot_queue_wait,
            replay_workers=replay_workers,
            allow_origins=origins,
            grace_seconds=grace,
            standing_idle_seconds=standing_days * 86400,
            allowed_hosts=hosts,
            address_limits=address_limits,
            rooms_per_hour=rooms_per_hour,
            max_rooms=max_rooms,
            max_spectators_per_room=max_spectators,
            header_timeout=header_timeout,
            body_timeout=body_timeout,
            send_timeout=send_timeout,
            max_connections=max_connections,
            max_connections_per_address=max_per_address,
            connection_cap_exempt=_comma_separated(cap_exempt) or [],
            proxy_headers=proxy_headers,
            forwarded_allow_ips=proxies,
            gc=gc_policy,
        )
        if check:
            raise typer.Exit(check_configuration(config))
        if redis is not None:
            _check_redis(redis)
        for name in ("uvicorn.access", "uvicorn.error"):
            logging.getLogger(name).addFilter(RedactTokens())
        log_to_stderr(log_level)
        tune_gc()
        shared = f", rooms in Redis {_safe_url(redis)}" if redis else ""
        from conflictology import native

        typer.echo(
            f"Conflictology on http://{host}:{port}/  "
            f"(database: {_safe_url(config.resolved_db_url())}{shared}; the rules {native.running})"
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
