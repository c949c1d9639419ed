"""Bot decisions off the event loop: a pool of worker processes (docs/bots.md, "On a server").

A search bot thinks for tenths of a second of pure Python. In a thread of the server it would still
hold the GIL and stall every room of the process; in a worker process it costs the event loop a
pickled view sent down a pipe and an action read back when the pipe is readable (``add_reader``:
nothing waits on a worker). What the pool guarantees:

* **At most ``workers`` decisions at once**, server-wide: each worker takes one at a time. They are
  made by ``forkserver`` (``spawn`` where there is none), never by ``fork``: the server has threads.
  A fork server that imported the bots and games once makes a replacement worker in milliseconds.
* **A hard cap per decision** (``time_cap``): a worker that has not answered by then is killed
  (SIGKILL) and replaced, and the seat takes its timeout action. A worker that dies (a crash, the
  OOM killer) is logged in one line and replaced; its seat takes the timeout action too.
* **Bounded waiting**: decisions wait in two queues, quick ones (heuristics, milliseconds) served
  before searches. A search that has found no free worker ``queue_wait`` seconds after it was asked
  for is played by the room's default level instead (a heuristic: a little weaker, at once), at the
  head of the quick queue; so is, at once, a search that the searches already waiting would keep
  waiting that long (judged from how long searches have taken lately). A decision still waiting
  ``queue_wait + 2 * time_cap`` after it was asked for (time for a decision under way to end or be
  cut, and its worker to be replaced) takes the timeout action.
* **Trivial bots** (``random``) are decided on the event loop: a pickled view costs more than they do.
* A game or bot the workers do not know (registered at run time in the server process, as the
  tests' toy game is) is decided in the server process, in a thread, as before the pool existed,
  with the same cap on how long the room waits for it.

The workers start with the first decision that needs them (a server whose rooms only play random
bots never starts one) and stop with :meth:`BotPool.stop`, killed: they hold nothing worth saving.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import importlib
import itertools
import logging
import multiprocessing
import os
import pickle
import signal
import sys
import time
import traceback
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from conflictology import bots, games
from conflictology.engine import Action, Game, View

log = logging.getLogger("conflictology.server")

# A worker runs the server's main module again (multiprocessing's rule); preloaded in the fork server
# (see _context) so that costs milliseconds, runpy then warns that it was imported before: expected.
warnings.filterwarnings(
    "ignore", message=r"'[\w.]+' found in sys.modules after import of package", category=RuntimeWarning
)

# Workers run at a lower priority than the server: when a core is contended, the event loop (every
# room's moves) wins it and the searches slow down, never the other way round.
WORKER_NICENESS = 10
# How long the first workers may take to start (the fork server imports the bots and every game
# once, about 1-2 s on a loaded 2-core machine) before decisions fall back to the server process.
BOOT_SECONDS = 30.0
# A worker that fails to start is tried again after this long.
RETRY_SECONDS = 2.0


def default_workers() -> int:
    """One worker per CPU this process may use, less one for the event loop, and at least one (see
    docs/bots.md: on 2 cores, one worker)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, cpus - 1)


# What a job resolves to when the workers do not know its game or bot: decided in this process.
_NOT_IN_WORKER = object()
_UNSENDABLE = object()  # (a job _send could not send: the next one is tried)


@dataclass(eq=False)
class _Job:
    id: int
    game: Game
    level: str
    seat: int
    seed: int
    view: View
    legal: list[Action]
    where: str
    future: asyncio.Future[Any]
    search: bool
    timer: asyncio.TimerHandle | None = None
    late: bool = False  # a search played by the default level (it waited too long)

    def message(self) -> tuple[Any, ...]:
        return (self.id, self.game.name, self.level, self.seat, self.seed, self.view, self.legal)


@dataclass(eq=False)
class _Worker:
    """One worker process and the server's end of its pipe."""

    process: BaseProcess
    conn: Connection
    ready: bool = False
    job: _Job | None = None
    started: float = 0.0  # loop time the current job was sent
    cap: asyncio.TimerHandle | None = None
    gone: bool = False  # killed or found dead: no longer in the pool

    @property
    def idle(self) -> bool:
        return self.ready and self.job is None and not self.gone


@dataclass
class PoolCounts:
    """What the pool did, for tests, benchmarks and logs."""

    sent: int = 0  # decisions sent to a worker
    searches: int = 0  # of which searches
    answered: int = 0
    late: int = 0  # searches played by the default level after waiting too long
    over_cap: int = 0  # workers killed at the time cap
    crashed: int = 0  # workers that died on their own
    expired: int = 0  # decisions that never found a worker in time
    failed: int = 0  # bots that raised
    here: int = 0  # decided in the server process (a game or bot the workers do not know)
    started: int = 0  # worker processes started
    by_level: dict[str, int] = field(default_factory=dict)


