"""Finished games' answers (server/replay_cache.py): identical builds merged, kept as bytes within a
budget per answer and in all, built off the event loop, at most so many different builds at once."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from typing import Any

import pytest

from conflictology import games, replay
from conflictology.server.replay_builds import ThreadBuilds
from conflictology.server.replay_cache import Encoded, Kind, ReplayCache, build, encode, encode_game
from conflictology.server.rooms import RoomError
from test_replay import random_record


class Builder:
    """A builder that counts its builds and holds each until released (never a wall-clock wait)."""

    def __init__(self, size: int = 100) -> None:
        self.size = size
        self.builds: list[tuple[Kind, str]] = []
        self.threads: set[int] = set()
        self.release = threading.Event()

    def __call__(self, kind: Kind, record: dict[str, Any]) -> Encoded:
        self.builds.append((kind, record["id"]))
        self.threads.add(threading.get_ident())
        assert self.release.wait(30)
        return Encoded(b"x" * self.size, b"", "f.txt")


def record_of(game_id: str) -> Callable[[], Any]:
    async def load() -> dict[str, Any]:
        return {"id": game_id}

    return load


def test_concurrent_requests_for_one_game_build_it_once() -> None:
    async def main() -> None:
        builder = Builder()
        cache = ReplayCache(ThreadBuilds(builder))
        asks = [asyncio.ensure_future(cache.get("g1", record_of("g1"))) for _ in range(5)]
        while not builder.builds:  # the one build has started (in its thread)
            await asyncio.sleep(0)
        for _ in range(20):
            await asyncio.sleep(0)
        assert builder.builds == [("replay", "g1")]
        builder.release.set()
        answers = await asyncio.gather(*asks)
        assert all(a is answers[0] for a in answers)
        assert (await cache.get("g1", record_of("g1"))) is answers[0]  # kept: no second build
        assert builder.builds == [("replay", "g1")]
        assert threading.get_ident() not in builder.threads  # never on the event loop's thread

    asyncio.run(main())


def test_a_games_replay_and_its_export_are_two_answers() -> None:
    async def main() -> None:
        builder = Builder()
        builder.release.set()
        cache = ReplayCache(ThreadBuilds(builder))
        await cache.get("g1", record_of("g1"))
        await cache.get("g1", record_of("g1"), "game")
        await cache.get("g1", record_of("g1"), "game")
        assert builder.builds == [("replay", "g1"), ("game", "g1")]
        assert cache.kept("g1") and cache.kept("g1", "game") and cache.kept_bytes == 200

    asyncio.run(main())


def test_a_kept_answer_does_not_read_the_record() -> None:
    reads: list[str] = []

    async def load() -> dict[str, Any]:
        reads.append("read")
        return {"id": "g1"}

    async def main() -> None:
        builder = Builder()
        builder.release.set()
        cache = ReplayCache(ThreadBuilds(builder))
        for _ in range(3):
            await cache.get("g1", load)
        assert reads == ["read"]

    asyncio.run(main())


def test_a_requester_who_leaves_does_not_cancel_the_build_for_the_others() -> None:
    async def main() -> None:
        builder = Builder()
        cache = ReplayCache(ThreadBuilds(builder))
        first = asyncio.ensure_future(cache.get("g1", record_of("g1")))
        second = asyncio.ensure_future(cache.get("g1", record_of("g1")))
        while not builder.builds:
            await asyncio.sleep(0)
        first.cancel()
        builder.release.set()
        assert (await second).size == 100
        assert builder.builds == [("replay", "g1")]

    asyncio.run(main())


def test_too_many_different_builds_at_once_are_refused_until_one_ends() -> None:
    async def main() -> None:
        builder = Builder()
        cache = ReplayCache(ThreadBuilds(builder), max_builds=2)
        asks = [asyncio.ensure_future(cache.get(g, record_of(g))) for g in ("a", "b")]
        same = asyncio.ensure_future(cache.get("a", record_of("a")))  # merged: no new build
        await asyncio.sleep(0)
        with pytest.raises(RoomError) as refused:
            await cache.get("c", record_of("c"))
        assert (refused.value.status, refused.value.code) == (503, "replay_busy")
        builder.release.set()
        await asyncio.gather(*asks, same)
        assert (await cache.get("c", record_of("c"))).size == 100
        assert sorted(builder.builds) == [("replay", "a"), ("replay", "b"), ("replay", "c")]

    asyncio.run(main())


def test_the_cache_keeps_within_its_budget_and_evicts_the_least_recent() -> None:
    async def main() -> None:
        builder = Builder(size=400)
        builder.release.set()
        cache = ReplayCache(ThreadBuilds(builder), budget=1000, per_replay=500)
        for name in ("a", "b"):
            await cache.get(name, record_of(name))
        await cache.get("a", record_of("a"))  # a is now the most recent
        await cache.get("c", record_of("c"))
        assert cache.kept_bytes <= 1000
        assert cache.kept("a") and cache.kept("c") and not cache.kept("b")
        await cache.get("b", record_of("b"))
        assert [g for _, g in builder.builds] == ["a", "b", "c", "b"]

    asyncio.run(main())


def test_a_replay_over_the_per_replay_bound_is_sent_but_not_kept() -> None:
    async def main() -> None:
        builder = Builder(size=600)
        builder.release.set()
        cache = ReplayCache(ThreadBuilds(builder), budget=1000, per_replay=500)
        assert (await cache.get("big", record_of("big"))).size == 600
        assert not cache.kept("big") and cache.kept_bytes == 0

    asyncio.run(main())


def test_a_failed_build_is_not_kept_and_is_tried_again() -> None:
    calls: list[int] = []

    def broken(kind: Kind, record: dict[str, Any]) -> Encoded:
        calls.append(1)
        raise ValueError("bad record")

    async def main() -> None:
        cache = ReplayCache(ThreadBuilds(broken))
        for _ in range(2):
            with pytest.raises(ValueError, match="bad record"):
                await cache.get("g", record_of("g"))
        assert len(calls) == 2 and cache.kept_bytes == 0

    asyncio.run(main())


def test_the_bounds_must_fit() -> None:
    with pytest.raises(ValueError, match="per_replay"):
        ReplayCache(ThreadBuilds(), budget=10, per_replay=11)
    with pytest.raises(ValueError, match="max_builds"):
        ReplayCache(ThreadBuilds(), max_builds=0)


def test_encode_sends_the_replay_and_its_text_record() -> None:
    record, _ = random_record("capitol", 3, 1)
    encoded = encode(record)
    assert build("replay", record) == encoded
    assert json.loads(encoded.json) == json.loads(json.dumps(replay.build(record)))
    assert encoded.text.decode() == replay.text_record(replay.build(record))
    assert encoded.filename == "conflictology-capitol-g1.txt"


def test_encode_game_sends_the_finished_game_whole_but_its_keys() -> None:
    record, states = random_record("capitol", 3, 1)
    final = states[-1]
    record.update(
        final=final.to_json(), options={}, winners=final.winners(), log=final.view(None)["log"], keys=["k"]
    )
    sent = json.loads(encode_game(record).json)
    assert build("game", record) == encode_game(record)
    assert sent["status"] == "over" and sent["actions"] == record["actions"]
    assert sent["final_views"] == [json.loads(json.dumps(final.view(i))) for i in range(3)]
    assert "keys" not in sent and games.get("capitol").from_json(sent["initial"]) is not None
    with pytest.raises(ValueError, match="no such answer"):
        build("other", record)  # type: ignore[arg-type]
