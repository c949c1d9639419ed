"""Games that end while PostgreSQL is down (issue 31), in the production shape: two processes, rooms
in Redis, the archive in a PostgreSQL of the test's own, stopped as a crash would stop it (``pg_ctl
stop -m immediate``). The games go on meanwhile; each finished game waits in Redis, /healthz says
the database is failing and how many wait; one process is killed with games waiting; once
PostgreSQL is back, the other writes them all, each once."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from postgres_helpers import OwnPostgres
from redis_helpers import clear_prefix, new_prefix, redis_server
from server_helpers import Player, ServerProcess, free_port, make_table, play_randomly, start

pytestmark = [pytest.mark.redis, pytest.mark.postgres]


@pytest.fixture()
def redis_url(tmp_path: Path) -> Iterator[str]:
    with redis_server(tmp_path) as url:
        yield url


def wait_until(check: Any, timeout: float = 60.0, what: str = "the condition") -> Any:
    deadline = time.time() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.time() > deadline:
            raise TimeoutError(f"{what} did not happen in time")
        time.sleep(0.1)


def archived_counts(url: str, game_ids: list[str]) -> dict[str, int]:
    with psycopg.connect(url, connect_timeout=5) as conn:
        rows = conn.execute(
            "select id, count(*) from conflictology_games where id = any(%s) group by id", (game_ids,)
        ).fetchall()
    return {row[0]: row[1] for row in rows}


def play_one_game(server: ServerProcess, seed: int) -> str:
    """A game of one player and one bot, played to its end through ``server``; its id."""
    table = make_table(
        server.server, "capitol", humans=1, bots=1, level="random", settings={"timers": False, "public": True}
    )
    player = Player(server.server, table.code, table.tokens[0], 0)
    try:
        start(table)
        play_randomly([player], seed=seed, timeout=120)
    finally:
        player.close()
    game_id = httpx.get(f"{server.url}/api/rooms/{table.code}", timeout=10).json()["game_id"]
    assert isinstance(game_id, str)
    return game_id


def test_games_finished_while_postgresql_is_down_are_archived_once_it_is_back(redis_url: str) -> None:
    pg = OwnPostgres(free_port())
    prefix = new_prefix()
    servers: list[ServerProcess] = []
    try:
        pg.start()
        args = ("--redis", redis_url, "--redis-prefix", prefix, "--bot-delay", "0.01")
        a, b = ServerProcess(pg.url, None, *args), ServerProcess(pg.url, None, *args)
        servers += [a, b]
        before = play_one_game(a, seed=1)
        wait_until(lambda: archived_counts(pg.url, [before]) == {before: 1}, what="the first archive")

        pg.stop("immediate")
        during = [play_one_game(a, seed=10 + i) for i in range(3)]
        # Both processes say so, with the games waiting (they are the deployment's, in Redis).
        for server in (a, b):
            health = wait_until(
                lambda s=server: (
                    (h := httpx.get(f"{s.url}/healthz", timeout=10).json())["archive"]["waiting"]
                    >= len(during)
                    and h["checks"]["database"] == "failing"
                    and h
                ),
                what="health degraded",
            )
            assert health["status"] == "degraded" and health["checks"]["rooms"] == "ok"
            assert httpx.get(f"{server.url}/readyz", timeout=10).status_code == 503
        metrics = httpx.get(f"{a.url}/metrics", timeout=10).text
        assert f"conflictology_archive_waiting {float(len(during))}" in metrics
        assert "conflictology_archive_oldest_seconds" in metrics
        # Longer than the old writer's five quick tries (~1.2 s); then the process that ended them dies.
        wait_until(
            lambda: httpx.get(f"{a.url}/healthz", timeout=10).json()["archive"]["oldest_seconds"] > 2.5,
            what="an outage of a few seconds",
        )
        a.kill()

        pg.start()
        wait_until(
            lambda: archived_counts(pg.url, during) == dict.fromkeys(during, 1),
            what="every game finished during the outage archived",
        )
        assert archived_counts(pg.url, [before, *during]) == dict.fromkeys([before, *during], 1)
        health = wait_until(
            lambda: (h := httpx.get(f"{b.url}/healthz", timeout=10).json())["ok"] and h, what="health ok"
        )
        assert health["archive"] == {"waiting": 0, "oldest_seconds": 0.0}
        for game_id in during:
            record = httpx.get(f"{b.url}/api/games/{game_id}", timeout=10).json()
            assert record["status"] == "over"
    finally:
        for server in servers:
            server.stop()
        pg.close()
        clear_prefix(redis_url, prefix)
