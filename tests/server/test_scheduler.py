"""The scheduler (server/scheduler.py) on a clock run by hand: a decision clock runs out, a hold
ends, a bot plays its turn, a disconnected player's grace period ends; work for an older state does
nothing. No test sleeps on the wall clock: each advances the fake clock and waits for what it checks."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from conflictology.server.backend import MemoryBackend
from conflictology.server.botpool import BotPool
from conflictology.server.config import ServerConfig
from conflictology.server.protocol import RoomSettings
from conflictology.server.rooms import Room, RoomStatus
from conflictology.server.scheduler import AtDeadline, Scheduler, WallClock, _running
from room_helpers import capitol_room

T0 = 1_000_000.0


class FakeClock:
    """Epoch seconds that move only when a test says so; sleepers wake when their time comes."""

    def __init__(self, now: float) -> None:
        self.t = now
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._sleepers.append((self.t + seconds, future))
        await future

    def sleeping(self) -> int:
        return sum(1 for _, f in self._sleepers if not f.done())

    def advance(self, seconds: float) -> None:
        self.t += seconds
        for wake, future in self._sleepers:
            if wake <= self.t and not future.done():
                future.set_result(None)
        self._sleepers = [(w, f) for w, f in self._sleepers if not f.done()]


async def until(check: Callable[[], bool]) -> None:
    """Let the event loop run until ``check`` holds (a bounded number of turns, no wall-clock wait)."""
    for _ in range(2000):
        if check():
            return
        await asyncio.sleep(0)
    raise AssertionError("the condition never held")


class Table:
    """A scheduler over a memory backend, rescheduling after every change as the hub does."""

    def __init__(self, room: Room, connected: set[int] | None = None) -> None:
        self.config = ServerConfig(bot_delay=1.0, grace_seconds=30.0)
        self.clock = FakeClock(T0)
        self.backend = MemoryBackend()
        self.connected = connected if connected is not None else set(range(len(room.seats)))
        self.pool = BotPool(1, 2.0, 1.0)
        self.scheduler = Scheduler(
            self.config, self.backend, self.change, lambda r: set(self.connected), self.pool, self.clock
        )
        self.backend.subscribe(lambda r, local: self.scheduler.schedule(r))
        self.backend.load(room)
        self.code = room.code

    async def change(self, code: str, fn: Callable[[Room], Any]) -> tuple[Room, Any]:
        return await self.backend.update(code, fn)

    def room(self) -> Room:
        room = self.backend.get_now(self.code)
        assert room is not None
        return room

    def scheduled(self) -> set[str]:
        return set(self.scheduler.tasks.get(self.code, {}))

    async def close(self) -> None:
        self.scheduler.stop()
        await self.pool.stop()


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(test())


def test_a_decision_clock_that_runs_out_plays_the_timeout_action_and_starts_the_next() -> None:
    async def main() -> None:
        table = Table(capitol_room(T0))
        room = table.room()
        table.scheduler.schedule(room)
        assert "timer" in table.scheduled()
        deadline, seq = room.deadline, room.seq
        assert deadline == T0 + room.settings.turn_seconds
        await until(lambda: table.clock.sleeping() == 1)
        table.clock.advance(room.settings.turn_seconds - 1)  # not yet
        await until(lambda: table.clock.sleeping() == 1)
        assert table.room().seq == seq
        table.clock.advance(2)
        await until(lambda: table.room().seq > seq)
        after = table.room()
        assert after.actions[-1] == {"seq": seq + 1, "seat": 0, "action": {"type": "income"}, "by": "timeout"}
        # The next decision has its own clock, from the moment the last one ran out.
        assert after.deadline == table.clock.now() + after.settings.turn_seconds
        assert table.scheduler.tasks[table.code]["timer"][1] == after.seq
        await table.close()

    run(main)


def test_a_wall_clock_deadline_waits_as_a_timer_handle_and_makes_its_task_only_when_due() -> None:
    async def main() -> None:
        made: list[bool] = []
        done = asyncio.Event()

        async def work() -> None:
            made.append(_running(due))  # the work started from the handle is the running one
            done.set()

        answered = AtDeadline(3600.0, lambda: asyncio.create_task(work()))
        assert not answered.done()
        answered.cancel()  # a move answered the clock: no task was ever made
        assert answered.done() and answered.task is None
        due = AtDeadline(0.0, lambda: asyncio.create_task(work()))
        await asyncio.wait_for(done.wait(), 60)
        assert due.task is not None
        await due.task
        assert made == [True] and due.done()
        due.cancel()  # after its task ended: nothing to cancel, nothing raised

    run(main)


def test_a_clock_retargeted_later_waits_for_the_new_deadline_and_sooner_is_rearmed() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        started: list[tuple[str, float]] = []

        def starter(name: str) -> Any:
            async def work() -> None:
                started.append((name, loop.time()))

            return lambda: asyncio.create_task(work())

        t0 = loop.time()
        clock = AtDeadline(0.0, starter("first"))
        assert clock.retarget(0.3, starter("later"))  # before its handle came: it waits on
        sooner = AtDeadline(3600.0, starter("never"))
        assert sooner.retarget(0.0, starter("sooner"))  # an hour's handle is re-armed for now
        for _ in range(6000):  # waits on what it checks; bounded at a minute
            if len(started) == 2:
                break
            await asyncio.sleep(0.01)
        assert [name for name, _ in started] == ["sooner", "later"]
        assert started[1][1] >= t0 + 0.3
        # Once due (or cancelled), a clock is not retargeted: the next one is a new clock.
        assert not clock.retarget(1.0, starter("no")) and not sooner.retarget(1.0, starter("no"))
        cancelled = AtDeadline(3600.0, starter("no"))
        cancelled.cancel()
        assert not cancelled.retarget(0.0, starter("no")) and cancelled.done()

    run(main)


def test_a_wall_clock_decision_clock_answered_in_time_makes_no_task_and_one_run_out_plays() -> None:
    async def main() -> None:
        table = Table(capitol_room(time.time()))
        table.scheduler.clock = WallClock()
        room = table.room()
        table.scheduler.schedule(room)
        timer, seq = table.scheduler.tasks[table.code]["timer"]
        assert isinstance(timer, AtDeadline) and timer.task is None and seq == room.seq
        # Answered before its deadline: the next decision's clock replaces it, and it never ran. The
        # next one is made to run out at once.
        def answer(r: Room) -> None:
            r.act(0, {"type": "income"}, r.seq, time.time())
            r.deadline = time.time() + 0.05

        await table.change(table.code, answer)
        # The next clock took over its handle (due sooner now): the answered one never ran.
        again, seq = table.scheduler.tasks[table.code]["timer"]
        assert again is timer and seq == table.room().seq and timer.task is None and not timer.done()
        # A clock that runs out plays the timeout action, as with any clock.
        seq = table.room().seq
        for _ in range(6000):  # waits on what it checks; bounded at a minute
            if table.room().seq > seq:
                break
            await asyncio.sleep(0.01)
        assert table.room().actions[-1]["by"] == "timeout"
        await table.close()

    run(main)


def test_a_hold_ends_at_its_until_and_the_clock_gets_back_what_it_had_left() -> None:
    async def main() -> None:
        table = Table(capitol_room(T0))
        await table.change(table.code, lambda r: r.hold(1, T0 + 10))
        room = table.room()
        assert room.pause is not None and "hold" in table.scheduled() and "timer" not in table.scheduled()
        left, until_ = room.pause["left"], room.pause["until"]
        assert until_ == T0 + 10 + room.settings.hold_seconds
        table.clock.advance(10 + room.settings.hold_seconds + 1)  # the timer may fire late
        await until(lambda: table.room().pause is None)
        assert table.room().deadline == until_ + left  # ended at its until, not when noticed
        assert "timer" in table.scheduled() and "hold" not in table.scheduled()
        await table.close()

    run(main)


def bots_table() -> Room:
    room, _ = Room.create("BOTS22", "capitol", "Ada", {"first_player": 1}, RoomSettings(bot_delay=2.0))
    room.add_bots(2, "random")
    room.start(T0)
    return room


def test_a_bot_plays_its_turn_after_the_rooms_bot_delay() -> None:
    async def main() -> None:
        table = Table(bots_table())
        room = table.room()
        seq = room.seq
        table.scheduler.schedule(room)
        assert "bot:1" in table.scheduled()
        await until(lambda: table.clock.sleeping() >= 2)  # the clock and the bot's delay
        table.clock.advance(2.0 * 0.69)  # less than the shortest delay (x0.7)
        await until(lambda: table.clock.sleeping() >= 2)
        assert table.room().seq == seq
        table.clock.advance(2.0 * 0.62)  # past the longest (x1.3)
        await until(lambda: table.room().seq > seq)
        last = table.room().actions[0]
        assert last["seat"] == 1 and last["by"] == "bot"
        await table.close()

    run(main)


def test_a_bot_turn_for_an_older_state_is_cancelled_and_plays_nothing() -> None:
    async def main() -> None:
        table = Table(bots_table())
        room = table.room()
        table.scheduler.schedule(room)
        task, seq = table.scheduler.tasks[table.code]["bot:1"]
        # The host's pause: bots wait while the clocks are stopped.
        await table.change(table.code, lambda r: r.host_pause(0, T0 + 0.1))
        await until(task.done)
        assert task.cancelled() and "bot:1" not in table.scheduled()
        table.clock.advance(60)
        # Only the pause's own end (the room's pause_seconds, 300 s) still waits.
        await until(lambda: table.clock.sleeping() == 1)
        assert table.room().seq == seq and table.room().actions == []
        await table.close()

    run(main)


def test_a_disconnected_player_is_marked_away_after_the_grace_period_and_a_bot_plays_for_them() -> None:
    async def main() -> None:
        table = Table(capitol_room(T0, grace_seconds=5.0), connected={1, 2})
        room = table.room()
        seat0 = room.seats[0].id
        table.scheduler.schedule(room)
        assert f"grace:{seat0}" in table.scheduled() and "bot:0" not in table.scheduled()
        await until(lambda: table.clock.sleeping() == 2)
        table.clock.advance(4.9)
        await until(lambda: table.clock.sleeping() == 2)
        assert not table.room().seats[0].afk
        table.clock.advance(0.2)
        await until(lambda: table.room().seats[0].afk)
        # Seat 0 is awaited (its turn): the stand-in bot's turn is scheduled at once.
        await until(lambda: "bot:0" in table.scheduled())
        assert f"grace:{seat0}" not in table.scheduled()
        await table.close()

    run(main)


def test_a_player_back_before_the_grace_period_ends_keeps_the_seat() -> None:
    async def main() -> None:
        table = Table(capitol_room(T0, grace_seconds=5.0), connected={1, 2})
        room = table.room()
        table.scheduler.schedule(room)
        await until(lambda: table.clock.sleeping() == 2)
        table.connected.add(0)
        table.scheduler.schedule(room)
        assert not any(k.startswith("grace:") for k in table.scheduled())
        await until(lambda: table.clock.sleeping() == 1)  # the decision clock only
        table.clock.advance(10)
        await until(lambda: table.clock.sleeping() == 1)
        assert not table.room().seats[0].afk and table.room().status is RoomStatus.PLAYING
        await table.close()

    run(main)
