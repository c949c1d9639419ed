"""The Redis backend on its own: two backends on one Redis stand for two processes."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from conflictology.server.protocol import RoomSettings
from conflictology.server.redis_backend import RedisBackend
from conflictology.server.rooms import Room, RoomError, RoomStatus
from redis_helpers import clear_prefix, new_prefix, redis_server

pytestmark = pytest.mark.redis


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture
def prefix(redis_url: str) -> Iterator[str]:
    p = new_prefix()
    yield p
    clear_prefix(redis_url, p)


class Seen:
    """A listener that files what a backend announces."""

    def __init__(self) -> None:
        self.events: list[tuple[str, int, bool]] = []

    def __call__(self, room: Room, local: bool) -> None:
        self.events.append((room.code, room.version, local))


# These tests never take Redis away: a slow answer on a loaded machine is not an outage here.
PATIENT = 30.0


async def pair(url: str, prefix: str, lease: float = 5.0) -> tuple[RedisBackend, RedisBackend, Seen, Seen]:
    a = RedisBackend(url, prefix, heartbeat_seconds=lease / 5, lease_seconds=lease, timeout_seconds=PATIENT)
    b = RedisBackend(url, prefix, heartbeat_seconds=lease / 5, lease_seconds=lease, timeout_seconds=PATIENT)
    seen_a, seen_b = Seen(), Seen()
    a.subscribe(seen_a)
    b.subscribe(seen_b)
    interested: set[str] = set()
    await a.start(lambda code: code in interested)
    await b.start(lambda code: code in interested)
    return a, b, seen_a, seen_b


async def alone(url: str, prefix: str) -> tuple[RedisBackend, Seen]:
    """One process, with sockets in every room."""
    backend = RedisBackend(url, prefix, timeout_seconds=PATIENT)
    seen = Seen()
    backend.subscribe(seen)
    await backend.start(lambda code: True)
    return backend, seen


def capitol_room(code: str, players: int = 2) -> Room:
    room, _ = Room.create(code, "capitol", "Host", None, RoomSettings(timers=False))
    for i in range(1, players):
        room.join(f"P{i}")
    return room


async def followers_of(backend: RedisBackend, code: str) -> set[str]:
    """The processes listed in Redis as following a room."""
    return {x.decode() for x in await backend.redis.smembers(backend.keys.followers(code))}


async def subscribed(backend: RedisBackend, code: str) -> None:
    """Wait until Redis counts a subscriber on the room's channel (a subscription is acknowledged
    when Redis says so, however long a loaded machine takes)."""
    channel = backend.keys.channel(code)
    deadline = time.monotonic() + 30
    while not (await backend.redis.pubsub_numsub(channel))[0][1]:
        if time.monotonic() > deadline:
            raise AssertionError(f"nobody subscribed to {channel}")
        await asyncio.sleep(0.02)


async def eventually(pred: Any, timeout: float = 60.0) -> None:
    """Until ``pred()`` holds: generous, as a loaded machine delivers late and a pass is at once."""
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.02)


def test_concurrent_changes_from_two_processes_are_all_kept(redis_url: str, prefix: str) -> None:
    async def main() -> None:
        a, b, _, _ = await pair(redis_url, prefix)
        try:
            assert await a.insert(capitol_room("AAAAA"))
            assert not await b.insert(capitol_room("AAAAA")), "a taken code must be refused"

            async def note(backend: RedisBackend, tag: str) -> None:
                await backend.update("AAAAA", lambda r: r.past_games.append(tag))

            # 2 × 20 changes racing on the same room (it keeps at most 50 past games): none is lost.
            await asyncio.gather(*(note(x, f"{n}{i}") for i in range(20) for n, x in (("a", a), ("b", b))))
            room = await b.get("AAAAA")
            assert room is not None
            assert sorted(room.past_games) == sorted(f"{n}{i}" for i in range(20) for n in "ab")
            assert room.version == 1 + 40
            assert a.conflicts + b.conflicts > 0, "the race should have made some version checks fail"
        finally:
            await a.stop()
            await b.stop()

    asyncio.run(main())


def test_one_move_cannot_be_applied_twice_to_the_same_state(redis_url: str, prefix: str) -> None:
    async def main() -> None:
        a, b, _, _ = await pair(redis_url, prefix)
        try:
            await a.insert(capitol_room("BBBBB"))
            await a.update("BBBBB", lambda r: r.start(time.time(), seed=3))
            room = await b.get("BBBBB")
            assert room is not None and room.state is not None
            seat = room.state.waiting_for()[0]
            legal = room.state.legal_actions(seat)
            seq = room.seq
            # Both processes apply a (different) move quoting the same state, at the same moment.
            results = await asyncio.gather(
                a.update("BBBBB", lambda r: r.act(seat, legal[0], seq, time.time())),
                b.update("BBBBB", lambda r: r.act(seat, legal[-1], seq, time.time())),
                return_exceptions=True,
            )
            errors = [r for r in results if isinstance(r, BaseException)]
            assert len(errors) == 1 and isinstance(errors[0], RoomError) and errors[0].code == "stale"
            final = await a.get("BBBBB")
            assert final is not None and final.seq == seq + 1 and len(final.actions) == 1
        finally:
            await a.stop()
            await b.stop()

    asyncio.run(main())


def test_a_refused_change_changes_nothing(redis_url: str, prefix: str) -> None:
    async def main() -> None:
        a, b, _, _ = await pair(redis_url, prefix)
        try:
            await a.insert(capitol_room("CCCCC"))
            before = await a.get("CCCCC")
            assert before is not None

            def bad(r: Room) -> None:
                r.past_games.append("half-done")
                raise RoomError(409, "nope", "refused after a change to the working copy")

            with pytest.raises(RoomError):
                await a.update("CCCCC", bad)
            after = await b.get("CCCCC")
            assert after is not None and after.version == before.version and after.past_games == []
            cached = await a.get("CCCCC")
            assert cached is not None and cached.past_games == []
            with pytest.raises(RoomError) as err:
                await b.update("ZZZZZ", lambda r: None)
            assert err.value.status == 404
        finally:
            await a.stop()
            await b.stop()

    asyncio.run(main())


def test_changes_are_announced_to_interested_processes(redis_url: str, prefix: str) -> None:
    async def main() -> None:
        a = RedisBackend(redis_url, prefix, timeout_seconds=PATIENT)
        b = RedisBackend(redis_url, prefix, timeout_seconds=PATIENT)
        seen_a, seen_b = Seen(), Seen()
        a.subscribe(seen_a)
        b.subscribe(seen_b)
        await a.start(lambda code: False)
        await b.start(lambda code: code == "DDDDD")  # B has sockets in DDDDD only
        try:
            await a.insert(capitol_room("DDDDD"))
            await a.insert(capitol_room("EEEEE"))
            await eventually(lambda: ("EEEEE", 1, False) in seen_a.events)  # A's subscriptions' reads
            await b.watch("DDDDD")  # what B's hub does when DDDDD's first socket opens there
            await eventually(lambda: ("DDDDD", 1, False) in seen_b.events)  # read once subscribed
            await a.update("DDDDD", lambda r: r.past_games.append("x"))
            await eventually(lambda: ("DDDDD", 2, False) in seen_b.events)
            # A's own changes reach A's listener once, as local changes, never again from Redis
            # (A re-reads each room it owns once, when its subscription is acknowledged).
            assert [e for e in seen_a.events if e[2]] == [
                ("DDDDD", 1, True),
                ("EEEEE", 1, True),
                ("DDDDD", 2, True),
            ]
            assert all(version == 1 for _, version, local in seen_a.events if not local)
            await asyncio.sleep(0.2)
            assert all(code == "DDDDD" for code, _, _ in seen_b.events)
            # Presence: a seat online through B is a remote seat for A once A cares about the room.
            await b.presence("DDDDD", "seat-x", True)
            await eventually(lambda: a.remote_seats("DDDDD") == {"seat-x"})  # A owns DDDDD
            await b.presence("DDDDD", "seat-x", False)
            await eventually(lambda: a.remote_seats("DDDDD") == set())
            # B subscribed to DDDDD's channel only; once it lets go, it hears nothing more of it.
            assert b.channels.following == {"DDDDD"} and a.channels.following == {"DDDDD", "EEEEE"}
            b.channels.interested = lambda code: False
            await b.unwatch("DDDDD")
            heard = len(seen_b.events)
            await a.update("DDDDD", lambda r: r.past_games.append("y"))
            await a.update("EEEEE", lambda r: r.past_games.append("y"))
            await asyncio.sleep(0.3)
            assert len(seen_b.events) == heard and b.channels.following == set()
        finally:
            await a.stop()
            await b.stop()

    asyncio.run(main())


def test_a_dead_process_rooms_are_taken_over_and_its_presence_removed(redis_url: str, prefix: str) -> None:
    async def main() -> None:
        a, b, _, seen_b = await pair(redis_url, prefix, lease=0.5)
        try:
            await a.insert(capitol_room("FFFFF"))
            await a.presence("FFFFF", "seat-a", True)
            assert a.owns("FFFFF") and not b.owns("FFFFF")
            # A stops renewing its lease without a word (as a killed process would).
            a._running = False
            for task in a._tasks:
                task.cancel()
            await eventually(lambda: b.owns("FFFFF"))
            # The dead process no longer counts as following the room (its changes would be
            # announced for nobody); B, its new owner, does.
            followers: set[str] = set()
            deadline = time.monotonic() + 60
            while followers != {b.process} and time.monotonic() < deadline:
                followers = await followers_of(b, "FFFFF")
                await asyncio.sleep(0.02)
            assert followers == {b.process}
            # B announces the room to its own hub (to start its clocks) as a non-local change.
            await eventually(lambda: ("FFFFF", 1, False) in seen_b.events)
            presence = await b.redis.hkeys(b.keys.presence("FFFFF"))
            assert presence == [], "the dead process's seats must not look connected"
            room = await b.get("FFFFF")
            assert room is not None and room.status is RoomStatus.LOBBY
        finally:
            await b.stop()
            await a.redis.aclose()

    asyncio.run(main())


def test_a_read_overtaken_by_a_change_never_shows_an_older_room(redis_url: str, prefix: str) -> None:
    """A read in flight while a change of the same process lands (a refresh racing a move) must not
    put the older room back: players would see the state go back a move, and a move made on the
    older room would be refused as stale (the game stalled after a take-over before this was fixed)."""

    async def main() -> None:
        a, seen = await alone(redis_url, prefix)
        try:
            await a.insert(capitol_room("RRRRR"))
            await eventually(lambda: ("RRRRR", 1, False) in seen.events)  # its subscription's read
            await eventually(lambda: not a.channels.refreshing)
            # As after an announcement from another process: the next read goes to Redis.
            a.storage.cache.clear()
            original = a.storage.read
            raced = False

            async def read_then_change_lands(code: str, start: int = 0) -> Any:
                nonlocal raced
                result = await original(code, start)  # the snapshot at version 1 is on its way
                if not raced:
                    raced = True
                    await a.update("RRRRR", lambda r: r.past_games.append("landed"))
                return result

            a.storage.read = read_then_change_lands  # type: ignore[method-assign]
            room = await a.get("RRRRR")
            assert raced
            assert room is not None and room.version == 2 and room.past_games == ["landed"]
            again = await a.get("RRRRR")
            assert again is not None and again.version == 2
        finally:
            await a.stop()

    asyncio.run(main())


def test_a_change_is_pushed_once_when_its_announcement_beats_the_reply(redis_url: str, prefix: str) -> None:
    """Redis answers the save on one connection and announces it on another: the announcement can
    be read first. It must be recognised as this process's own change, not read back and pushed to
    every socket a second time."""

    async def main() -> None:
        a, seen = await alone(redis_url, prefix)
        b, seen_b = await alone(redis_url, prefix)  # another follower: the change is announced
        try:
            await a.insert(capitol_room("SSSSS"))
            await b.watch("SSSSS")
            await eventually(lambda: ("SSSSS", 1, False) in seen.events)  # the subscription's read
            await eventually(lambda: ("SSSSS", 1, False) in seen_b.events)
            send = a.storage.batches.send

            async def slow_reply(batch: Any, load: bool = True) -> Any:
                results = await send(batch, load)
                await asyncio.sleep(0.2)  # the announcement is read meanwhile
                return results

            a.storage.batches.send = slow_reply  # type: ignore[method-assign]
            await a.update("SSSSS", lambda r: r.past_games.append("once"))
            await eventually(lambda: ("SSSSS", 2, False) in seen_b.events)  # it was announced
            await asyncio.sleep(0.2)
            assert [e for e in seen.events if e[1] == 2] == [("SSSSS", 2, True)]
        finally:
            await a.stop()
            await b.stop()

    asyncio.run(main())


def test_saves_ready_in_one_loop_turn_share_one_round_trip(redis_url: str, prefix: str) -> None:
    """Group commit: changes to many rooms that are ready together go to Redis as one pipeline, each
    still its own compare-and-set; every change lands once and is announced once."""

    async def main() -> None:
        a, seen = await alone(redis_url, prefix)
        b, seen_b = await alone(redis_url, prefix)
        codes = [f"G{i:04d}" for i in range(20)]
        try:
            for code in codes:
                await a.insert(capitol_room(code))
                await b.watch(code)
            # A re-reads each room once when its subscription is acknowledged: let that settle first.
            await eventually(lambda: all((code, 1, False) in seen.events for code in codes))
            await eventually(lambda: not a.channels.refreshing)
            sends = 0
            send = a.storage.batches.send

            async def counted(batch: Any, load: bool = True) -> Any:
                nonlocal sends
                sends += 1
                return await send(batch, load)

            a.storage.batches.send = counted  # type: ignore[method-assign]
            before = a.stats()
            await asyncio.gather(*(a.update(code, lambda r: r.past_games.append("g")) for code in codes))
            assert sends == 1
            # What /metrics shows: 20 saves, one round trip.
            after = a.stats()
            assert after["saves"] - before["saves"] == len(codes)
            assert after["save_round_trips"] - before["save_round_trips"] == 1
            for code in codes:
                room = await b.get(code)
                assert room is not None and room.version == 2 and room.past_games == ["g"]
            await eventually(lambda: all((code, 2, False) in seen_b.events for code in codes))
            assert sum(1 for e in seen.events if e[1] == 2) == len(codes)  # pushed once each, locally
            # A stale save in the batch is refused on its own; the others land.
            stale = a.storage.cache[codes[0]].copy()  # A's room before B's change (version 2)
            await b.update(codes[0], lambda r: r.past_games.append("b"))
            a.storage.cache[codes[0]] = stale  # as if A had not heard of B's change yet
            await asyncio.gather(*(a.update(code, lambda r: r.past_games.append("h")) for code in codes[:5]))
            room = await b.get(codes[0])
            assert room is not None and room.past_games == ["g", "b", "h"] and a.conflicts >= 1
        finally:
            await a.stop()
            await b.stop()

    asyncio.run(main())


def test_a_save_landing_after_its_caller_was_cancelled_is_still_pushed(redis_url: str, prefix: str) -> None:
    """A bot turn or a clock is cancelled while its save is on its way: the save lands, and its
    announcement (none, or skipped as this process's own) must not be the last word — the room is read again
    and pushed, or its sockets and its clocks would stay a move behind."""

    async def main() -> None:
        a, seen = await alone(redis_url, prefix)
        try:
            await a.insert(capitol_room("CNCLD"))
            await eventually(lambda: ("CNCLD", 1, False) in seen.events)
            send = a.storage.batches.send
            landed = asyncio.Event()

            async def slow_reply(batch: Any, load: bool = True) -> Any:
                results = await send(batch, load)  # in Redis
                landed.set()
                await asyncio.sleep(0.5)  # the caller is cancelled before the reply reaches it
                return results

            a.storage.batches.send = slow_reply  # type: ignore[method-assign]
            change = asyncio.create_task(a.update("CNCLD", lambda r: r.past_games.append("x")))
            await landed.wait()
            await asyncio.sleep(0.1)  # (no other process follows the room: nothing is announced)
            change.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await change
            await eventually(lambda: any(e[:2] == ("CNCLD", 2) for e in seen.events))
        finally:
            await a.stop()

    asyncio.run(main())


def test_a_change_is_announced_only_when_another_process_follows_the_room(
    redis_url: str, prefix: str
) -> None:
    """The writer pushes its own change itself; an announcement is for the other processes that
    follow the room (sockets there, or its ownership), and goes out exactly when there is one."""

    async def main() -> None:
        a, _ = await alone(redis_url, prefix)
        b, seen_b = await alone(redis_url, prefix)
        listener = a.redis.pubsub()
        try:
            await a.insert(capitol_room("ANNCE"))
            await listener.subscribe(a.keys.channel("ANNCE"))  # a bystander: hears, but does not follow

            async def heard(expected: int = 0) -> list[str]:
                """What was published: the ``expected`` announcements waited for (60 s at most,
                however slow the machine), then 0.3 s more for any other (that must not come)."""
                got: list[str] = []
                patience = time.monotonic() + 60
                while len(got) < expected and time.monotonic() < patience:
                    msg = await listener.get_message(timeout=0.05)
                    if msg is not None and msg["type"] == "message":
                        got.append(msg["data"].decode())
                quiet = time.monotonic() + 0.3
                while time.monotonic() < quiet:
                    msg = await listener.get_message(timeout=0.05)
                    if msg is not None and msg["type"] == "message":
                        got.append(msg["data"].decode())
                return got

            await heard()  # the subscription's acknowledgement and the insert's announcement
            await a.update("ANNCE", lambda r: r.past_games.append("alone"))
            assert await heard() == []  # only A follows: nothing is published
            await b.watch("ANNCE")
            await eventually(lambda: ("ANNCE", 2, False) in seen_b.events)  # read when subscribed
            await a.update("ANNCE", lambda r: r.past_games.append("watched"))
            assert await heard(1) == ["3"]
            await eventually(lambda: ("ANNCE", 3, False) in seen_b.events)
            await b.update("ANNCE", lambda r: r.past_games.append("from b"))  # A follows: announced
            assert await heard(1) == ["4"]
            b.channels.interested = lambda code: False
            await b.unwatch("ANNCE")
            await a.update("ANNCE", lambda r: r.past_games.append("alone again"))
            assert await heard() == []
            room = await a.get("ANNCE")
            assert room is not None and room.version == 5
            assert room.past_games == ["alone", "watched", "from b", "alone again"]
        finally:
            await listener.aclose()
            await a.stop()
            await b.stop()

    asyncio.run(main())


def test_a_save_after_redis_forgot_its_scripts_still_lands(redis_url: str, prefix: str) -> None:
    """A restarted Redis (or SCRIPT FLUSH) no longer knows the save script: it is loaded again and
    the save goes through, once."""

    async def main() -> None:
        a, _ = await alone(redis_url, prefix)
        try:
            await a.insert(capitol_room("FLUSH"))
            await a.update("FLUSH", lambda r: r.past_games.append("before"))
            await a.redis.script_flush()
            room, _ = await a.update("FLUSH", lambda r: r.past_games.append("after"))
            assert room.version == 3
            stored = await a.get("FLUSH")
            assert stored is not None and stored.version == 3 and stored.past_games == ["before", "after"]
        finally:
            await a.stop()

    asyncio.run(main())


def test_a_lost_save_connection_is_replaced(redis_url: str, prefix: str) -> None:
    """The connection that carries saves drops (Redis restarted, an idle timeout): the save on it
    did not land, so it is made again over a new connection — once, and the caller never sees it."""

    async def main() -> None:
        a, _ = await alone(redis_url, prefix)
        try:
            await a.insert(capitol_room("LOSTC"))
            await a.update("LOSTC", lambda r: r.past_games.append("one"))
            assert a.storage.batches.connection is not None
            await a.storage.batches.connection.send_command("CLIENT", "ID")
            client_id = await a.storage.batches.connection.read_response()
            await a.redis.client_kill_filter(_id=client_id)
            room, _ = await a.update("LOSTC", lambda r: r.past_games.append("two"))
            assert room.past_games == ["one", "two"] and room.version == 3
            stored = await a.get("LOSTC")
            assert stored is not None and stored.past_games == ["one", "two"]
        finally:
            await a.stop()

    asyncio.run(main())


def test_a_refusal_on_a_stale_copy_is_checked_unless_the_move_is_stale_anyway(
    redis_url: str, prefix: str
) -> None:
    """A change refused on the cached room may only be refused because the cache is behind: it is
    tried again on the stored room. A move that answers an older state than even the cached one is
    refused at once (a room's seq only grows), without a round trip to Redis."""

    async def main() -> None:
        a, b, _, _ = await pair(redis_url, prefix)
        try:
            await a.insert(capitol_room("STALE"))
            room, _ = await a.update("STALE", lambda r: r.start(time.time(), seed=3))
            old_seq = room.seq
            seat = min(room.state.waiting_for())  # type: ignore[union-attr]
            move = room.state.legal_actions(seat)[0]  # type: ignore[union-attr]
            await a.update("STALE", lambda r: r.act(seat, move, old_seq, time.time()))
            asked = 0
            current_version = a.storage.current_version

            async def counted(code: str) -> int | None:
                nonlocal asked
                asked += 1
                return await current_version(code)

            a.storage.current_version = counted  # type: ignore[method-assign]
            with pytest.raises(RoomError) as err:
                await a.update("STALE", lambda r: r.act(seat, move, old_seq, time.time()))
            assert err.value.code == "stale" and asked == 0

            # Now A's copy is behind B's change: a refusal on it is checked and the change retried.
            stale_copy = a.storage.cache["STALE"].copy()
            await b.update("STALE", lambda r: r.past_games.append("b"))
            a.storage.cache["STALE"] = stale_copy

            def needs_b(r: Room) -> None:
                if not r.past_games:
                    raise RoomError(409, "not_yet", "refused on a room without B's change")
                r.past_games.append("a")

            changed, _ = await a.update("STALE", needs_b)
            assert asked == 1 and changed.past_games == ["b", "a"]
        finally:
            await a.stop()
            await b.stop()

    asyncio.run(main())


def test_the_log_is_kept_beside_the_snapshot_and_read_back_whole(redis_url: str, prefix: str) -> None:
    """A save carries the moves it adds, not the whole game: the log lives in a list next to the
    room. Another process reads the room back identical (log, initial state, game), a rematch starts
    a new log, and a change refused by the version check appends nothing."""

    async def main() -> None:
        a, b, _, _ = await pair(redis_url, prefix)
        try:
            await a.insert(capitol_room("LOGGD"))
            room, _ = await a.update("LOGGD", lambda r: r.start(time.time(), seed=11))
            for _ in range(8):  # (a 2-player game lasts longer than 9 moves)
                assert room.state is not None and not room.state.is_over()
                seat = min(room.state.waiting_for())
                move = room.state.legal_actions(seat)[0]
                seq = room.seq
                room, _ = await a.update(
                    "LOGGD", lambda r, s=seat, m=move, q=seq: r.act(s, m, q, time.time())
                )
            moves = len(room.actions)
            assert moves >= 5
            records = await a.redis.lrange(a.keys.log("LOGGD"), 0, -1)
            assert len(records) == moves  # one record per move, each appended once
            data = await a.redis.hget(a.keys.room("LOGGD"), "data")
            assert b'"actions"' not in data and len(data) < 4000
            read = await b.get("LOGGD")
            assert read is not None and read.snapshot() == room.snapshot()
            # A stale save (B's copy is behind) is refused by the version check: the move it
            # carried is not appended; tried again on the current room, it is appended once.
            assert room.state is not None and not room.state.is_over()
            stale = read.copy()
            await a.update("LOGGD", lambda r: r.past_games.append("a"))
            b.storage.cache["LOGGD"] = stale
            seat = min(room.state.waiting_for())
            move = room.state.legal_actions(seat)[0]
            seq = room.seq
            moved, _ = await b.update("LOGGD", lambda r: r.act(seat, move, seq, time.time()))
            assert b.conflicts == 1 and len(moved.actions) == moves + 1
            assert await a.redis.llen(a.keys.log("LOGGD")) == moves + 1
            room = moved
            moves += 1
            # A new game starts a new log and a new initial state.
            first_initial = room.initial_json

            def end_and_start_again(r: Room) -> None:
                r.status = RoomStatus.OVER
                r.rematch()
                r.start(time.time(), seed=12)

            again, _ = await a.update("LOGGD", end_and_start_again)
            assert again.actions == [] and again.initial_json != first_initial
            assert await a.redis.llen(a.keys.log("LOGGD")) == 0
            read = await b.get("LOGGD")
            assert read is not None and read.snapshot() == again.snapshot()
        finally:
            await a.stop()
            await b.stop()

    asyncio.run(main())


def test_letting_go_of_a_room_and_following_it_again_at_once_keeps_it_followed(
    redis_url: str, prefix: str
) -> None:
    """A socket closes and another opens in the same room at once: the unfollow's steps in Redis
    must not land after the follow's (the process would think it follows a room it no longer hears)."""

    async def main() -> None:
        a, seen_a = await alone(redis_url, prefix)
        b, _ = await alone(redis_url, prefix)
        try:
            await b.insert(capitol_room("TWICE"))
            await a.watch("TWICE")
            await eventually(lambda: ("TWICE", 1, False) in seen_a.events)
            original = a.redis.pipeline
            delays = [0.2]  # the first pipeline opened from here on (the unfollow's) is slow

            def slow_pipeline(*args: Any, **kwargs: Any) -> Any:
                pipe = original(*args, **kwargs)
                if delays:
                    delay, execute = delays.pop(), pipe.execute

                    async def late(*a_: Any, **k_: Any) -> Any:
                        await asyncio.sleep(delay)
                        return await execute(*a_, **k_)

                    pipe.execute = late
                return pipe

            a.redis.pipeline = slow_pipeline  # type: ignore[method-assign]
            a.channels.interested = lambda code: False
            await asyncio.gather(a.unwatch("TWICE"), a.watch("TWICE"))
            a.channels.interested = lambda code: True
            followers = await followers_of(b, "TWICE")
            assert a.process in followers and "TWICE" in a.channels.following
            await subscribed(b, "TWICE")
            await b.update("TWICE", lambda r: r.past_games.append("heard"))
            await eventually(lambda: ("TWICE", 2, False) in seen_a.events)
        finally:
            await a.stop()
            await b.stop()

    asyncio.run(main())


def test_a_process_taken_for_dead_too_soon_registers_again(redis_url: str, prefix: str) -> None:
    """A process whose event loop stalled past its lease is reaped by another one: its follows and
    its sockets' presence are removed. When its heartbeat comes back it puts them back, and the
    others count its seats as connected again."""

    async def main() -> None:
        a, b, _, _ = await pair(redis_url, prefix, lease=0.5)
        try:
            await b.insert(capitol_room("REAPD"))
            await a.watch("REAPD")
            await a.presence("REAPD", "seat-a", True)
            await eventually(lambda: b.remote_seats("REAPD") == {"seat-a"})
            # A stalls: no heartbeat; B reaps it.
            a_tasks = a._tasks
            for task in a_tasks:
                task.cancel()
            await eventually(lambda: b.remote_seats("REAPD") == set())
            followers = await followers_of(b, "REAPD")
            assert a.process not in followers
            # A's loop runs again: its next heartbeat finds it was reaped and registers again.
            await a.leases.heartbeat()
            followers = await followers_of(b, "REAPD")
            assert a.process in followers
            await eventually(lambda: b.remote_seats("REAPD") == {"seat-a"})
        finally:
            await a.stop()
            await b.stop()

    asyncio.run(main())


def test_a_room_stored_with_its_log_inside_the_snapshot_is_read_and_converted(
    redis_url: str, prefix: str
) -> None:
    """Rooms saved by the previous version kept the log inside the snapshot: they are read whole,
    and their next save writes the whole log to the list."""

    async def main() -> None:
        a, _ = await alone(redis_url, prefix)
        b, _ = await alone(redis_url, prefix)
        try:
            room = capitol_room("OLDFM")
            room.start(time.time(), seed=4)
            for _ in range(4):
                assert room.state is not None
                seat = min(room.state.waiting_for())
                room.act(seat, room.state.legal_actions(seat)[0], room.seq, time.time())
            room.version = 7
            old_format = {"v": 7, "data": msgspec.json.encode(room.snapshot())}
            await a.redis.hset(a.keys.room("OLDFM"), mapping=old_format)  # type: ignore[arg-type]
            await a.redis.sadd(f"{prefix}rooms", "OLDFM")
            read = await a.get("OLDFM")
            assert read is not None and read.snapshot() == room.snapshot()
            changed, _ = await a.update("OLDFM", lambda r: r.past_games.append("x"))
            assert await a.redis.llen(a.keys.log("OLDFM")) == len(room.actions) == 4
            again = await b.get("OLDFM")
            assert again is not None and again.snapshot() == changed.snapshot()
            assert again.initial_json == room.initial_json
        finally:
            await a.stop()
            await b.stop()

    asyncio.run(main())


def test_a_listing_reads_all_rooms_in_one_pipeline_and_caches_none(redis_url: str, prefix: str) -> None:
    """GET /api/rooms and a live game's lookup read every room: in one pipeline (after the set of
    codes), without the logs, and without filling the cache of a process that does not follow those rooms."""

    async def main() -> None:
        a, _ = await alone(redis_url, prefix)
        b, _ = await alone(redis_url, prefix)
        try:
            for i in range(5):
                await a.insert(capitol_room(f"LIST{i}"))
            await a.update("LIST2", lambda r: r.start(time.time(), seed=2))
            sends = 0
            execute = type(b.redis.pipeline()).execute

            async def counted(pipe: Any, *args: Any, **kwargs: Any) -> Any:
                nonlocal sends
                sends += 1
                return await execute(pipe, *args, **kwargs)

            original = b.redis.pipeline

            def pipeline(*args: Any, **kwargs: Any) -> Any:
                pipe = original(*args, **kwargs)
                pipe.execute = lambda *x, **k: counted(pipe, *x, **k)
                return pipe

            b.redis.pipeline = pipeline  # type: ignore[method-assign]
            rooms = await b.summaries()
            assert sends == 1
            assert [r.code for r in rooms] == [f"LIST{i}" for i in range(5)]
            playing = rooms[2]
            stored = await a.get("LIST2")
            assert stored is not None and playing.version == stored.version
            assert playing.status is RoomStatus.PLAYING and playing.game_id == stored.game_id
            assert playing.state is not None and playing.state.to_json() == stored.state.to_json()  # type: ignore[union-attr]
            assert b.storage.cache == {}
            # The process that holds a room gives its own (current) copy.
            mine = await a.summaries()
            assert mine[2] is a.storage.cache["LIST2"]
        finally:
            await a.stop()
            await b.stop()

    asyncio.run(main())


def test_a_follower_reads_only_the_moves_it_has_not_seen(redis_url: str, prefix: str) -> None:
    """A process that follows a room another process plays (the owner is whoever created the room;
    its sockets may be elsewhere) reads, per announced move, the new state and the new moves only —
    not the whole log again, and without first asking for the version it was just told of. A new
    game is read whole."""

    async def main() -> None:
        a, _ = await alone(redis_url, prefix)
        b, seen_b = await alone(redis_url, prefix)
        try:
            await a.insert(capitol_room("TAILS"))
            await b.watch("TAILS")
            await eventually(lambda: ("TAILS", 1, False) in seen_b.events)
            starts: list[int] = []
            hgets = 0
            read, hget = b.storage.read, b.redis.hget

            async def counted_read(code: str, start: int = 0) -> Any:
                starts.append(start)
                return await read(code, start)

            async def counted_hget(*args: Any) -> Any:
                nonlocal hgets
                hgets += 1
                return await hget(*args)

            b.storage.read = counted_read  # type: ignore[method-assign]
            b.redis.hget = counted_hget  # type: ignore[method-assign]
            room, _ = await a.update("TAILS", lambda r: r.start(time.time(), seed=8))
            await eventually(lambda: ("TAILS", room.version, False) in seen_b.events)
            for _ in range(6):
                assert room.state is not None and not room.state.is_over()
                seat = min(room.state.waiting_for())
                move, seq = room.state.legal_actions(seat)[0], room.seq
                room, _ = await a.update(
                    "TAILS", lambda r, s=seat, m=move, q=seq: r.act(s, m, q, time.time())
                )
                await eventually(lambda v=room.version: ("TAILS", v, False) in seen_b.events)
            assert hgets == 0
            assert starts[0] == 0 and starts[1:] == list(range(0, 6))  # the start, then one new move each
            followed = b.storage.cache["TAILS"]
            assert followed.snapshot() == room.snapshot()

            def new_game(r: Room) -> None:
                r.status = RoomStatus.OVER
                r.rematch()
                r.start(time.time(), seed=9)

            again, _ = await a.update("TAILS", new_game)
            await eventually(lambda: ("TAILS", again.version, False) in seen_b.events)
            assert starts[-2:] == [6, 0]  # the tail of the old game's log, then the new game whole
            assert b.storage.cache["TAILS"].snapshot() == again.snapshot()
        finally:
            await a.stop()
            await b.stop()

    asyncio.run(main())


def test_per_address_budgets_are_shared_by_every_process(redis_url: str, prefix: str) -> None:
    """Behind a balancer a client's requests reach every process: its guesses at room codes (and
    the rooms it makes) come out of one budget kept in Redis, not one per process."""

    async def main() -> None:
        a, _ = await alone(redis_url, prefix)
        b, _ = await alone(redis_url, prefix)
        try:
            on_a, on_b = a.budget("guess", 1 / 600, 4), b.budget("guess", 1 / 600, 4)
            taken = [await (on_a if i % 2 else on_b).take("198.51.100.7") for i in range(6)]
            assert taken[:4] == [None] * 4
            assert taken[4] is not None and 1 <= taken[4] <= 600 and taken[5] is not None
            await on_a.refund("198.51.100.7")  # a request that found its room gives its guess back
            assert await on_b.take("198.51.100.7") is None
            assert await on_a.take("198.51.100.8") is None  # another address has its own
            # An IPv6 household's /64s share a wider budget (16 times one).
            household = [await on_a.take(f"2001:db8:5:{n:x}::/64") for n in range(20) for _ in range(4)]
            assert household.count(None) == 64
        finally:
            await a.stop()
            await b.stop()

    asyncio.run(main())