class BotPool:
    def __init__(self, workers: int, time_cap: float, queue_wait: float, setup: Sequence[str] = ()) -> None:
        if workers < 1:
            raise ValueError("a bot pool needs at least one worker")
        self.size = workers
        self.time_cap = time_cap
        self.queue_wait = queue_wait
        self.setup = list(setup)
        self.counts = PoolCounts()
        self._workers: list[_Worker] = []
        self._quick: collections.deque[_Job] = collections.deque()
        self._search: collections.deque[_Job] = collections.deque()
        self._ids = itertools.count(1)
        self._unknown: set[tuple[str, str]] = set()  # (game, level) the workers do not know
        self._started = False
        self._ready = False  # a worker has been ready once: waiting clocks run from then
        self._broken = False  # no worker could be started: everything is decided here
        self._stopped = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._late_logged = 0.0
        self._late_since_log = 0
        self._search_seconds = 0.0  # how long a search took lately (a moving average), 0 unknown

    # ---- asking ----------------------------------------------------------------------------------

    async def decide(
        self, game: Game, level: str, seat: int, seed: int, view: View, legal: list[Action], where: str
    ) -> Action | None:
        """The action of ``level`` for ``seat``, or None when the seat should take its timeout
        action (the decision was cut at the cap, its worker died, the bot raised: already logged).
        Cancelling the caller withdraws the decision."""
        if self._stopped:
            raise asyncio.CancelledError
        kind = bots.cost(level, game)
        if kind == "trivial":
            try:
                return _decide(game, level, seat, seed, view, legal)
            except Exception:
                self.counts.failed += 1
                log.exception("bot %s failed in %s; the seat takes its timeout action", level, where)
                return None
        if self._broken and kind == "search":
            # No worker yet: a search in a thread here would hold the GIL against every room (the
            # very stall the pool exists to prevent); the room's default level plays instead.
            from conflictology.server.rooms import default_level

            level = default_level(game)
            self.counts.late += 1
        if self._broken or (game.name, level) in self._unknown:
            return await self._decide_here(game, level, seat, seed, view, legal, where)
        loop = asyncio.get_running_loop()
        job = _Job(
            next(self._ids), game, level, seat, seed, view, legal, where,
            loop.create_future(), kind == "search",
        )  # fmt: skip
        job.future.add_done_callback(lambda _f: self._forget(job))
        self._start()
        if job.search and self._ready and self._expected_wait() > self.queue_wait:
            self._stand_in(job)  # it would only wait to be played by the stand-in anyway
        else:
            (self._search if job.search else self._quick).append(job)
            if self._ready:
                self._arm(job)
            self._dispatch()
        result = await job.future
        if result is _NOT_IN_WORKER:
            return await self._decide_here(game, job.level, seat, seed, view, legal, where)
        return result  # type: ignore[no-any-return]

    async def _decide_here(
        self, game: Game, level: str, seat: int, seed: int, view: View, legal: list[Action], where: str
    ) -> Action | None:
        # In a thread (the old way, and the GIL's): only for bots and games the server registered
        # at run time, which the workers cannot know. The room waits no longer than the cap.
        self.counts.here += 1
        try:
            return await asyncio.wait_for(
                asyncio.to_thread(_decide, game, level, seat, seed, view, legal), self.time_cap
            )
        except TimeoutError:
            log.warning(
                "bot %s took over %.1f s in %s (in the server process); the seat takes its timeout action",
                level,
                self.time_cap,
                where,
            )
        except Exception:
            self.counts.failed += 1
            log.exception("bot %s failed in %s; the seat takes its timeout action", level, where)
        return None

    # ---- the queues ------------------------------------------------------------------------------

    def _arm(self, job: _Job) -> None:
        """Start a queued job's waiting clock: when it is asked for, or, for a job asked for while
        the first workers were starting, when the first one is ready (a server's first search does
        not pay for the fork server's imports)."""
        loop = asyncio.get_running_loop()
        if job.search:
            job.timer = loop.call_later(self.queue_wait, self._too_late, job)
        else:
            job.timer = loop.call_later(self.queue_wait + 2 * self.time_cap, self._expire, job)

    def _forget(self, job: _Job) -> None:
        if job.timer is not None:
            job.timer.cancel()
            job.timer = None
        for queue in (self._quick, self._search):
            with contextlib.suppress(ValueError):
                queue.remove(job)

    def _too_late(self, job: _Job) -> None:
        """A search still waiting for a worker ``queue_wait`` after it was asked for."""
        with contextlib.suppress(ValueError):
            self._search.remove(job)
        if not job.future.done():
            self._stand_in(job)

    def _expected_wait(self) -> float:
        """How long a search asked for now would wait for a worker, judged from the searches
        waiting and how long searches have taken lately (0 when a worker is free)."""
        if any(w.idle for w in self._workers) or not self._search_seconds:
            return 0.0
        waiting = sum(1 for j in self._search if not j.future.done())
        return (waiting / self.size + 0.5) * self._search_seconds

    def _stand_in(self, job: _Job) -> None:
        """The search is played by the room's default level instead (a heuristic), first in line."""
        from conflictology.server.rooms import default_level

        stand_in = default_level(job.game)
        if bots.cost(stand_in, job.game) == "search":
            stand_in = "random"
        job.level, job.search, job.late = stand_in, False, True
        self.counts.late += 1
        self._late_since_log += 1
        now = time.monotonic()
        if now - self._late_logged >= 60.0:
            log.warning(
                "bot workers busy: %d search(es) could not start within %.1f s and were played as %s "
                "(docs/bots.md)",
                self._late_since_log,
                self.queue_wait,
                stand_in,
            )
            self._late_logged, self._late_since_log = now, 0
        if bots.cost(stand_in, job.game) == "trivial":
            try:
                job.future.set_result(_decide(job.game, stand_in, job.seat, job.seed, job.view, job.legal))
            except Exception:
                job.future.set_result(None)
            return
        self._quick.appendleft(job)
        job.timer = asyncio.get_running_loop().call_later(2 * self.time_cap, self._expire, job)
        self._dispatch()

    def _expire(self, job: _Job) -> None:
        if job.future.done():
            return
        self.counts.expired += 1
        log.warning(
            "no bot worker was free for bot %s in %s for %.1f s; the seat takes its timeout action",
            job.level,
            job.where,
            self.queue_wait + 2 * self.time_cap,
        )
        job.future.set_result(None)

    def _next_job(self) -> _Job | None:
        for queue in (self._quick, self._search):
            while queue:
                job = queue.popleft()
                if not job.future.done():
                    return job
        return None

    def _dispatch(self) -> None:
        for worker in list(self._workers):  # a send that finds a worker dead retires it
            if not worker.idle:
                continue
            while True:
                job = self._next_job()
                if job is None:
                    return
                if self._send(worker, job) is not _UNSENDABLE:
                    break

    def _send(self, worker: _Worker, job: _Job) -> object:
        if job.timer is not None:
            job.timer.cancel()
            job.timer = None
        try:
            worker.conn.send(job.message())
        except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
            # This job cannot be sent (a view that does not pickle): the seat takes its timeout action.
            self.counts.failed += 1
            log.error("bot %s's decision in %s could not be sent to a worker", job.level, job.where)
            if not job.future.done():
                job.future.set_result(None)
            return _UNSENDABLE
        except (OSError, ValueError):
            # It died between two decisions: the job goes back first in its queue.
            (self._search if job.search else self._quick).appendleft(job)
            if self._ready:
                self._arm(job)
            self._lost(worker, "its pipe is closed")
            return None
        loop = asyncio.get_running_loop()
        worker.job, worker.started = job, loop.time()
        worker.cap = loop.call_later(self.time_cap, self._over_cap, worker)
        self.counts.sent += 1
        self.counts.searches += job.search
        self.counts.by_level[job.level] = self.counts.by_level.get(job.level, 0) + 1
        return None

    # ---- the workers -----------------------------------------------------------------------------

    def _start(self) -> None:
        if self._started or self._stopped:
            return
        self._started = True
        for _ in range(self.size):
            self._launch()
        self._spawn_task(self._watch_boot())

    def _spawn_task(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _watch_boot(self) -> None:
        await asyncio.sleep(BOOT_SECONDS)
        if self._ready or self._stopped:
            return
        log.error(
            "no bot worker started in %.0f s; bots decide in the server process (docs/bots.md)", BOOT_SECONDS
        )
        self._broken = True
        for queue in (self._quick, self._search):
            while queue:
                job = queue.popleft()
                if not job.future.done():
                    job.future.set_result(_NOT_IN_WORKER)

    def _launch(self, delay: float = 0.0) -> None:
        self._spawn_task(self._launch_one(delay))

    async def _launch_one(self, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        if self._stopped:
            return
        context = _context()
        parent, child = context.Pipe()
        process = context.Process(
            target=worker_main, args=(child, self.setup), name="conflictology-bot-worker", daemon=True
        )
        # Starting blocks until the fork server has forked (and, the first time, imported
        # everything): in a thread, not on the loop.
        starting = asyncio.ensure_future(asyncio.to_thread(process.start))
        try:
            await asyncio.shield(starting)
        except asyncio.CancelledError:
            # The pool stops. The thread still needs the child's end of the pipe (it passes it to
            # the fork server): everything is closed, and a process started after all killed, then.
            def abandon(_started: object) -> None:
                _kill(process)
                child.close()
                parent.close()

            starting.add_done_callback(abandon)
            raise
        except Exception:
            child.close()
            parent.close()
            log.exception("could not start a bot worker; trying again in %.0f s", RETRY_SECONDS)
            if not self._stopped:
                self._launch(RETRY_SECONDS)
            return
        child.close()  # the worker's end: the worker's pipe closes when the worker dies
        if self._stopped:
            _kill(process)
            parent.close()
            return
        self.counts.started += 1
        worker = _Worker(process, parent)
        self._workers.append(worker)
        loop = asyncio.get_running_loop()
        loop.add_reader(parent.fileno(), self._readable, worker)
        loop.add_reader(process.sentinel, self._exited, worker)

    def _readable(self, worker: _Worker) -> None:
        try:
            message = worker.conn.recv()
        except (EOFError, OSError):
            self._lost(worker, "its pipe closed")
            return
        kind = message[0]
        if kind == "ready":
            worker.ready = True
            if self._broken:
                log.warning("a bot worker is ready at last: bots decide in workers again")
                self._broken = False
            if not self._ready:
                self._ready = True
                for queued in [*self._quick, *self._search]:
                    self._arm(queued)
            self._dispatch()
            return
        job = worker.job
        if job is None or message[1] != job.id:
            return
        worker.job = None
        if worker.cap is not None:
            worker.cap.cancel()
            worker.cap = None
        self.counts.answered += 1
        if job.search and kind == "done":
            took = asyncio.get_running_loop().time() - worker.started
            recent = self._search_seconds
            self._search_seconds = took if not recent else 0.8 * recent + 0.2 * took
        if not job.future.done():
            if kind == "done":
                job.future.set_result(message[2])
            elif kind == "unknown":
                self._unknown.add((job.game.name, job.level))
                job.future.set_result(_NOT_IN_WORKER)
            else:
                self.counts.failed += 1
                log.error(
                    "bot %s failed in %s; the seat takes its timeout action\n%s",
                    job.level,
                    job.where,
                    message[2],
                )
                job.future.set_result(None)
        self._dispatch()

    def _over_cap(self, worker: _Worker) -> None:
        job = worker.job
        if job is None or worker.gone:
            return
        self.counts.over_cap += 1
        log.warning(
            "bot %s in %s did not answer in %.1f s: worker %s killed and replaced; the seat takes its "
            "timeout action",
            job.level,
            job.where,
            self.time_cap,
            worker.process.pid,
        )
        self._retire(worker)
        if not job.future.done():
            job.future.set_result(None)
        self._launch()

    def _exited(self, worker: _Worker) -> None:
        self._lost(worker, "it exited")

    def _lost(self, worker: _Worker, why: str) -> None:
        """A worker died on its own (not killed by the pool)."""
        if worker.gone:
            return
        job = worker.job
        code = worker.process.exitcode
        self._retire(worker)
        if self._stopped:
            return
        self.counts.crashed += 1
        if job is not None and not job.future.done():
            log.error(
                "bot worker %s died (%s, exit code %s) deciding for bot %s in %s; replaced, and the seat "
                "takes its timeout action",
                worker.process.pid,
                why,
                code,
                job.level,
                job.where,
            )
            job.future.set_result(None)
        else:
            log.error("bot worker %s died (%s, exit code %s); replaced", worker.process.pid, why, code)
        self._launch()

    def _retire(self, worker: _Worker, reap: bool = True) -> None:
        """Take a worker out of the pool, kill it and close its pipe (without waiting for it)."""
        worker.gone = True
        if worker.cap is not None:
            worker.cap.cancel()
            worker.cap = None
        with contextlib.suppress(ValueError):
            self._workers.remove(worker)
        loop = asyncio.get_running_loop()
        with contextlib.suppress(Exception):
            loop.remove_reader(worker.conn.fileno())
        with contextlib.suppress(Exception):
            loop.remove_reader(worker.process.sentinel)
        _kill(worker.process)
        worker.conn.close()
        if reap:
            # Its exit status is collected (and its last file descriptors closed) once it is gone.
            with contextlib.suppress(Exception):
                loop.add_reader(worker.process.sentinel, self._reap, worker.process)

    def _reap(self, process: BaseProcess) -> None:
        loop = asyncio.get_running_loop()
        with contextlib.suppress(Exception):
            loop.remove_reader(process.sentinel)
        with contextlib.suppress(Exception):
            process.join(0)
            process.close()

    # ---- stopping --------------------------------------------------------------------------------

    async def stop(self) -> None:
        """Withdraw every decision and kill every worker; returns at once (within a second)."""
        if self._stopped:
            return
        self._stopped = True
        for queue in (self._quick, self._search):
            while queue:
                queue.popleft().future.cancel()
        workers = list(self._workers)
        for worker in workers:
            if worker.job is not None:
                worker.job.future.cancel()
            self._retire(worker, reap=False)
        for task in list(self._tasks):
            task.cancel()
        if workers:
            await asyncio.to_thread(_wait_gone, [w.process for w in workers], 1.0)

    def stats(self) -> dict[str, int]:
        """Now: workers running, busy, and decisions waiting in each queue."""
        return {
            "workers": len(self._workers),
            "busy": sum(1 for w in self._workers if w.job is not None),
            "queued_quick": sum(1 for j in self._quick if not j.future.done()),
            "queued_search": sum(1 for j in self._search if not j.future.done()),
        }

    def totals(self) -> dict[str, int]:
        """Since the start: the counters of :class:`PoolCounts` (for ``/metrics``)."""
        counts = self.counts
        return {
            "sent": counts.sent,
            "searches": counts.searches,
            "late": counts.late,
            "over_cap": counts.over_cap,
            "crashed": counts.crashed,
            "expired": counts.expired,
            "failed": counts.failed,
            "here": counts.here,
            "started": counts.started,
        }


def _kill(process: BaseProcess) -> None:
    with contextlib.suppress(Exception):
        process.kill()


def _wait_gone(processes: list[BaseProcess], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for process in processes:
        with contextlib.suppress(Exception):
            process.join(max(0.0, deadline - time.monotonic()))
            process.close()


def _decide(game: Game, level: str, seat: int, seed: int, view: View, legal: list[Action]) -> Action:
    return bots.make(level, game, seat, seed).act(view, legal)


_context_cache: Any = None


def _context() -> Any:
    """The multiprocessing context of the workers: a fork server that imported the bots, every game
    and the main module once (each worker is a fork of it), or ``spawn`` where there is none."""
    global _context_cache
    if _context_cache is None:
        context: Any
        if "forkserver" in multiprocessing.get_all_start_methods():
            context = multiprocessing.get_context("forkserver")
            preload = [__name__, *(games.module_name(name) for name in games.names())]
            # Each worker runs the server's main module again (multiprocessing's rule: it must keep
            # its work under ``if __name__ == "__main__":``); imported once here, it costs a worker
            # only its own lines (``python -m conflictology.cli``, ``conflictology serve``).
            main = sys.modules.get("__main__")
            spec = getattr(main, "__spec__", None)
            preload.append(spec.name if spec is not None and spec.name else "conflictology.cli")
            context.set_forkserver_preload(preload)
        else:
            context = multiprocessing.get_context("spawn")
        _context_cache = context
    return _context_cache


# ---- in the worker -------------------------------------------------------------------------------


def worker_main(conn: Connection, setup: list[str]) -> None:
    """A worker: decide each job received, until the server closes the pipe."""
    # Ctrl-C in a terminal reaches the whole process group: the server stops its workers itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICENESS)
    for hook in setup:
        module, _, function = hook.partition(":")
        loaded = importlib.import_module(module)
        if function:
            getattr(loaded, function)()
    for name in games.names():  # imported now, not on the first decision's clock
        with contextlib.suppress(Exception):
            games.get(name)
    try:
        conn.send(("ready", os.getpid()))
    except (EOFError, OSError):
        return  # the server stopped while this worker was starting
    while True:
        try:
            job_id, game_name, level, seat, seed, view, legal = conn.recv()
        except (EOFError, OSError):
            return  # the server is gone
        reply: tuple[Any, ...]
        try:
            game = games.get(game_name) if game_name in games.names() else None
            if game is None or not bots.is_offered(level, game):
                reply = ("unknown", job_id)
            else:
                reply = ("done", job_id, _decide(game, level, seat, seed, view, legal))
        except Exception:
            reply = ("error", job_id, traceback.format_exc(limit=-8))
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return
