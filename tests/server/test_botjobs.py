"""The bot pool's queues and clocks (server/botjobs.py) on their own, without worker processes:
quick decisions before searches, a search that waits too long played on a short clock or by the
default level, a
decision that never finds a worker taking the timeout action, and the wait a search is judged by."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

from conflictology import bots, games
from conflictology.server.botjobs import QUICK_FLOOR, QUICK_SECONDS, Job, JobQueue, PoolCounts

_ids = itertools.count(1)


def _job(level: str, search: bool) -> Job:
    game = games.get("capitol")
    state = game.new_game(players=3, seed=5)
    seat = state.waiting_for()[0]
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    return Job(
        next(_ids), game, level, seat, 1, state.view(seat), state.legal_actions(seat), "test", future, search
    )


def _queue(
    counts: PoolCounts, dispatched: list[int], queue_wait: float = 5.0, time_cap: float = 5.0
) -> JobQueue:
    return JobQueue(1, time_cap, queue_wait, counts, lambda: dispatched.append(1))


def test_quick_decisions_go_before_searches_and_ended_ones_are_skipped() -> None:
    async def main() -> None:
        queue = _queue(PoolCounts(), [])
        search, quick, withdrawn = _job("hard", True), _job("normal", False), _job("normal", False)
        for job in (search, withdrawn, quick):
            job.future.add_done_callback(lambda _f, j=job: queue.forget(j))
            queue.put(job)
        withdrawn.future.cancel()
        await asyncio.sleep(0)
        assert queue.waiting() == (1, 1)
        assert queue.next() is quick and queue.next() is search and queue.next() is None

    asyncio.run(main())


def test_a_mystery_seats_decisions_are_in_neither_public_gauge() -> None:
    """The queued-by-kind gauges of /metrics would tell whether a mystery bot's secret level searches."""

    async def main() -> None:
        queue = _queue(PoolCounts(), [])
        plain, secret = _job("hard", True), _job("hard", True)
        secret.mystery = True
        queue.put(plain)
        queue.put(secret)
        assert queue.waiting() == (0, 1)

    asyncio.run(main())


def test_a_search_waiting_past_queue_wait_is_played_on_a_short_clock_first_in_line() -> None:
    """Issue 28: ``hard`` that cannot start in time searches on a short clock rather than hand its
    decision to ``normal``."""

    async def main() -> None:
        counts, dispatched = PoolCounts(), []
        queue = _queue(counts, dispatched, queue_wait=0.05)
        queue.start_clocks()
        early, search = _job("normal", False), _job("hard", True)
        queue.put(early)
        queue.put(search)
        await asyncio.sleep(0.2)
        assert counts.late == 0 and counts.fallbacks == {} and dispatched == [1]
        assert search.quick and not search.late and not search.search
        assert abs(search.worth - QUICK_SECONDS / 0.3) < 1e-9  # a tenth of a search's turn
        assert search.level == f"hard:seconds={QUICK_SECONDS:g}"
        assert bots.parse_spec(search.level) == ("search", {"seconds": QUICK_SECONDS})
        assert queue.next() is search and queue.next() is early  # the quick search went first

    asyncio.run(main())


def test_a_search_with_no_clock_waiting_past_queue_wait_is_played_by_the_default_level_first_in_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bots, "_CLOCKED", set())

    async def main() -> None:
        counts, dispatched = PoolCounts(), []
        queue = _queue(counts, dispatched, queue_wait=0.05)
        queue.start_clocks()
        early, search = _job("normal", False), _job("hard", True)
        queue.put(early)
        queue.put(search)
        await asyncio.sleep(0.2)
        assert counts.late == 1 and counts.fallbacks == {"queue_wait": 1} and dispatched == [1]
        assert search.late and not search.search and bots.cost(search.level, search.game) == "quick"
        assert queue.next() is search and queue.next() is early  # the stand-in went first

    asyncio.run(main())


