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
    # Origins admitted besides the server's own and chrome-extension:// ones (--allow-origin).
    allow_origins: list[str] = field(default_factory=list)
    # A disconnected player keeps the seat; after this many seconds a bot plays it until they return.
    grace_seconds: float = 30.0
    # Rooms untouched this long with nobody connected are removed (their finished games stay archived).
    idle_seconds: float = 6 * 3600.0
    sweep_seconds: float = 60.0
    # Room snapshots are written off the event loop by one writer, a batch at a time (group commit:
    # the changes made while a batch is written go in the next one), and a change is shown to anyone
    # only once its batch is committed, so a process killed with SIGKILL never takes back a move a
    # player saw. The writer may wait this long more before each batch, to gather changes (0: none).
    snapshot_seconds: float = 0.0
    # A change not saved within this many seconds (the database refuses writes) is answered 503
    # ``unavailable``; it stays queued, and is shown once it is saved.
    durable_timeout: float = 5.0
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
