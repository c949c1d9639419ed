"""archive.py's writer of the shared queue (the Redis queue's part played by a dict here): a game
waits while the database refuses, however many tries; one that ends while Redis does not answer is
held by its process; a process that stops with games queued leaves them to the next."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from sqlalchemy.exc import OperationalError

from conflictology.server.archive import Archiver
from conflictology.server.store import Store


class FakeQueue:
    def __init__(self) -> None:
        self.records: dict[str, dict[str, Any]] = {}
        self.queued: dict[str, float] = {}
        self.down = False

    def _check(self) -> None:
        if self.down:
            raise ConnectionError("Redis does not answer")

    async def put(self, records: list[dict[str, Any]]) -> None:
        self._check()
        for r in records:
            self.records[r["id"]] = r
            self.queued.setdefault(r["id"], time.time())

    async def oldest(self, limit: int) -> list[dict[str, Any]]:
        self._check()
        return [self.records[g] for g in sorted(self.queued, key=self.queued.__getitem__)[:limit]]

    async def remove(self, game_ids: list[str]) -> None:
        self._check()
        for g in game_ids:
            self.records.pop(g, None)
            self.queued.pop(g, None)

    async def waiting(self) -> tuple[int, float | None]:
        self._check()
        return len(self.queued), min(self.queued.values(), default=None)


class RefusingStore(Store):
    refuse = True

    def archive_many(self, records: list[dict[str, Any]]) -> None:
        if self.refuse:
            raise OperationalError("INSERT", {}, Exception("connection refused"))
        super().archive_many(records)

    def ping(self) -> None:
        if self.refuse:
            raise OperationalError("SELECT 1", {}, Exception("connection refused"))
        super().ping()


def record(game_id: str) -> dict[str, Any]:
    return {"id": game_id, "room": "QUEUE", "game": "capitol", "public": True, "finished": time.time()}


def test_games_wait_through_both_outages_and_the_next_process_writes_them(tmp_path: Path) -> None:
    store = RefusingStore(f"sqlite:///{tmp_path / 'queue.sqlite3'}")
    queue = FakeQueue()

    async def main() -> None:
        first = Archiver(store, queue)
        queue.down = True
        first.queue_record(record("g1"))
        await first.drain()
        # Neither Redis nor the database took it: held by this process, and said so.
        assert set(first.held) == {"g1"} and not first.database_ok()
        queue.down = False
        for _ in range(10):  # more tries than the old writer allowed
            await first.drain()
        assert set(queue.records) == {"g1"} and first.held == {}
        assert first.stats().waiting == 1 and first.failures > 5
        first.queue_record(record("g2"))
        await first.drain()
        assert first.stats().waiting == 2
        await first.stop()  # a process that goes with games queued: they stay in the queue
        assert set(queue.records) == {"g1", "g2"}

        store.refuse = False
        second = Archiver(store, queue)
        await second.drain()
        assert queue.records == {} and second.database_ok() and second.stats().waiting == 0
        await second.drain()  # written again by a late process: still once
        await asyncio.to_thread(store.archive_many, [record("g1")])

    try:
        asyncio.run(main())
        assert store.get_game("g1") is not None and store.get_game("g2") is not None
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("select count(*) from conflictology_games").scalar() == 2
    finally:
        store.close()


def test_a_game_another_process_archived_is_no_longer_waited_on(tmp_path: Path) -> None:
    """A process remembers the games it ended until they are written: a reader of the archive
    flushes them first. Written by another process instead, they must leave that memory, or every
    later read waits on a Redis round trip and a database ping for good (and the set only grows)."""
    store = RefusingStore(f"sqlite:///{tmp_path / 'queue.sqlite3'}")
    queue = FakeQueue()

    async def main() -> None:
        first, second = Archiver(store, queue), Archiver(store, queue)
        store.refuse = True
        first.queue_record(record("g1"))
        await first.drain()  # queued in Redis, the database refusing
        assert first.mine == {"g1"} and set(queue.records) == {"g1"}
        store.refuse = False
        await second.drain()  # the other process writes it
        assert queue.records == {}
        await first.drain()
        assert first.mine == set()
        queue.down = True  # Redis silent: nothing is known about the queue, nothing is forgotten
        first.queue_record(record("g2"))
        store.refuse = True
        await first.drain()
        assert "g2" in first.mine

    asyncio.run(main())
