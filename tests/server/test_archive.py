"""Finished games while the database refuses, with rooms in this process's memory (issue 31): the
game's end and its archive are one transaction, retried with a capped backoff for as long as the
database refuses (never given up), and written once it answers, each game once. Against a
PostgreSQL of the test's own, stopped as a crash would stop it (``pg_ctl stop -m immediate``)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import psycopg

from conflictology.server.config import ServerConfig
from conflictology.server.hub import Hub
from conflictology.server.protocol import RoomSettings
from conflictology.server.rooms import Room
from conflictology.server.store import Store
from postgres_helpers import OwnPostgres
from server_helpers import free_port


async def until(check: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen in time")
        await asyncio.sleep(0.02)


def record(game_id: str) -> dict[str, Any]:
    return {"id": game_id, "room": "ARCHV", "game": "capitol", "public": True, "finished": time.time()}


def test_games_ended_while_postgresql_is_down_are_archived_with_their_snapshot_once_it_is_back() -> None:
    pg = OwnPostgres(free_port())
    pg.start()
    store = Store(pg.url)
    hub = Hub(ServerConfig(snapshot_seconds=0.01), store)
    ended = [f"outage-{i}" for i in range(3)]

    async def main() -> None:
        await hub.start()
        room, _ = Room.create("ARCHV", "capitol", "Host", None, RoomSettings())
        await hub.backend.insert(room)
        await hub.until_durable()
        await asyncio.to_thread(pg.stop, "immediate")
        # Games ending now, with the change that ends them (made in memory, not shown yet).
        for game_id in ended:
            hub.durability.unarchived[game_id] = record(game_id)
        await hub.backend.update("ARCHV", lambda r: r.past_games.extend(ended))
        await until(lambda: hub.health()["database"] == "failing", "health failing")
        assert hub.durability.archive_stats().waiting == len(ended)
        # More tries than the old writer's five before it gave up; nothing is dropped.
        await until(lambda: hub.durability.snapshot_failures > 6, "many refused writes")
        assert set(hub.durability.unarchived) == set(ended)
        await asyncio.to_thread(pg.start)
        await until(lambda: hub.durability.archive_stats().waiting == 0, "the archive written")
        assert hub.health()["database"] == "ok" and not hub.durability.unarchived
        assert "outage-0" in hub.durability.shown["ARCHV"].past_games  # shown once saved
        # Archived again (a restart finds the finished game): still once.
        await asyncio.to_thread(store.archive, record("outage-0"))
        await hub.stop()

    try:
        asyncio.run(main())
        with psycopg.connect(pg.url, connect_timeout=5) as conn:
            rows = conn.execute("select id, count(*) from conflictology_games group by id").fetchall()
        assert dict(rows) == dict.fromkeys(ended, 1)
        (snapshot,) = store.load_rooms()
        assert snapshot["past_games"][-3:] == ended
    finally:
        store.close()
        pg.close()
