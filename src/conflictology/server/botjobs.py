"""The decisions waiting for a bot worker, and the clocks that bound how long they wait.

The decisions wait in fair turns between the addresses that made the rooms and between rooms
(``botshares``): a flood of one address's bots waits behind every other owner's turn, and in its
own turn an owner's quick decisions (heuristics, milliseconds) go before its searches.

Each waiting decision has a clock
(armed once the first worker is ready, so a server's first search does not pay for the fork server's
imports): a search still waiting ``queue_wait`` seconds after it was asked for is played by the same
bot on a short clock (a *quick* search, :data:`QUICK_SECONDS` or less), first in its room's line; so
is, at once, a search the searches already waiting would keep that long (judged from how long
searches have taken lately). A search whose bot keeps no clock, or one asked for when so many quick
searches wait that even :data:`QUICK_FLOOR` each would keep the last past ``queue_wait``, is played by
the room's default level instead. A decision still waiting ``queue_wait + 2 * time_cap`` seconds
(time for a decision under way to end or be cut, and its worker to be replaced) takes the timeout
action.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeAlias

from conflictology import bots
from conflictology.engine import Action, Game, View
from conflictology.server.botshares import QUICK_COST, FairQueue

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
    # Decisions not played as asked, by why (FALLBACKS): for /metrics.
    fallbacks: dict[str, int] = field(default_factory=dict)
    # The decisions asked of a search (``hard``), by how they were played (HOWS): for /metrics.
    searched: dict[str, int] = field(default_factory=dict)

    def fell_back(self, reason: str) -> None:
        if reason not in FALLBACKS:
            raise ValueError(f"a fallback's reason is one of {', '.join(FALLBACKS)}, not {reason!r}")
        self.fallbacks[reason] = self.fallbacks.get(reason, 0) + 1

    def played(self, how: str) -> None:
        if how not in HOWS:
            raise ValueError(f"a search's decision is played as one of {', '.join(HOWS)}, not {how!r}")
        self.searched[how] = self.searched.get(how, 0) + 1


# Why a decision was not played as asked: a search played by the room's default level (it waited
# past queue_wait, the queue would have kept it that long, no worker could start), or the seat's
# timeout action (cut at the time cap, its worker died, no worker in time, the bot raised or its
# view could not be sent).
FALLBACKS = {
    "queue_wait": "a search waited queue_wait for a worker: played by the default level",
    "queue_full": "a search the searches waiting would keep past queue_wait: the default level at once",
    "no_worker": "no worker could start: a search played by the default level in the server process",
    "time_cap": "cut at the time cap (worker killed): the timeout action",
    "worker_lost": "its worker died: the timeout action",
    "expired": "no worker was free in time: the timeout action",
    "failed": "the bot raised, or its view could not be sent: the timeout action",
}


# How a decision asked of a search (``hard``) was played.
HOWS = {
    "search": "by its search, on its own clock",
    "quick": "by its search on a short clock (QUICK_SECONDS or less): the workers were too busy",
    "fell_back": "not by its search: the default level played it, or the seat took its timeout action",
}

# A quick search's clock, a tenth of ``hard``'s: what one worker affords with 50 rooms of ``hard`` bots
# on 2 cores. In Capitol it meets the targets against the outside AI and does about as well
# as the full search against them and ``normal``, though the full search beats it face to face; twice
# the worlds bought nothing measurable there (docs/bots.md, "Hard at scale"). Under the floor, the
# default level.
QUICK_SECONDS = 0.03
QUICK_FLOOR = 0.01
# What the fair turns count as one search (botshares): ``hard``'s clock.
SEARCH_SECONDS = 0.3


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
    owner: str = ""  # whose share it is taken from: the address that made the room (botshares)
    room: str = ""  # the room's code
    mystery: bool = False  # a mystery seat's: counted by neither kind nor level (its level is secret)
    timer: asyncio.TimerHandle | None = None
    late: bool = False  # a search played by the default level (it waited too long)
    quick: bool = False  # a search played on a short clock (it waited too long)
    worth: float = 0.0  # a quick search's share of a turn (botshares): its clock over a search's

    def wanted(self) -> bool:
        return not self.future.done()

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
        # Both kinds, in fair turns between owners and rooms (heuristics first within an owner).
        self._waiting: FairQueue[Job] = FairQueue()
        self.clocks_running = False  # a worker has been ready once: waiting clocks run from then
        self._late_logged = 0.0
        self._late_since_log = 0
        self._search_seconds = 0.0  # how long a search took lately (a moving average), 0 unknown
        self._quick_seconds = 0.0  # how long a quick search took lately in its worker, 0 unknown

    # ---- in and out ------------------------------------------------------------------------------

    def put(self, job: Job) -> None:
        self._waiting.append(job)
        if self.clocks_running:
            self._arm(job)

    def put_back(self, job: Job) -> None:
        """First in its queue again (its worker died before taking it)."""
        self._waiting.appendleft(job)
        if self.clocks_running:
            self._arm(job)

    def next(self) -> Job | None:
        """The next job still wanted, in fair turns, its clock stopped (a worker takes it now)."""
        while (job := self._waiting.popleft()) is not None:
            if not job.future.done():
                self.disarm(job)
                return job
        return None

    def forget(self, job: Job) -> None:
        """A job ended (answered, cut, withdrawn): out of the queues, its clock stopped."""
        self.disarm(job)
        with contextlib.suppress(ValueError):
            self._waiting.remove(job)

    def drain(self) -> Iterator[Job]:
        """Every queued job, taken out of the queues (the pool stops, or no worker could start)."""
        while (job := self._waiting.popleft()) is not None:
            yield job

    def waiting(self) -> tuple[int, int]:
        """Quick and search decisions waiting now; a mystery seat's in neither (the gauges are public:
        counting it by kind would tell whether its secret level searches, as the counters would)."""
        live = [j for j in self._waiting if not j.future.done() and not j.mystery]
        return sum(1 for j in live if not j.search), sum(1 for j in live if j.search)

    # ---- the clocks ------------------------------------------------------------------------------

    def start_clocks(self) -> None:
        """The first worker is ready: the jobs asked for meanwhile start waiting from now."""
        if self.clocks_running:
            return
        self.clocks_running = True
        for queued in list(self._waiting):
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
            self._waiting.remove(job)
        if not job.future.done():
            self.stand_in(job)

    def learn(self, took: float) -> None:
        """A search took ``took`` seconds in a worker."""
        recent = self._search_seconds
        self._search_seconds = took if not recent else 0.8 * recent + 0.2 * took

    def learn_quick(self, took: float) -> None:
        """A quick search took ``took`` seconds in a worker (its clock, and what comes around it: the
        prior, the worlds' set-up, a starved worker's wait for the CPU)."""
        recent = self._quick_seconds
        self._quick_seconds = took if not recent else 0.8 * recent + 0.2 * took

    def expected_wait(self, worker_free: bool, owner: str = "", room: str = "") -> float:
        """How long a search of ``room`` (made by ``owner``) asked for now would wait for a worker,
        judged from the searches it would wait behind in its fair turn (botshares) and how long
        searches have taken lately (0 when a worker is free)."""
        if worker_free or not self._search_seconds:
            return 0.0
        ahead = self._waiting.ahead_of_new(owner, room)
        return (ahead / self.size + 0.5) * self._search_seconds

    def quick_clock(self) -> float | None:
        """The clock of a quick search asked for now: :data:`QUICK_SECONDS`, less when the quick
        searches waiting would keep the workers past ``queue_wait`` at that, None (the default level
        plays) when even :data:`QUICK_FLOOR` would."""
        waiting = sum(1 for j in self._waiting if j.quick and j.wanted())
        if waiting * self._quick_seconds > self.queue_wait * self.size:
            # At the pace quick searches have taken lately (on a starved machine, far past their
            # clocks) the last would not start in time: the default level, rather than the timeout.
            return None
        seconds = min(QUICK_SECONDS, self.queue_wait * self.size / (waiting + 1))
        return seconds if seconds >= QUICK_FLOOR else None

    def stand_in(self, job: Job, reason: str = "queue_wait") -> None:
        """The search, which cannot start in time, is played first in its room's line by the same bot
        on a short clock (:meth:`quick_clock`) or, when it keeps none or the quick ones are too many,
        by the room's default level (a heuristic)."""
        seconds = self.quick_clock()
        quick = None if seconds is None else bots.with_clock(job.level, job.game, seconds)
        if seconds is not None and quick is not None:
            job.level, job.search, job.quick = quick, False, True
            job.worth = max(QUICK_COST, seconds / SEARCH_SECONDS)
            self._note_busy()
            self._waiting.appendleft(job)
            job.timer = asyncio.get_running_loop().call_later(2 * self.time_cap, self._expire, job)
            self._dispatch()
            return
        from conflictology.server.rooms import default_level

        stand_in = default_level(job.game)
        if bots.cost(stand_in, job.game) == "search":
            stand_in = "random"
        if not job.mystery:
            # (Counting a mystery seat's stand-in would tell that it was a search: docs/bots.md.)
            self.counts.fell_back(reason)
            self.counts.late += 1
        job.level, job.search, job.late = stand_in, False, True
        self._note_busy()
        if bots.cost(stand_in, job.game) == "trivial":
            try:
                job.future.set_result(decide(job.game, stand_in, job.seat, job.seed, job.view, job.legal))
            except Exception:
                job.future.set_result(None)
            return
        self._waiting.appendleft(job)
        job.timer = asyncio.get_running_loop().call_later(2 * self.time_cap, self._expire, job)
        self._dispatch()

    def _note_busy(self) -> None:
        """One line a minute at most: how many searches could not start in time, and how they went."""
        self._late_since_log += 1
        now = time.monotonic()
        if now - self._late_logged >= 60.0:
            log.warning(
                "bot workers busy: %d search(es) could not start within %.1f s and were played on a "
                "short clock or by the default level (docs/bots.md)",
                self._late_since_log,
                self.queue_wait,
            )
            self._late_logged, self._late_since_log = now, 0

    def _expire(self, job: Job) -> None:
        if job.future.done():
            return
        self.counts.expired += 1
        self.counts.fell_back("expired")
        log.warning(
            "no bot worker was free for bot %s in %s for %.1f s; the seat takes its timeout action",
            job.level,
            job.where,
            self.queue_wait + 2 * self.time_cap,
        )
        job.future.set_result(None)
