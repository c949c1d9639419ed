"""The process's open-file limit, and how many connections it leaves room for.

Every socket is an open file: with too small a limit a crowd of slow connections leaves no file for
the database, Redis or the bot workers' pipes (issue 13). ``serve`` raises the soft limit to the hard
one at start, and the connection cap (``connections``) keeps a reserve below it.
"""

from __future__ import annotations

import contextlib

# Raised to the hard limit, but no further than this: past it memory, not files, bounds a process
# (each open WebSocket costs tens of KB), and a larger table only hides a leak for longer.
OPEN_FILES_CEILING = 65_536


def open_file_limit() -> int:
    """The process's soft RLIMIT_NOFILE (``OPEN_FILES_CEILING`` if unlimited or unknown)."""
    try:
        import resource
    except ImportError:  # not on POSIX: no limit to read
        return OPEN_FILES_CEILING
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return OPEN_FILES_CEILING if soft == resource.RLIM_INFINITY else int(soft)


def raise_open_file_limit(ceiling: int = OPEN_FILES_CEILING) -> tuple[int, int]:
    """Raise the soft open-file limit to the hard one (at most ``ceiling``; never lowered).

    Many systems start a process with a soft limit of 1,024 and a much higher hard limit; the soft
    one is the process's own to raise. Returns the limit (before, after)."""
    try:
        import resource
    except ImportError:
        return OPEN_FILES_CEILING, OPEN_FILES_CEILING
    before = open_file_limit()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = ceiling if hard == resource.RLIM_INFINITY else min(int(hard), ceiling)
    if soft != resource.RLIM_INFINITY and soft < target:
        # A sandbox may refuse: the old limit stands.
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return before, open_file_limit()


def reserved_files(open_files: int) -> int:
    """Files kept out of the connection cap: standard streams, the event loop's, the listening
    sockets, SQLite's three files per pooled connection (or the database's sockets), Redis's pool
    and subscription, bot worker pipes, static files being sent and log files. 128 covers them
    with room to spare on a small server; a large limit keeps a sixteenth."""
    return max(128, open_files // 16)


def default_max_connections(open_files: int | None = None) -> int:
    files = open_file_limit() if open_files is None else open_files
    return max(16, files - reserved_files(files))