def test_the_quick_clock_shortens_as_quick_searches_wait_then_the_default_level_plays() -> None:
    """The quick searches waiting must all end within ``queue_wait`` on the workers there are: at 1 s
    and one worker, 30 ms each up to 33 of them, then less, down to 10 ms (100); past that, ``normal``."""

    async def main() -> None:
        counts = PoolCounts()
        queue = _queue(counts, [], queue_wait=1.0)
        assert queue.quick_clock() == QUICK_SECONDS
        for _ in range(49):
            waiting = _job("hard:seconds=0.03", False)
            waiting.quick = True
            queue.put(waiting)
        assert abs((queue.quick_clock() or 0) - 1 / 50) < 1e-9
        for _ in range(51):
            waiting = _job("hard:seconds=0.01", False)
            waiting.quick = True
            queue.put(waiting)
        assert QUICK_FLOOR > 1 / 101 and queue.quick_clock() is None
        search = _job("hard", True)
        queue.stand_in(search, "queue_full")
        assert search.late and not search.quick and search.level == "normal"
        assert counts.fallbacks == {"queue_full": 1}

    asyncio.run(main())


def test_no_clock_runs_before_the_first_worker_is_ready() -> None:
    async def main() -> None:
        counts = PoolCounts()
        queue = _queue(counts, [], queue_wait=0.01, time_cap=0.01)
        job = _job("normal", False)
        queue.put(job)
        await asyncio.sleep(0.1)
        assert not job.future.done()
        queue.start_clocks()  # the first worker is ready: the job waits from now, and expires
        await asyncio.sleep(0.1)
        assert job.future.result() is None and counts.expired == 1

    asyncio.run(main())


def test_quick_searches_slower_than_their_clocks_give_way_to_the_default_level_sooner() -> None:
    """On a starved machine a quick search takes far longer than its clock: the default level plays
    once the quick searches waiting, at the pace they took lately, would not all start in time."""

    async def main() -> None:
        queue = _queue(PoolCounts(), [], queue_wait=1.0)
        queue.learn_quick(0.2)
        for _ in range(5):
            quick = _job("hard:seconds=0.03", False)
            quick.quick = True
            queue.put(quick)
        assert queue.quick_clock() == QUICK_SECONDS  # 5 x 0.2 s: the last starts within 1 s
        quick = _job("hard:seconds=0.03", False)
        quick.quick = True
        queue.put(quick)
        assert queue.quick_clock() is None

    asyncio.run(main())


def test_quick_searches_waiting_count_for_their_clocks() -> None:
    async def main() -> None:
        queue = _queue(PoolCounts(), [])
        queue.learn(0.3)
        for _ in range(10):
            quick = _job("hard:seconds=0.03", False)
            quick.quick, quick.worth = True, 0.1
            queue.put(quick)
        # Ten 30 ms searches ahead are one search's worth, not half of one (ten heuristics).
        assert abs(queue.expected_wait(worker_free=False) - 1.5 * 0.3) < 1e-9

    asyncio.run(main())


def test_a_search_is_judged_by_the_searches_waiting_and_how_long_searches_took() -> None:
    async def main() -> None:
        queue = _queue(PoolCounts(), [])
        assert queue.expected_wait(worker_free=False) == 0.0  # no search timed yet
        queue.learn(0.3)
        queue.learn(0.8)  # a moving average: 0.8 * 0.3 + 0.2 * 0.8
        assert abs(queue.expected_wait(worker_free=False) - 0.5 * 0.4) < 1e-9
        queue.put(_job("hard", True))
        assert abs(queue.expected_wait(worker_free=False) - 1.5 * 0.4) < 1e-9
        assert queue.expected_wait(worker_free=True) == 0.0

    asyncio.run(main())


def _owned(owner: str, room: str) -> Job:
    job = _job("hard", True)
    job.owner, job.room = owner, room
    return job


def test_searches_are_served_in_turns_of_address_and_room_and_judged_by_their_turn() -> None:
    """Issue 25, item 4: a flood of one address's searches does not keep another room's search
    waiting behind it all, nor make it look too long to wait for."""

    async def main() -> None:
        queue = _queue(PoolCounts(), [])
        queue.learn(0.4)
        flood = [_owned("flood", f"F{i % 5}") for i in range(20)]
        for job in flood:
            queue.put(job)
        # Behind 20 searches one would wait (20 + 1/2) x 0.4 s; in its turn, (1 + 1/2) x 0.4 s.
        assert abs(queue.expected_wait(False, "quiet", "Q") - 1.5 * 0.4) < 1e-9
        assert queue.expected_wait(False, "flood", "F0") > 20 * 0.4
        quiet = _owned("quiet", "Q")
        queue.put(quiet)
        assert queue.next() is flood[0] and queue.next() is quiet

    asyncio.run(main())
