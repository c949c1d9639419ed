"""Clocks across processes: two servers (two hubs, two event loops) share one Redis; players sit on
both and never act, so the decision clocks play the whole (toy) game. Only the room's owner holds
clock tasks, every timeout lands once, and the game ends and is archived once."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from redis_helpers import clear_prefix, new_prefix, redis_server
from server_helpers import (
    Player,
    auth,
    check_no_leaks,
    eventually,
    make_table,
    register_toy,
    start,
    thread_server,
)

pytestmark = pytest.mark.redis


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


def test_clocks_fire_exactly_once_across_processes(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_toy(monkeypatch)
    prefix = new_prefix()
    shared = {"redis_url": redis_url, "redis_prefix": prefix, "grace_seconds": 600.0}
    try:
        with thread_server(tmp_path, **shared) as a, thread_server(tmp_path, **shared) as b:
            settings = {"turn_seconds": 1, "response_seconds": 1, "choice_seconds": 1}
            table = make_table(a, "toy", humans=2, options={"cards": 2}, settings=settings)
            p0 = Player(a, table.code, table.tokens[0], 0)
            p1 = Player(b, table.code, table.tokens[1], 1)
            start(table)
            first = p1.wait_for(lambda m: m["type"] == "state")
            assert first["deadline"] is not None
            hub_a, hub_b = a.app.state.hub, b.app.state.hub
            # The owner (A made the room) runs the clock; B, which only relays, holds no task.
            assert "timer" in hub_a.tasks.get(table.code, {})
            assert not hub_b.tasks.get(table.code)
            deadline = time.time() + 180  # (a few 1 s clocks: generous for a loaded machine)
            while httpx.get(f"{b.url}/api/rooms/{table.code}", timeout=60).json()["status"] != "over":
                assert time.time() < deadline, "the clocks did not finish the game"
                assert not hub_b.tasks.get(table.code)
                time.sleep(0.2)
            game_id = first["room"]["game_id"]
            # The archive is written after the game's end is shown: waited for.
            record = eventually(
                lambda: httpx.get(
                    f"{b.url}/api/games/{game_id}", headers=auth(table.host_token), timeout=60
                ).json(),
                lambda got: got.get("status") == "over",
            )
            seqs = [x["seq"] for x in record["actions"]]
            assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
            assert {x["by"] for x in record["actions"]} == {"timeout"}
            # Both sockets saw every state, in order (a seat coming online re-sends the same seq).
            for p in (p0, p1):
                states = [m["seq"] for m in p.messages if m["type"] == "state"]
                assert states == sorted(states) and len(set(states)) >= len(seqs)
            assert check_no_leaks(record, [(0, p0.messages), (1, p1.messages)]) > 0
            p0.close()
            p1.close()
    finally:
        clear_prefix(redis_url, prefix)
