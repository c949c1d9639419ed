"""What every attack shares: the source addresses each kind of client uses, the bot level of item 1,
and small helpers (free ports, percentiles, CPU seconds, child processes that die with the tool)."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import math
import os
import resource
import signal
import socket
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

# The bot level of item 1: a search with no real bound, accepted by name checks that look at "ismcts".
EVIL_LEVEL = "ismcts:iterations=999999999:seconds=1e9"
# docs/protocol.md's code alphabet; letters seen in real codes are added, so a changed alphabet is
# still covered (the length is read from a room the tool creates).
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
# Source addresses: the probe's two players, a monitor (/healthz samples), the set-up's pool (rooms
# the attacks need, spread so that a per-address quota never stops the set-up), and attacker blocks.
PROBE_ADDRESSES = ("127.20.0.1", "127.20.0.2")
MONITOR_ADDRESS = "127.20.0.3"
SETUP_ADDRESSES = [f"127.30.{i // 250}.{1 + i % 250}" for i in range(1000)]
# The yardstick for guessing: the chance to find any of this many live rooms in a day.
LIVE_ROOMS = 10_000
TRACEBACK = "Traceback (most recent call last)"
# Where ``python -m benchmarks.attacks`` is found (the probe child runs from there).
REPO_ROOT = Path(__file__).resolve().parents[2]


def attacker(block: int, i: int = 0) -> str:
    """The i-th source address of attacker block ``block`` (each attack has its own block)."""
    return f"127.{40 + block}.{i // 250}.{1 + i % 250}"


class AttackError(RuntimeError):
    """The attack could not be set up (reported in its row; the run goes on)."""


# ---- small helpers -----------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pct(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (NaN when empty)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def fmt(x: float | None, digits: int = 0) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:,.{digits}f}"


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) of a process and of its live descendants (a server's worker
    processes count as the server's)."""
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
            for task in Path(f"/proc/{p}/task").iterdir():
                todo.extend(int(c) for c in (task / "children").read_text().split())
        except (OSError, ValueError):
            if p == pid:
                return math.nan
    return total / os.sysconf("SC_CLK_TCK")


def ws_base(url: str) -> str:
    return "ws://" + url.removeprefix("http://")


def die_with_parent() -> None:
    # A child the tool started must not outlive it (Ctrl-C, a kill of the tool): PR_SET_PDEATHSIG.
    # (Children are always started from the main thread, whose exit is what the signal follows.)
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)


def child_setup(nofile: int | None) -> Callable[[], None]:
    def setup() -> None:
        die_with_parent()
        if nofile is not None:
            # `ulimit -n 1024` as a service manager's default: the soft limit; the hard one stays, so
            # a server may raise its own limit at start.
            _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, hard))

    return setup


def raise_own_file_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


_background: set[asyncio.Future[Any]] = set()


def spawn(coro: Awaitable[Any]) -> asyncio.Future[Any]:
    task = asyncio.ensure_future(coro)
    _background.add(task)
    task.add_done_callback(_spawned_done)
    return task


def _spawned_done(task: asyncio.Future[Any]) -> None:
    _background.discard(task)
    if not task.cancelled():
        task.exception()  # read: a send on a socket that closed meanwhile is expected


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)
