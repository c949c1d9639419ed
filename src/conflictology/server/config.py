"""What one server process is configured with (the ``serve`` command's flags)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import platformdirs

WEB_DIR = Path(__file__).resolve().parent.parent / "web"


def default_db_url() -> str:
    """The embedded default: one SQLite file in the user's data directory."""
    directory = Path(platformdirs.user_data_dir("conflictology", appauthor=False))
    directory.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{directory / 'conflictology.sqlite3'}"


# Fields whose values may hold a password (printed masked by ``serve --check``).
SECRET_FIELDS = frozenset({"db_url", "redis_url"})


def public_origin(url: str) -> tuple[str, str]:
    """``https://play.example/`` → its origin (``https://play.example``) and host name
    (``play.example``); anything but an http(s) origin is a ``ValueError``."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"the public URL must be an http:// or https:// address, not {url!r}")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError(f"the public URL must be an origin (no path or query), not {url!r}")
    return f"{parts.scheme}://{parts.netloc}".lower(), parts.hostname.lower()


@dataclass
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 8000
    # The address players open (https://play.example): the host answered, the origin admitted, what
    # share links and QR codes show (GET /api/info). None: wherever the page was loaded from.
    public_url: str | None = None
    # Behind a reverse proxy: the client's address and scheme from X-Forwarded-For/-Proto, believed
    # only from these addresses or networks ("*": from anyone, for a proxy no one else can reach).
    proxy_headers: bool = False
    forwarded_allow_ips: list[str] = field(default_factory=lambda: ["127.0.0.1", "::1"])
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
    # "module:function" (or "module") each bot worker (and each replay build's process) calls
    # (imports) when it starts: bots or games registered at run time in the server process must be
    # registered in the workers too (a replay of a game a build's process does not know is built in
    # a thread of the server).
    bot_worker_setup: list[str] = field(default_factory=list)
    # Finished games' replays (and JSON exports) are built in child processes, this many at once: each
    # a fork of the bot workers' fork server that ends with its build (up to ~50 MB RSS, ~30 MB of it
    # its own, while the longest game builds; nothing between builds: docs/deploy.md). 0: in a thread
    # of the server process, no process at all, for a tiny host; but a long game's build (~0.7 s) then
    # holds the interpreter and every room's moves wait behind it (benchmarks/attacks.md).
    replay_workers: int = 1
    # A build that has used this many seconds of CPU (or waited ten times that) is stopped and
    # answered 503 (processes only: a thread cannot be stopped).
    replay_time_cap: float = 30.0
    # Origins admitted besides the server's own and chrome-extension:// ones (--allow-origin).
    allow_origins: list[str] = field(default_factory=list)
    # A disconnected player keeps the seat; after this many seconds a bot plays it until they return.
    grace_seconds: float = 30.0
    # Rooms untouched this long with nobody connected are removed (their finished games stay archived).
    idle_seconds: float = 6 * 3600.0
    # A standing room (setting "standing") lasts this long untouched (serve --standing-days).
    standing_idle_seconds: float = 30 * 86400.0
    sweep_seconds: float = 60.0
    # Room snapshots are written off the event loop by one writer, a batch at a time (group commit:
    # the changes made while a batch is written go in the next one), and a change is shown to anyone
    # only once its batch is committed, so a process killed with SIGKILL never takes back a move a
    # player saw. Batches start at most this often: an idle server writes a move at once, a busy one
    # gathers the moves of this interval into one transaction (benchmarks/server.md: 2 ms against 5 ms
    # halved the median move at 1,000 rooms for a few percent more CPU).
    snapshot_seconds: float = 0.002
    # Python's cycle collector (collector.py): "paced", young passes in slices and a full pass at
    # most every 10 minutes (serve's default: Python's own passes stopped a loop of 1,000 rooms for
    # up to 260 ms and found nothing), or "python", its own with fewer young passes. An app built in a
    # test leaves the process's collector alone unless told.
    gc: str = "python"
    # Changes waiting while nothing is saved for this many seconds (the database refuses writes)
    # are answered 503 ``unavailable``; they stay queued, and are shown once saved.
    durable_timeout: float = 5.0
    # Limits that never bite play at human or bot speed. Rates are per second, per client address
    # (an IPv6 /64 counts as one), besides the per-socket ones; 0 turns a limit off.
    max_message_bytes: int = 16 * 1024
    max_body_bytes: int = 64 * 1024
    ws_rate_per_second: float = 20.0  # messages on one socket
    ws_rate_burst: float = 60.0
    ws_address_rate_per_second: float = 40.0  # messages on all of an address's sockets together
    ws_address_burst: float = 120.0
    http_rate_per_second: float = 20.0  # requests that change something (POST, PATCH)
    http_rate_burst: float = 200.0
    # Reads (GET, and WebSocket handshakes) of the API: a lobby's polls, a table's sockets, a family
    # of six behind one router.
    http_read_rate_per_second: float = 50.0
    http_read_burst: float = 300.0
    # The client's own files (the pages, scripts, styles, languages, icons): a first visit asks for
    # about 110 (the page's ~55 and the installed app's worker keeping the same ~55), a reload about
    # as many (each revalidated, a 304 mostly); a family of six's first visits and a few reloads
    # each. Each is one bounded file read, so the budget is wide.
    client_file_rate_per_second: float = 200.0
    client_file_burst: float = 2000.0
    # Listings (GET /api/rooms, /api/games): a lobby polls them every few seconds.
    listing_rate_per_second: float = 2.0
    listing_burst: float = 20.0
    # Rooms one address may create: a burst for an evening of rematches in new rooms, then this many
    # an hour (a family behind one router, a club night).
    rooms_per_hour: float = 30.0
    rooms_burst: float = 20.0
    # Reactions (emoji) a seat may send: a burst, then one every two seconds; and what all of one
    # address's sockets may send together (a family at one table behind one router).
    reaction_rate_per_second: float = 0.5
    reaction_burst: float = 4.0
    reaction_address_rate_per_second: float = 2.0
    reaction_address_burst: float = 12.0
    # Requests for rooms that do not exist (guessed or mistyped codes): this many at once, then one
    # more per room_guess_seconds; an address out of them is refused every room for a while.
    room_guess_burst: float = 10.0
    room_guess_seconds: float = 120.0
    # False turns every per-address limit off (a load test from one machine).
    address_limits: bool = True
    # Live rooms this process keeps at most (a new one beyond it is a 503).
    max_rooms: int = 20_000
    # Sockets in one room: a seated player's is always admitted (up to this many tabs per seat: the
    # oldest is closed); spectators have a cap of their own.
    max_sockets_per_seat: int = 8
    max_spectators_per_room: int = 50
    # Spectator sockets one client address may hold, over all rooms (a spectator is never evicted to
    # make room for a newcomer, so an address must not hoard them).
    max_spectators_per_address: int = 20
    # Host names this server answers (its public name; "*.example"; "*" for any). None given: localhost,
    # IP addresses and this machine's own names (the defence against DNS rebinding: security.py).
    allowed_hosts: list[str] = field(default_factory=list)
    # Messages, and characters of them, a slow connection may have queued before it is dropped (a
    # long game's whole view is ~200 KB: a count alone let one socket that never reads hold 200 MB).
    max_queue: int = 1000
    max_queue_chars: int = 8 * 1024 * 1024
    # Connections (server/connections.py; docs/scaling.md sizes them). A browser or a bot sends a
    # request's headers in one packet and a body of a few hundred bytes right after; 10 s leaves
    # room for a bad mobile link (a few lost packets) while a slow sender holds a socket for 10 s,
    # not for ever. One deadline from the connection's opening (or the request's first byte),
    # not reset by each line.
    header_timeout: float = 10.0
    # From the headers to the whole body (bodies are at most max_body_bytes).
    body_timeout: float = 10.0
    # A response the client does not read at all for this long (the server's send buffer stays
    # full) is dropped: a slow reader holds a socket like a slow sender.
    send_timeout: float = 30.0
    # Open connections in all (HTTP and WebSocket); 0: the open-file limit less a reserve for the
    # database, Redis and worker pipes (896 at a limit of 1,024). At the cap the connection that
    # has waited longest for its client's request is evicted; an open WebSocket never is.
    max_connections: int = 0
    # Open connections per client address (IPv6: per /64); 0: no cap. A family or a classroom
    # behind one router uses one or two per player (a WebSocket, a few short-lived HTTP ones while
    # a page loads); 128 leaves them room while one address cannot take the server's whole cap.
    max_connections_per_address: int = 128
    # Addresses or networks not held to the per-address cap (a reverse proxy's own address: every
    # client arrives from it; reading the real client address from its headers is not done yet).
    connection_cap_exempt: list[str] = field(default_factory=list)
    # A WebSocket that does not answer a ping within ws_ping_timeout is closed: a player whose
    # network vanished is seen gone within 25 s (and their grace period starts).
    ws_ping_interval: float = 15.0
    ws_ping_timeout: float = 10.0
    # On SIGTERM, how long requests and sockets may take to finish before they are cancelled.
    shutdown_seconds: int = 3
    web_dir: Path = WEB_DIR

    def resolved_db_url(self) -> str:
        return self.db_url or default_db_url()

    def resolved_bot_workers(self) -> int:
        from conflictology.server.botpool import default_workers

        return self.bot_workers or default_workers()
