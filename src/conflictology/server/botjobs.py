"""The decisions waiting for a bot worker, and the clocks that bound how long they wait.

Two queues: quick decisions (heuristics, milliseconds) are served before searches, so a room whose
bot answers at once is never stuck behind another room's search. Each waiting decision has a clock
(armed once the first worker is ready, so a server's first search does not pay for the fork server's
imports): a search still waiting ``queue_wait`` seconds after it was asked for is played by the
room's default level instead, at the head of the quick queue; so is, at once, a search the searches
already waiting would keep that long (judged from how long searches have taken lately). A decision
still waiting ``queue_wait + 2 * time_cap`` seconds (time for a decision under way to end or be cut,
and its worker to be replaced) takes the timeout action.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import enum
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeAlias

from conflictology import bots
from conflictology.engine import Action, Game, View

log = logging.getLogger("conflictology.server")


class Elsewhere(enum.Enum):
    """What a job resolves to when the workers do not know its game or bot (registered at run time
    in the server process): it is decided in the server process instead."""

    NOT_IN_WORKER = "not in worker"


NOT_IN_WORKER = Elsewhere.NOT_IN_WORKER

# A job's end: the action, None (the seat takes its timeout action), or "decide it in the server".
Outcome: TypeAlias = Action | Elsewhere | None
# What a worker is sent (and unpacks in botworker.worker_main).
JobMessage: TypeAlias = tuple[int, str, str, int, int, View, list[Action]]


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


@dataclass(eq=False)
class Job:
    """One decision asked of the pool."""

    id: int
    game: Game
    level: str
    seat: int
    seed: int
    view: View
    legal: list[Action]
    where: str
    future: asyncio.Future[Outcome]
    search: bool
    timer: asyncio.TimerHandle | None = None
    late: bool = False  # a search played by the default level (it waited too long)

    def message(self) -> JobMessage:
        return (self.id, self.game.name, self.level, self.seat, self.seed, self.view, self.legal)


def decide(game: Game, level: str, seat: int, seed: int, view: View, legal: list[Action]) -> Action:
    """One decision of ``level`` for ``seat``, wherever it runs (a worker, a thread, the loop)."""
    return bots.make(level, game, seat, seed).act(view, legal)


class JobQueue:
    """The two queues and their clocks. ``dispatch`` is called when a job was put first in line by
    a clock (a stand-in), so a free worker takes it."""

    def __init__(
        self, size: int, time_cap: float, queue_wait: float, counts: PoolCounts, dispatch: Callable[[], None]
    ) -> None:
        self.size = size  # workers that serve the queue
        self.time_cap = time_cap
        self.queue_wait = queue_wait
        self.counts = counts
        self._dispatch = dispatch
        self._quick: collections.deque[Job] = collections.deque()
        self._search: collections.deque[Job] = collections.deque()
        self.clocks_running = False  # a worker has been ready once: waiting clocks run from then
        self._late_logged = 0.0
        self._late_since_log = 0
        self._search_seconds = 0.0  # how long a search took lately (a moving average), 0 unknown

    # ---- in and out ------------------------------------------------------------------------------

    def put(self, job: Job) -> None:
        (self._search if job.search else self._quick).append(job)
        if self.clocks_running:
            self._arm(job)

    def put_back(self, job: Job) -> None:
        """First in its queue again (its worker died before taking it)."""
        (self._search if job.search else self._quick).appendleft(job)
        if self.clocks_running:
            self._arm(job)

    def next(self) -> Job | None:
        """The next job still wanted, quick ones first, its clock stopped (a worker takes it now)."""
        for queue in (self._quick, self._search):
            while queue:
                job = queue.popleft()
                if not job.future.done():
                    self.disarm(job)
                    return job
        return None

    def forget(self, job: Job) -> None:
        """A job ended (answered, cut, withdrawn): out of the queues, its clock stopped."""
        self.disarm(job)
        for queue in (self._quick, self._search):
            with contextlib.suppress(ValueError):
                queue.remove(job)

    def drain(self) -> Iterator[Job]:
        """Every queued job, taken out of the queues (the pool stops, or no worker could start)."""
        for queue in (self._quick, self._search):
            while queue:
                yield queue.popleft()

    def waiting(self) -> tuple[int, int]:
        """Quick and search decisions waiting now."""
        return (
            sum(1 for j in self._quick if not j.future.done()),
            sum(1 for j in self._search if not j.future.done()),
        )

    # ---- the clocks ------------------------------------------------------------------------------

    def start_clocks(self) -> None:
        """The first worker is ready: the jobs asked for meanwhile start waiting from now."""
        if self.clocks_running:
            return
        self.clocks_running = True
        for queued in [*self._quick, *self._search]:
            self._arm(queued)

    def _arm(self, job: Job) -> None:
        loop = asyncio.get_running_loop()
        if job.search:
            job.timer = loop.call_later(self.queue_wait, self._too_late, job)
        else:
            job.timer = loop.call_later(self.queue_wait + 2 * self.time_cap, self._expire, job)

    def disarm(self, job: Job) -> None:
        if job.timer is not None:
            job.timer.cancel()
            job.timer = None

    def _too_late(self, job: Job) -> None:
        """A search still waiting for a worker ``queue_wait`` after it was asked for."""
        with contextlib.suppress(ValueError):
            self._search.remove(job)
        if not job.future.done():
            self.stand_in(job)

    def learn(self, took: float) -> None:
        """A search took ``took`` seconds in a worker."""
        recent = self._search_seconds
        self._search_seconds = took if not recent else 0.8 * recent + 0.2 * took

    def expected_wait(self, worker_free: bool) -> float:
        """How long a search asked for now would wait for a worker, judged from the searches
        waiting and how long searches have taken lately (0 when a worker is free)."""
        if worker_free or not self._search_seconds:
            return 0.0
        waiting = sum(1 for j in self._search if not j.future.done())
        return (waiting / self.size + 0.5) * self._search_seconds

    def stand_in(self, job: Job) -> None:
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
                job.future.set_result(decide(job.game, stand_in, job.seat, job.seed, job.view, job.legal))
            except Exception:
                job.future.set_result(None)
            return
        self._quick.appendleft(job)
        job.timer = asyncio.get_running_loop().call_later(2 * self.time_cap, self._expire, job)
        self._dispatch()

    def _expire(self, job: Job) -> None:
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
