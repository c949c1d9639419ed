"""What one server process is configured with (the ``serve`` command's flags)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

WEB_DIR = Path(__file__).resolve().parent.parent / "web"


def default_db_url() -> str:
    """The embedded default: one SQLite file in the user's data directory."""
    directory = Path(platformdirs.user_data_dir("conflictology", appauthor=False))
    directory.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{directory / 'conflictology.sqlite3'}"


@dataclass
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 8000
    # Any SQLAlchemy URL; None means the SQLite file of default_db_url().
    db_url: str | None = None
    # Rooms in Redis, shared by several processes (None: in this process's memory).
    redis_url: str | None = None
    # Key prefix in Redis (several deployments or test runs may share one Redis).
    redis_prefix: str = "cfy:"
    # A process that has not renewed its lease for this long is taken for dead: another process
    # takes its rooms' clocks and bots over.
    redis_lease_seconds: float = 5.0
    # The default delay before a bot acts, for a human feel (a room setting may override it).
    bot_delay: float = 1.0
    # Bots decide in this many worker processes, which is also the most decisions (searches) under
    # way at once; None: one per CPU less one for the event loop, at least one (docs/bots.md).
    bot_workers: int | None = None
    # A worker that has not answered one decision in this many seconds is killed and replaced, and
    # the seat takes its timeout action (the slowest level thinks for 0.5 s).
    bot_time_cap: float = 2.0
    # A search that has found no free worker this long after the bot's turn began is played by the
    # default level (a heuristic) instead.
    bot_queue_wait: float = 1.0
    # "module:function" (or "module") each bot worker calls (imports) when it starts: bots or games
    # registered at run time in the server process must be registered in the workers too.
    bot_worker_setup: list[str] = field(default_factory=list)
    # Origins admitted besides the server's own and chrome-extension:// ones (--allow-origin).
    allow_origins: list[str] = field(default_factory=list)
    # A disconnected player keeps the seat; after this many seconds a bot plays it until they return.
    grace_seconds: float = 30.0
    # Rooms untouched this long with nobody connected are removed (their finished games stay archived).
    idle_seconds: float = 6 * 3600.0
    sweep_seconds: float = 60.0
    # Room snapshots are written in batches, off the event loop, this often: a process killed with
    # SIGKILL loses at most the changes of this last instant (one SQL transaction per change would
    # cost a third of the server's time under load; benchmarks/server.md).
    snapshot_seconds: float = 0.05
    # Limits that never bite play at human or bot speed.
    max_message_bytes: int = 16 * 1024
    max_body_bytes: int = 64 * 1024
    ws_rate_per_second: float = 20.0
    ws_rate_burst: float = 60.0
    http_rate_per_second: float = 20.0  # 0: no limit (a load test from one address)
    http_rate_burst: float = 200.0
    # Sockets one room accepts (players' tabs and spectators together).
    max_connections_per_room: int = 200
    # Messages a slow connection may have queued before it is dropped.
    max_queue: int = 1000
    web_dir: Path = WEB_DIR

    def resolved_db_url(self) -> str:
        return self.db_url or default_db_url()

    def resolved_bot_workers(self) -> int:
        from conflictology.server.botpool import default_workers

        return self.bot_workers or default_workers()
