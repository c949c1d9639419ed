"""The production shape: two processes, rooms in Redis, the archive in PostgreSQL through a plain
``postgresql://`` URL (the same SQLAlchemy code as SQLite). Runs against POSTGRES_URL or the local
trust-auth server; skipped where no PostgreSQL answers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conflictology.server.store import Store
from postgres_helpers import plain_postgres_url
from redis_helpers import clear_prefix, new_prefix, redis_server
from server_helpers import (
    Player,
    ServerProcess,
    check_no_leaks,
    eventually,
    make_table,
    play_randomly,
    start,
)

pytestmark = [pytest.mark.redis, pytest.mark.postgres]

@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


def test_two_processes_archive_to_postgresql(redis_url: str, tmp_path: Path) -> None:
    pg = plain_postgres_url()
    if pg is None:
        pytest.skip("no PostgreSQL server answers (set POSTGRES_URL)")
    prefix = new_prefix()
    args = ("--redis", redis_url, "--redis-prefix", prefix, "--bot-delay", "0.02")
    a = ServerProcess(pg, None, *args)
    b = ServerProcess(pg, None, *args)
    try:
        table = make_table(
            a.server, "capitol", humans=2, bots=1, level="random", settings={"timers": False, "public": True}
        )
        p0 = Player(a.server, table.code, table.tokens[0], 0)
        p1 = Player(b.server, table.code, table.tokens[1], 1)
        start(table)
        play_randomly([p0, p1], seed=3, timeout=120)
        game_id = httpx.get(f"{b.url}/api/rooms/{table.code}", timeout=60).json()["game_id"]
        # Archived once, in PostgreSQL, readable from either process and from the database itself.
        # The archive is written after the last state is sent (from the queue in Redis): waited for.
        store = Store(pg)
        try:
            record = eventually(lambda: store.get_game(game_id), lambda got: got is not None)
            assert record["room"] == table.code
            assert game_id in [g["id"] for g in store.recent_games(limit=200)]
        finally:
            store.close()
        for server in (a, b):
            assert httpx.get(f"{server.url}/api/games/{game_id}", timeout=60).json()["status"] == "over"
        assert check_no_leaks(record, [(0, p0.messages), (1, p1.messages)]) > 0
        p0.close()
        p1.close()
    finally:
        a.stop()
        b.stop()
        clear_prefix(redis_url, prefix)
