"""Where finished games' replays are built: in child processes (the default), or in a thread.

A long Capitol game's replay is ~0.7 s of pure Python. In a thread of the server it holds the
interpreter in 5 ms slices all that time and every other room's moves wait for it (benchmarks/
attacks.md, replay-flood); in a child process it holds only that process. So each build runs in a
process of its own, a fork of the project's fork server (``botworker.worker_context``: the games and
this module already imported, so one starts in milliseconds; never a plain ``fork``: the server has
threads), at a lower priority than the server like the bot workers, and the process ends with its
build: nothing is held between builds, and a build's garbage never stays in a long-lived worker.

At most ``workers`` build at once (the others wait for one to end). A build is driven from a thread
of its own: start the process, wait for it to be ready (``BOOT_SECONDS`` at most), send
the record, wait for the bytes; the event loop only awaits. The record is
pickled in that thread (~1.5 ms for the longest game: ~180 KB of JSON, ~80 KB pickled), the answer
(~1.6 MB of bytes) unpickled there in less; so the child is given the record, not the game's id to
read it itself (it would need the database, and what is still waiting to be written to it).

A build that has used ``time_cap`` seconds of CPU is stopped by the kernel (``RLIMIT_CPU``: on a
loaded machine a niced build may take many times its CPU time in wall time, and must not fail for
it), one that has not answered ``WALL_FACTOR`` times that after receiving its record is killed; each
is answered 503 ``replay_unavailable`` (with Retry-After), and so is one whose process died (a
crash, the OOM killer); the next request builds it again in a new process. A build that raises (a game's
bug) is logged with its traceback and answered 500 ``replay_failed``. Stopping kills every build
under way.

``ThreadBuilds`` (``--replay-workers 0``) builds in a thread of the server as before: no process at
all, for a tiny host or a test, at the cost of other rooms' latency while a long game is built, and
with no time cap (a thread cannot be killed).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import resource
import signal
import threading
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from conflictology import games
from conflictology.server.botworker import WORKER_NICENESS, run_setup, worker_context
from conflictology.server.lifecycle import RoomError
from conflictology.server.replay_cache import Encoded, Kind, build

log = logging.getLogger("conflictology.server")

# The longest game's replay builds in ~0.7 s of CPU: thirty seconds is a build gone wrong, not a
# slow one.
TIME_CAP = 30.0

# A build may take ``time_cap`` seconds of CPU, and this many times that of wall time (the CPU cap
# stops a build that computes too long however loaded the machine; this one, one that waits on
# nothing for ever).
WALL_FACTOR = 10

# A build's process that is not ready this long after it was started is killed (as long as a bot
# worker's boot may take: the first also starts the fork server).
BOOT_SECONDS = 30.0

# What a child runs: a module-level function (it is pickled by name, with the record).
BuildFunction = Callable[[Kind, dict[str, Any]], Encoded]


def _unavailable(why: str) -> RoomError:
    return RoomError(503, "replay_unavailable", f"the replay could not be built now ({why}): try again")


class ThreadBuilds:
    """Each build in a thread of the server process (``replay_workers = 0``)."""

    def __init__(self, function: BuildFunction = build) -> None:
        self.function = function

    async def build(self, kind: Kind, record: dict[str, Any]) -> Encoded:
        return await asyncio.to_thread(self.function, kind, record)

    async def stop(self) -> None:
        return None


class ProcessBuilds:
    """Each build in a child process of its own, at most ``workers`` at once."""

    def __init__(
        self,
        workers: int = 1,
        time_cap: float = TIME_CAP,
        function: BuildFunction = build,
        setup: Sequence[str] = (),
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        if time_cap <= 0:
            raise ValueError(f"time_cap must be positive, got {time_cap}")
        self.workers = workers
        self.time_cap = time_cap
        self.function = function
        self.setup = list(setup)
        self.started = 0  # processes started, ever
        self._drivers: ThreadPoolExecutor | None = None  # made with the first build
        self._lock = threading.Lock()  # the drivers' threads and the event loop share what follows
        self._running: dict[int, BaseProcess] = {}
        self._stopped = False

    @property
    def running(self) -> list[int]:
        """The process ids of the builds under way."""
        with self._lock:
            return list(self._running)

    async def build(self, kind: Kind, record: dict[str, Any]) -> Encoded:
        if self._stopped:
            raise _unavailable("the server is stopping")
        if self._drivers is None:
            self._drivers = ThreadPoolExecutor(self.workers, thread_name_prefix="conflictology-replay")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._drivers, self._drive, kind, record)

    def _drive(self, kind: Kind, record: dict[str, Any]) -> Encoded:
        """In a driver thread: one build in a new process, from its start to its end."""
        if self._stopped:
            raise _unavailable("the server is stopping")  # waited for a driver while it stopped
        context = worker_context()
        parent, child = context.Pipe()
        process = context.Process(
            target=replay_child,
            args=(child, self.function, self.setup, self.time_cap),
            name="conflictology-replay",
            daemon=True,
        )
        try:
            try:
                process.start()
            except Exception:
                log.exception("could not start a process to build a replay")
                raise _unavailable("no process could be started") from None
            finally:
                child.close()  # the child's end: this end sees EOF when the child dies
            with self._lock:
                self.started += 1
                assert process.pid is not None
                self._running[process.pid] = process
                stopped = self._stopped
            if stopped:
                raise _unavailable("the server is stopping")
            return self._exchange(process, parent, kind, record)
        finally:
            with self._lock:
                if process.pid is not None:
                    self._running.pop(process.pid, None)
            _kill(process)  # done already, or abandoned
            parent.close()
            with contextlib.suppress(Exception):
                process.join(1.0)
                process.close()

    def _exchange(
        self, process: BaseProcess, conn: Connection, kind: Kind, record: dict[str, Any]
    ) -> Encoded:
        game_id = record.get("id")
        try:
            # Sent once the child reads: a record of more than a pipe's buffer sent to a child stuck
            # before reading would hold this thread for ever, past any cap.
            if not conn.poll(BOOT_SECONDS):
                log.error("a process to build a replay did not start in %.0f s: killed", BOOT_SECONDS)
                raise _unavailable(f"no process started in {BOOT_SECONDS:g} s")
            conn.recv()  # "ready"
            conn.send((kind, record))
            if not conn.poll(self.time_cap * WALL_FACTOR):
                log.warning(
                    "the %s of game %s took more than %.0f s to build: its process %s is killed",
                    kind,
                    game_id,
                    self.time_cap * WALL_FACTOR,
                    process.pid,
                )
                raise _unavailable(f"it took more than {self.time_cap * WALL_FACTOR:g} s")
            reply: tuple[Any, ...] = conn.recv()
        except (EOFError, OSError):
            if self._stopped:
                raise _unavailable("the server is stopping") from None
            with contextlib.suppress(Exception):
                process.join(1.0)
            if process.exitcode == -signal.SIGXCPU:
                log.warning(
                    "the %s of game %s took more than %.0f s of CPU to build: its process %s was stopped",
                    kind,
                    game_id,
                    self.time_cap,
                    process.pid,
                )
                raise _unavailable(f"it took more than {self.time_cap:g} s of CPU") from None
            log.error(
                "the process building the %s of game %s died (exit code %s)", kind, game_id, process.exitcode
            )
            raise _unavailable("the process building it died") from None
        if reply[0] == "done":
            return Encoded(reply[1], reply[2], reply[3])
        if reply[0] == "unknown":
            # A game registered in the server process only (a test's, a plug-in without a setup
            # hook): built here, in this thread, as with replay_workers = 0.
            return self.function(kind, record)
        log.error("the %s of game %s could not be built:\n%s", kind, game_id, reply[1])
        raise RoomError(500, "replay_failed", "this game's replay could not be built")

    async def stop(self) -> None:
        """Kill every build under way (each is answered 503) and end the driver threads."""
        with self._lock:
            self._stopped = True
            processes = list(self._running.values())
        for process in processes:
            _kill(process)
        if self._drivers is not None:
            # Each driver ends at once: its process is killed, or it finds the builds stopped.
            await asyncio.to_thread(self._drivers.shutdown, True)


def builds_for(
    workers: int, time_cap: float = TIME_CAP, setup: Sequence[str] = ()
) -> ThreadBuilds | ProcessBuilds:
    """``ServerConfig.replay_workers``: 0 builds in a thread, more in that many processes at once
    (each calling ``setup``, ``ServerConfig.bot_worker_setup``, first)."""
    if workers < 0:
        raise ValueError(f"replay_workers must be 0 or more, got {workers}")
    return ThreadBuilds() if workers == 0 else ProcessBuilds(workers, time_cap, setup=setup)


def replay_child(conn: Connection, function: BuildFunction, setup: list[str], cpu_seconds: float) -> None:
    """In a child process: build what the server sends within ``cpu_seconds`` of CPU, answer the
    bytes, end."""
    # Ctrl-C in a terminal reaches the whole process group: the server stops its builds itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICENESS)  # the event loop wins a contended core, as with the bot workers
    reply: tuple[Any, ...]
    try:
        run_setup(setup)
        conn.send(("ready",))
        kind, record = conn.recv()
    except (EOFError, OSError):
        return  # the server gave the build up before sending it
    # The kernel stops the build (SIGXCPU) once it has had its CPU seconds, however slowly a loaded
    # machine gives them.
    used = resource.getrusage(resource.RUSAGE_SELF)
    limit = math.ceil(used.ru_utime + used.ru_stime + cpu_seconds)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 1))
    try:
        if record.get("game") not in games.names():
            reply = ("unknown",)
        else:
            encoded = function(kind, record)
            reply = ("done", encoded.json, encoded.text, encoded.filename)
    except Exception:
        reply = ("error", traceback.format_exc(limit=-8))
    with contextlib.suppress(EOFError, OSError):
        conn.send(reply)


def _kill(process: BaseProcess) -> None:
    with contextlib.suppress(Exception):
        process.kill()
