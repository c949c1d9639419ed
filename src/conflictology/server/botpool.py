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
* **Fair shares** (``botshares``): decisions wait in turns between the addresses that made the
  rooms, and between each address's rooms; in its turn an address is served one search's worth, its
  quick decisions (heuristics, milliseconds) first. One address's many rooms get one share.
* **Bounded waiting**: a search that has found no free worker ``queue_wait`` seconds after it was
  asked for is played by the same bot on a short clock (a *quick* search: 30 ms, less when many
  wait; in Capitol weaker than ``hard``'s full search, stronger than ``normal``), first in its
  room's line; so is, at once, a search that the decisions ahead of it in the turns would keep
  waiting that long (judged from how long searches have taken lately). One whose bot keeps no
  clock, or too many quick searches waiting, and the room's default level plays instead (a
  heuristic: weaker, at once). Every decision asked of a search is counted by how it was played
  (``searched``). A decision still waiting
  ``queue_wait + 2 * time_cap`` after it was asked for (time for a decision under way to end or be
  cut, and its worker to be replaced) takes the timeout action.
* **Trivial bots** (``random``) are decided on the event loop: a pickled view costs more than they do.
* A game or bot the workers do not know (registered at run time in the server process, as the
  tests' toy game is) is decided in the server process, in a thread, as before the pool existed,
  with the same cap on how long the room waits for it.

The workers start with the first decision that needs them (a server whose rooms only play random
bots never starts one) and stop with :meth:`BotPool.stop`, killed: they hold nothing worth saving.

Here, where each decision goes; the pieces it goes through, one concept each: ``botjobs`` (the
queue and the clocks that bound waiting), ``botshares`` (the fair turns), ``botprocesses`` (the
worker processes' lifecycle: launch, watch, cut at the cap, reap) and ``botworker`` (what runs
inside a worker).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from conflictology import bots
from conflictology.engine import Action, Game, View
from conflictology.server.botjobs import FALLBACKS, HOWS, NOT_IN_WORKER, Job, JobQueue, PoolCounts, decide
from conflictology.server.botprocesses import Sent, WorkerProcesses

__all__ = ["BotPool", "PoolCounts", "Share", "default_workers"]

log = logging.getLogger("conflictology.server")


@dataclass(frozen=True)
class Share:
    """Whose turn a decision waits in (botshares): the address that made its room (an opaque label,
    ``Room.creator``) and the room; and whether it is a mystery seat's (its level is secret: it is
    counted by neither kind nor level)."""

    owner: str
    room: str
    mystery: bool = False


def default_workers() -> int:
    """One worker per CPU this process may use, less one for the event loop, and at least one (see
    docs/bots.md: on 2 cores, one worker)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, cpus - 1)


class BotPool:
    """Where a server's bots decide: the loop, the workers (through the queue), or this process."""

    def __init__(self, workers: int, time_cap: float, queue_wait: float, setup: Sequence[str] = ()) -> None:
        if workers < 1:
            raise ValueError("a bot pool needs at least one worker")
        self.size = workers
        self.time_cap = time_cap
        self.queue_wait = queue_wait
        self.setup = list(setup)
        self.counts = PoolCounts()
        self._queue = JobQueue(workers, time_cap, queue_wait, self.counts, self._dispatch)
        self._processes = WorkerProcesses(workers, time_cap, setup, self.counts, self)
        self._ids = itertools.count(1)
        self._unknown: set[tuple[str, str]] = set()  # (game, level) the workers do not know
        self._broken = False  # no worker could be started: everything is decided here
        # How long a search took lately from being asked for to its answer, its wait for a worker
        # included (a moving average; 0 unknown): a mystery seat is paced by it (scheduler.py).
        self._search_latency = 0.0
        self._stopped = False

    # ---- asking ----------------------------------------------------------------------------------

    async def decide(
        self,
        game: Game,
        level: str,
        seat: int,
        seed: int,
        view: View,
        legal: list[Action],
        where: str,
        share: Share | None = None,
    ) -> Action | None:
        """The action of ``level`` for ``seat``, or None when the seat should take its timeout
        action (the decision was cut at the cap, its worker died, the bot raised: already logged).
        ``share`` says whose turn the decision waits in (botshares: the room and the address that
        made it; without one, a line of its own). Cancelling the caller withdraws the decision."""
        share = share or Share(owner=where, room=where)
        if self._stopped:
            raise asyncio.CancelledError
        kind = bots.cost(level, game)
        if kind == "trivial":
            try:
                return decide(game, level, seat, seed, view, legal)
            except Exception:
                self.counts.failed += 1
                self.counts.fell_back("failed")
                log.exception("bot %s failed in %s; the seat takes its timeout action", level, where)
                return None
        if self._broken and kind == "search":
            # No worker yet: a search in a thread here would hold the GIL against every room (the
            # very stall the pool exists to prevent); the room's default level plays instead.
            from conflictology.server.rooms import default_level

            level = default_level(game)
            if not share.mystery:
                self.counts.late += 1
                self.counts.fell_back("no_worker")
                self.counts.played("fell_back")
        if self._broken or (game.name, level) in self._unknown:
            counted = self._broken  # (a worker may become ready meanwhile)
            action = await self._decide_here(game, level, seat, seed, view, legal, where)
            if kind == "search" and not counted and not share.mystery:
                self.counts.played("search" if action is not None else "fell_back")
            return action
        loop = asyncio.get_running_loop()
        job = Job(
            next(self._ids), game, level, seat, seed, view, legal, where,
            loop.create_future(), kind == "search", owner=share.owner, room=share.room, mystery=share.mystery,
        )  # fmt: skip
        job.future.add_done_callback(lambda _f: self._queue.forget(job))
        self._processes.start()
        queue = self._queue
        idle = self._processes.any_idle()
        waiting = queue.expected_wait(idle, share.owner, share.room) if queue.clocks_running else 0.0
        if job.search and waiting > self.queue_wait:
            queue.stand_in(job, "queue_full")  # it would only wait to be played by the stand-in anyway
        else:
            queue.put(job)
            self._dispatch()
        asked = loop.time()
        result = await job.future
        if job.search and result is not None and result is not NOT_IN_WORKER:
            took, recent = loop.time() - asked, self._search_latency
            self._search_latency = took if not recent else 0.8 * recent + 0.2 * took
        if result is NOT_IN_WORKER:
            result = await self._decide_here(game, job.level, seat, seed, view, legal, where)
        if kind == "search" and not share.mystery:
            # (A mystery seat's level is secret: counting it here would tell that it searches.)
            self.counts.played(_how(job, result))
        return result

    async def _decide_here(
        self, game: Game, level: str, seat: int, seed: int, view: View, legal: list[Action], where: str
    ) -> Action | None:
        # In a thread (the old way, and the GIL's): only for bots and games the server registered
        # at run time, which the workers cannot know. The room waits no longer than the cap.
        self.counts.here += 1
        try:
            return await asyncio.wait_for(
                asyncio.to_thread(decide, game, level, seat, seed, view, legal), self.time_cap
            )
        except TimeoutError:
            self.counts.fell_back("time_cap")
            log.warning(
                "bot %s took over %.1f s in %s (in the server process); the seat takes its timeout action",
                level,
                self.time_cap,
                where,
            )
        except Exception:
            self.counts.failed += 1
            self.counts.fell_back("failed")
            log.exception("bot %s failed in %s; the seat takes its timeout action", level, where)
        return None

    def search_latency(self) -> float:
        """How long a search took lately from being asked for to its answer, waiting included (0
        before the first)."""
        return self._search_latency

    def think_seconds(self, level: str, game: Game) -> float:
        """How long a decision of ``level`` may think at most, as far as its spec says: its search's
        clock (``seconds``), the time cap for a search with none, 0 for a heuristic or less."""
        if bots.cost(level, game) != "search":
            return 0.0
        seconds = bots.parse_spec(level)[1].get("seconds")
        if isinstance(seconds, int | float) and seconds > 0:
            return min(float(seconds), self.time_cap)
        return self.time_cap

    def _dispatch(self) -> None:
        """Every idle worker takes the next job waiting."""
        for worker in list(self._processes.workers):  # a send that finds a worker dead retires it
            if not worker.idle:
                continue
            while True:
                job = self._queue.next()
                if job is None:
                    return
                sent = self._processes.send(worker, job)
                if sent is Sent.UNSENDABLE:
                    # A view that does not pickle: the seat takes its timeout action, the next job
                    # is tried on the same worker.
                    self.counts.failed += 1
                    self.counts.fell_back("failed")
                    log.error("bot %s's decision in %s could not be sent to a worker", job.level, job.where)
                    if not job.future.done():
                        job.future.set_result(None)
                    continue
                if sent is Sent.WORKER_LOST:
                    self._queue.put_back(job)
                break

    # ---- what the workers say (botprocesses.Listener) --------------------------------------------

    def worker_ready(self) -> None:
        if self._broken:
            log.warning("a bot worker is ready at last: bots decide in workers again")
            self._broken = False
        self._queue.start_clocks()
        self._dispatch()

    def answered(self, job: Job, kind: str, payload: object, took: float) -> None:
        if job.search and kind == "done":
            self._queue.learn(took)
        elif job.quick and kind == "done":
            self._queue.learn_quick(took)
        if not job.future.done():
            if kind == "done":
                job.future.set_result(cast(Action, payload))
            elif kind == "unknown":
                self._unknown.add((job.game.name, job.level))
                job.future.set_result(NOT_IN_WORKER)
            else:
                self.counts.failed += 1
                self.counts.fell_back("failed")
                log.error(
                    "bot %s failed in %s; the seat takes its timeout action\n%s",
                    job.level,
                    job.where,
                    payload,
                )
                job.future.set_result(None)
        self._dispatch()

    def boot_failed(self) -> None:
        self._broken = True
        for job in self._queue.drain():
            if not job.future.done():
                job.future.set_result(NOT_IN_WORKER)

    # ---- stopping and counting -------------------------------------------------------------------

    async def stop(self) -> None:
        """Withdraw every decision and kill every worker; returns at once (within a second)."""
        if self._stopped:
            return
        self._stopped = True
        for job in self._queue.drain():
            job.future.cancel()
        await self._processes.stop()

    def stats(self) -> dict[str, int]:
        """Now: workers running, busy, and decisions waiting in each queue."""
        quick, search = self._queue.waiting()
        return {
            "workers": len(self._processes.workers),
            "busy": self._processes.busy(),
            "queued_quick": quick,
            "queued_search": search,
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

    def searched(self) -> dict[str, int]:
        """Since the start: the decisions asked of a search (``hard``), by how they were played
        (botjobs.HOWS), every way present."""
        return {how: self.counts.searched.get(how, 0) for how in HOWS}

    def fallbacks(self) -> dict[str, int]:
        """Since the start: decisions not played as asked, by reason (botjobs.FALLBACKS), every
        reason present (a counter that exists from the start reads 0, not absent)."""
        return {reason: self.counts.fallbacks.get(reason, 0) for reason in FALLBACKS}


def _how(job: Job, result: object) -> str:
    """How a decision asked of a search was played (botjobs.HOWS)."""
    if result is None or job.late:
        return "fell_back"
    return "quick" if job.quick else "search"
