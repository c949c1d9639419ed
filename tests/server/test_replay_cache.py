"""Finished games' replays (server/replay_cache.py): identical builds merged, kept as bytes within a
budget per replay and in all, built off the event loop."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from conflictology.server.replay_cache import Encoded, ReplayCache, encode
from test_replay import random_record


class Builder:
    """A builder that counts its builds and holds each until released (never a wall-clock wait)."""

    def __init__(self, size: int = 100) -> None:
        self.size = size
        self.builds: list[str] = []
        self.threads: set[int] = set()
        self.release = threading.Event()

    def __call__(self, record: dict[str, Any]) -> Encoded:
        self.builds.append(record["id"])
        self.threads.add(threading.get_ident())
        assert self.release.wait(30)
        return Encoded(b"x" * self.size, b"", "f.txt")


def test_concurrent_requests_for_one_game_build_it_once() -> None:
    async def main() -> None:
        builder = Builder()
        cache = ReplayCache(builder)
        asks = [asyncio.ensure_future(cache.get("g1", {"id": "g1"})) for _ in range(5)]
        while not builder.builds:  # the one build has started (in its thread)
            await asyncio.sleep(0)
        for _ in range(20):
            await asyncio.sleep(0)
        assert builder.builds == ["g1"]
        builder.release.set()
        answers = await asyncio.gather(*asks)
        assert all(a is answers[0] for a in answers)
        assert (await cache.get("g1", {"id": "g1"})) is answers[0]  # kept: no second build
        assert builder.builds == ["g1"]
        assert threading.get_ident() not in builder.threads  # never on the event loop's thread

    asyncio.run(main())


def test_a_requester_who_leaves_does_not_cancel_the_build_for_the_others() -> None:
    async def main() -> None:
        builder = Builder()
        cache = ReplayCache(builder)
        first = asyncio.ensure_future(cache.get("g1", {"id": "g1"}))
        second = asyncio.ensure_future(cache.get("g1", {"id": "g1"}))
        while not builder.builds:
            await asyncio.sleep(0)
        first.cancel()
        builder.release.set()
        assert (await second).size == 100
        assert builder.builds == ["g1"]

    asyncio.run(main())


def test_the_cache_keeps_within_its_budget_and_evicts_the_least_recent() -> None:
    async def main() -> None:
        builder = Builder(size=400)
        builder.release.set()
        cache = ReplayCache(builder, budget=1000, per_replay=500)
        for name in ("a", "b"):
            await cache.get(name, {"id": name})
        await cache.get("a", {"id": "a"})  # a is now the most recent
        await cache.get("c", {"id": "c"})
        assert cache.kept_bytes <= 1000
        assert "a" in cache and "c" in cache and "b" not in cache
        await cache.get("b", {"id": "b"})
        assert builder.builds == ["a", "b", "c", "b"]

    asyncio.run(main())


def test_a_replay_over_the_per_replay_bound_is_sent_but_not_kept() -> None:
    async def main() -> None:
        builder = Builder(size=600)
        builder.release.set()
        cache = ReplayCache(builder, budget=1000, per_replay=500)
        assert (await cache.get("big", {"id": "big"})).size == 600
        assert "big" not in cache and cache.kept_bytes == 0

    asyncio.run(main())


def test_a_failed_build_is_not_kept_and_is_tried_again() -> None:
    calls: list[int] = []

    def broken(record: dict[str, Any]) -> Encoded:
        calls.append(1)
        raise ValueError("bad record")

    async def main() -> None:
        cache = ReplayCache(broken)
        for _ in range(2):
            with pytest.raises(ValueError, match="bad record"):
                await cache.get("g", {"id": "g"})
        assert len(calls) == 2 and cache.kept_bytes == 0

    asyncio.run(main())


def test_the_bounds_must_fit() -> None:
    with pytest.raises(ValueError, match="per_replay"):
        ReplayCache(encode, budget=10, per_replay=11)


def test_encode_sends_the_replay_and_its_text_record() -> None:
    import json

    from conflictology import replay

    record, _ = random_record("capitol", 3, 1)
    encoded = encode(record)
    assert json.loads(encoded.json) == json.loads(json.dumps(replay.build(record)))
    assert encoded.text.decode() == replay.text_record(replay.build(record))
    assert encoded.filename == "conflictology-capitol-g1.txt"
