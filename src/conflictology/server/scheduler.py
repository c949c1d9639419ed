"""What happens in a room without anyone asking: its decision clock, the end of a hold, bot turns
and the grace period of disconnected players.

After every change of a room the hub asks for its schedule (:meth:`Scheduler.schedule`); each piece
of work is bound to the room's ``seq`` (or the deadline it waits for) and goes through the same
change as a player's move, which re-checks it: a bot turn or a clock that lost a race does nothing.
While the rooms' store is unavailable the work is tried again until it is taken. With a shared
backend only the room's owner runs its schedule. Time comes from a :class:`Clock` (wall-clock epoch
seconds, as deadlines are shown to clients), so tests can run it by hand.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Protocol

from conflictology.server import practice
from conflictology.server.backend import BackendUnavailable, RoomBackend
from conflictology.server.botpool import BotPool, Share
from conflictology.server.config import ServerConfig
from conflictology.server.rooms import Room, RoomError, RoomStatus, mystery_pool, seat_level

log = logging.getLogger("conflictology.server")

# A search overruns its clock by its last step and a worker's round trip (a `hard` search on a 0.3 s
# clock answers in about 0.28-0.33 s on a loaded 2-core machine): a mystery bot's pace leaves room
# for that, so a search drawn for it rarely answers later than the pace, and the others never.
MYSTERY_PACE_FACTOR = 1.25
MYSTERY_PACE_SLACK = 0.05

# A change through the backend, durable once it returns (Hub.change).
Change = Callable[[str, Callable[[Room], Any]], Awaitable[tuple[Room, Any]]]


class Clock(Protocol):
    """Wall-clock time and a way to wait for it."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class WallClock:
    """The real one. The event loop's clock is monotonic and deadlines are epoch seconds (clients
    show them): waits are re-checked against the wall clock (see ``_timer``)."""

    def now(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class AtDeadline:
    """Work that waits for a wall-clock deadline (the decision clock): a timer handle on the event
    loop until then, and its task only once the deadline has come. Nearly every clock is answered
    before it runs out, one a move: a task for each cost its creation, a step to start waiting and
    a step to be cancelled, where a handle costs one cancelled entry in the loop's heap. A room's
    next clock takes over the handle of the one answered (``retarget``): a handle due no later than
    the new deadline is kept, and when it comes early it waits again for the rest."""

    __slots__ = ("_due", "_handle", "_loop", "_start", "task")

    def __init__(self, delay: float, start: Callable[[], asyncio.Task[None]]) -> None:
        self.task: asyncio.Task[None] | None = None
        self._loop = asyncio.get_running_loop()
        self._start = start
        self._due = self._loop.time() + delay
        self._handle: asyncio.TimerHandle | None = self._loop.call_at(self._due, self._fire)

    def retarget(self, delay: float, start: Callable[[], asyncio.Task[None]]) -> bool:
        """The work and deadline of the next clock, in place of this one's (not due yet): whether it
        was taken (False once this one is due, or cancelled)."""
        handle = self._handle
        if handle is None:
            return False
        self._start, self._due = start, self._loop.time() + delay
        if self._due < handle.when():
            handle.cancel()
            self._handle = self._loop.call_at(self._due, self._fire)
        return True

    def _fire(self) -> None:
        if self._loop.time() < self._due:  # retargeted to a later deadline meanwhile
            self._handle = self._loop.call_at(self._due, self._fire)
            return
        self._handle = None
        self.task = self._start()

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        elif self.task is not None:
            self.task.cancel()

    def done(self) -> bool:
        return self._handle is None and (self.task is None or self.task.done())


Work = asyncio.Task[None] | AtDeadline


def _running(work: Work) -> bool:
    """Whether ``work`` is what runs now (scheduling from inside a room's own work must not cancel it)."""
    current = asyncio.current_task()
    return work is current or (isinstance(work, AtDeadline) and work.task is current)


class Scheduler:
    """Per room: named tasks ("timer", "hold", "bot:<seat>", "grace:<seat id>"), each with the seq
    it answers."""

    def __init__(
        self,
        config: ServerConfig,
        backend: RoomBackend,
        change: Change,
        connected: Callable[[Room], set[int]],
        bot_pool: BotPool,
        clock: Clock | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.config = config
        self.backend = backend
        self._change = change
        self._connected = connected
        self.bot_pool = bot_pool
        self.clock: Clock = clock or WallClock()
        # Bot delays and seeds (its own generator: the global one belongs to the host program).
        self._rng = rng or random.Random()
        self.tasks: dict[str, dict[str, tuple[Work, int]]] = {}

    def drop(self, code: str) -> None:
        """A room removed: nothing more runs for it."""
        for task, _ in self.tasks.pop(code, {}).values():
            task.cancel()

    def stop(self) -> None:
        for tasks in self.tasks.values():
            for task, _ in tasks.values():
                task.cancel()
        self.tasks.clear()

    def _start_task(
        self, code: str, key: str, work: Callable[[], Awaitable[None]], seq: int = 0, at: float | None = None
    ) -> None:
        """``at``: the work waits for that wall-clock time first (with the real clock, as a timer
        handle: see :class:`AtDeadline`)."""
        tasks = self.tasks.setdefault(code, {})
        old = tasks.get(key)
        if at is not None and isinstance(self.clock, WallClock):
            delay = max(0.0, at - self.clock.now() + 0.005)

            def start() -> asyncio.Task[None]:
                return asyncio.create_task(self._until_done(work))

            if old is not None and isinstance(old[0], AtDeadline) and old[0].retarget(delay, start):
                tasks[key] = (old[0], seq)
                return
            if old is not None and not _running(old[0]):
                old[0].cancel()
            tasks[key] = (AtDeadline(delay, start), seq)
            return
        if old is not None and not _running(old[0]):
            old[0].cancel()
        tasks[key] = (asyncio.create_task(self._until_done(work)), seq)

    @staticmethod
    async def _until_done(work: Callable[[], Awaitable[None]]) -> None:
        """Scheduled work (a clock, a bot turn, a grace period) runs again from the start while the
        rooms' store is unavailable: it re-checks the room's seq, so a late run does nothing wrong,
        and a room resumes within a second of the store coming back."""
        delay = 0.25
        while True:
            try:
                await work()
                return
            except BackendUnavailable:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)

    def _cancel(self, code: str, key: str) -> None:
        tasks = self.tasks.get(code, {})
        entry = tasks.pop(key, None)
        if entry is not None and not _running(entry[0]):
            entry[0].cancel()

    def schedule(self, room: Room) -> None:
        """Start, keep or cancel the room's clock, hold, bot turns and grace periods for the room as
        it is now (each bound to its ``seq``: work for an older state is cancelled)."""
        code = room.code
        if not self.backend.owns(code):
            # Another process runs this room's clocks and bots (its lease in the shared backend).
            for task, _ in self.tasks.pop(code, {}).values():
                if not _running(task):
                    task.cancel()
            return
        tasks = self.tasks.setdefault(code, {})
        playing = room.status is RoomStatus.PLAYING and room.state is not None
        # The decision clock.
        timer = tasks.get("timer")
        if playing and room.deadline is not None:
            if timer is None or timer[1] != room.seq or timer[0].done():
                # Bound now: the room object may change before a retry.
                timer_work = partial(self._timer, code, room.seq, room.deadline)
                self._start_task(code, "timer", timer_work, room.seq, at=room.deadline)
        elif timer is not None:
            self._cancel(code, "timer")
        # The end of a hold, or of the host's pause (which lasts at most the room's pause_seconds).
        hold = tasks.get("hold")
        until = room.pause["until"] if playing and room.pause is not None else None
        if until is not None:
            if hold is None or hold[1] != room.seq or hold[0].done():
                self._start_task(code, "hold", partial(self._hold_end, code, until), room.seq)
        elif hold is not None:
            self._cancel(code, "hold")
        # Bot turns: bots, players who left, and disconnected players past their grace period. While
        # the clocks are stopped bots wait too (an answer would close the window being talked over).
        bots_play = playing and room.state is not None and room.pause is None
        waiting = set(room.state.waiting_for()) if bots_play and room.state is not None else set()
        for key in [k for k in tasks if k.startswith("bot:")]:
            seat = int(key[4:])
            _task, seq = tasks[key]
            if seat not in waiting or seq != room.seq or not room.seats[seat].bot_controlled:
                self._cancel(code, key)
        for seat in sorted(waiting):
            if room.seats[seat].bot_controlled:
                key = f"bot:{seat}"
                entry = tasks.get(key)
                if entry is None or entry[1] != room.seq or entry[0].done():
                    self._start_task(code, key, partial(self._bot_turn, code, seat, room.seq), room.seq)
        # Grace periods of disconnected players.
        connected = self._connected(room) if playing else set()
        want = set()
        if playing:
            for i, s in enumerate(room.seats):
                if not s.bot and not s.left and not s.afk and i not in connected:
                    want.add(s.id)
        for key in [k for k in tasks if k.startswith("grace:")]:
            if key[6:] not in want:
                self._cancel(code, key)
        for seat_id in want:
            entry = tasks.get(f"grace:{seat_id}")
            if entry is None or entry[0].done():
                # The deadline is fixed now: a run retried after an outage does not start it again.
                grace = room.settings.grace_seconds
                deadline = self.clock.now() + (self.config.grace_seconds if grace is None else grace)
                self._start_task(code, f"grace:{seat_id}", partial(self._grace, code, seat_id, deadline))

    def _bot_delay(self, room: Room) -> float:
        base = room.settings.bot_delay
        if base is None:
            base = self.config.bot_delay
        # A little irregularity reads as a person thinking.
        return base * self._rng.uniform(0.7, 1.3)

    def _mystery_pace(self, room: Room) -> float:
        """How long each mystery decision takes, at least, after its delay: the slowest of the
        mystery pool's levels' clocks, with room for a search's last step and its trip to a worker
        and back, or as long as searches take lately, their wait for a worker included, when that
        is longer (a busy pool); 0 when the pool holds heuristics only (Capitol's personalities)."""
        game = room.game
        slowest = max((self.bot_pool.think_seconds(lv, game) for lv in mystery_pool(game)), default=0.0)
        if slowest <= 0:
            return 0.0
        pace = max(slowest, self.bot_pool.search_latency()) * MYSTERY_PACE_FACTOR + MYSTERY_PACE_SLACK
        return min(pace, self.bot_pool.time_cap)

    async def _timer(self, code: str, seq: int, deadline: float) -> None:
        # The event loop's clock is monotonic and deadlines are wall-clock epoch seconds (clients
        # show them): sleep until the wall clock has really passed the deadline.
        while (left := deadline - self.clock.now()) > 0:
            await self.clock.sleep(left + 0.005)

        def expire(r: Room) -> None:
            if r.seq != seq or r.deadline != deadline or not r.expire(self.clock.now()):
                raise RoomError(409, "no_change", "the clock was already answered")

        with contextlib.suppress(RoomError):
            await self._change(code, expire)

    async def _hold_end(self, code: str, until: float) -> None:
        while (left := until - self.clock.now()) > 0:
            await self.clock.sleep(left + 0.005)
        with contextlib.suppress(RoomError):
            await self._change(code, lambda r: r.resume(self.clock.now(), hold_until=until))

    async def _bot_turn(self, code: str, seat: int, seq: int) -> None:
        room = await self.backend.get(code)
        if room is None:
            return
        # The delay comes first: of several bots awaited at once (a response window), those not
        # first to answer are cancelled before they think.
        await self.clock.sleep(self._bot_delay(room))
        room = await self.backend.get(code)
        if room is None or room.seq != seq or room.state is None or room.status is not RoomStatus.PLAYING:
            return
        state = room.state
        if seat not in state.waiting_for():
            return
        level = seat_level(room, seat)
        view, legal = state.view(seat), state.legal_actions(seat)
        try:
            fallback = state.timeout_action(seat)
        except Exception:
            fallback = legal[0]
        mystery = room.seats[seat].bot and room.seats[seat].mystery
        share = Share(owner=room.creator or code, room=code, mystery=mystery)
        asked = self.clock.now()
        # Off the event loop, in a worker process (docs/bots.md, "On a server"); None when the
        # decision was cut at the time cap, its worker died or the bot failed (already logged).
        # A practice game plays the same for the same choices (server/practice.py).
        seed = practice.bot_seed(seq, seat) if room.settings.practice else self._rng.getrandbits(63)
        action = await self.bot_pool.decide(
            room.game, level, seat, seed, view, legal, f"room {code} seat {seat}", share
        )
        if action is None:
            action = fallback
        if mystery:
            # Whatever it was drawn as, a mystery bot answers after the slowest of its pool's levels
            # may think: how long it took would tell its level (docs/bots.md, "Mystery bots").
            left = self._mystery_pace(room) - (self.clock.now() - asked)
            if left > 0:
                await self.clock.sleep(left)
        def bot_act(r: Room, chosen: Any) -> None:
            # The player may have taken the seat back (rejoin) while the bot thought.
            if not r.seats[seat].bot_controlled:
                raise RoomError(409, "no_change", "the seat's player is back")
            r.act(seat, chosen, seq, self.clock.now(), by="bot")

        try:
            await self._change(code, lambda r: bot_act(r, action))
        except RoomError as exc:
            if exc.code in ("illegal", "bad_action"):
                # Not the message: it may quote the action or the seat's legal list (its own cards).
                kind = action.get("type") if isinstance(action, dict) else type(action).__name__
                log.error(
                    "bot %s chose an illegal action (type %r) for seat %d in room %s; timeout action instead",
                    level,
                    kind,
                    seat,
                    code,
                )
                with contextlib.suppress(RoomError):
                    await self._change(code, lambda r: bot_act(r, fallback))

    async def _grace(self, code: str, seat_id: str, deadline: float) -> None:
        def still_away(r: Room) -> int:
            """The dropped seat's index, while its game goes on without it and no bot stands in yet."""
            i = r.seat_index(seat_id)
            if i is None or r.status is not RoomStatus.PLAYING or r.seats[i].afk or i in self._connected(r):
                raise RoomError(409, "no_change", "the player is back")
            return i

        def dropped(r: Room) -> None:
            # Every page marks the seat at once with the countdown (the socket's close already said
            # it is offline; this says when a bot stands in).
            i = still_away(r)
            if r.seats[i].away_until == deadline:
                raise RoomError(409, "no_change", "already marked")
            r.seats[i].away_until = deadline

        with contextlib.suppress(RoomError):
            await self._change(code, dropped)
        while (left := deadline - self.clock.now()) > 0:
            await self.clock.sleep(left)

        def away(r: Room) -> None:
            i = still_away(r)
            r.seats[i].afk = True
            r.seats[i].away_until = None

        with contextlib.suppress(RoomError):
            await self._change(code, away)
