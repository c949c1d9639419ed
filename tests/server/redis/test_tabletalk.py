"""Table talk across processes: two servers share one Redis. A reaction sent through one reaches
the sockets of the other; a hold made through the process that does not own the room is ended by
the owner's timer, and the host's pause and resume, asked of either, move the deadline for all."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from redis_helpers import clear_prefix, new_prefix, redis_server
from server_helpers import Player, auth, make_table, register_toy, start, thread_server

pytestmark = pytest.mark.redis


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


def test_reactions_and_stopped_clocks_across_processes(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_toy(monkeypatch)
    prefix = new_prefix()
    shared = {"redis_url": redis_url, "redis_prefix": prefix, "grace_seconds": 600.0, "reaction_burst": 2.0}
    try:
        with thread_server(tmp_path, **shared) as a, thread_server(tmp_path, **shared) as b:
            settings = {"turn_seconds": 60, "response_seconds": 60, "choice_seconds": 60, "hold_seconds": 1}
            table = make_table(a, "toy", humans=2, options={"cards": 2}, settings=settings)
            p0 = Player(a, table.code, table.tokens[0], 0)
            p1 = Player(b, table.code, table.tokens[1], 1)
            watcher = Player(a, table.code, None, None)
            start(table)
            first = p1.wait_for(lambda m: m["type"] == "state")
            watcher.wait_for(lambda m: m["type"] == "state")
            deadline = first["deadline"]
            hub_a, hub_b = a.app.state.hub, b.app.state.hub

            # A reaction through B reaches A's sockets, and one through A reaches B's.
            p1.send({"type": "react", "emoji": "🤔"})
            for p in (p0, watcher, p1):
                assert p.wait_for(lambda m: m["type"] == "reaction") == {
                    "type": "reaction", "seat": 1, "emoji": "🤔"}  # fmt: skip
            p0.send({"type": "react", "emoji": "😂"})
            assert p1.wait_for(lambda m: m["type"] == "reaction")["seat"] == 0
            # The seat's budget is shared: seat 1's second socket, on A, has one reaction left.
            p1_on_a = Player(a, table.code, table.tokens[1], 1)
            p1_on_a.send({"type": "react", "emoji": "👍"})
            assert p0.wait_for(lambda m: m["type"] == "reaction" and m["emoji"] != "😂")["emoji"] == "👍"
            p1_on_a.send({"type": "react", "emoji": "👍"})
            assert p1_on_a.wait_for(lambda m: m["type"] == "error")["code"] == "rate_limited"

            # A hold through B: the owner (A) ends it, and the deadline moved by the hold for all.
            p1.send({"type": "hold"})
            for p in (p0, p1, watcher):
                msg = p.wait_for(lambda m: m["type"] == "state" and m["pause"] is not None)
                assert msg["pause"]["kind"] == "hold" and msg["pause"]["seat"] == 1
                assert msg["deadline"] is None
            assert "hold" in hub_a.tasks.get(table.code, {}) and not hub_b.tasks.get(table.code)
            for p in (p0, p1, watcher):
                msg = p.wait_for(lambda m: m["type"] == "state" and m["pause"] is None)
                assert msg["deadline"] == pytest.approx(deadline + 1, abs=1e-6) and msg["holds"] == [1]

            # The host's pause asked of B, the resume of A.
            with b.http() as http:
                r = http.post(f"/api/rooms/{table.code}/pause", headers=auth(table.host_token))
                assert r.status_code == 200, r.text
            left = r.json()["pause"]["left"]
            for p in (p0, p1, watcher):
                msg = p.wait_for(lambda m: m["type"] == "state" and m["pause"] is not None)
                assert msg["pause"]["kind"] == "host" and msg["deadline"] is None
            assert "timer" not in hub_a.tasks.get(table.code, {})
            before = time.time()
            with a.http() as http:
                r = http.post(f"/api/rooms/{table.code}/resume", headers=auth(table.host_token))
            after = time.time()
            assert r.status_code == 200 and before - 0.01 <= r.json()["deadline"] - left <= after + 0.01
            msg = p1.wait_for(lambda m: m["type"] == "state" and m["pause"] is None)
            assert msg["deadline"] == r.json()["deadline"]
            assert "timer" in hub_a.tasks.get(table.code, {})
            for p in (p0, p1, watcher, p1_on_a):
                p.close()
    finally:
        clear_prefix(redis_url, prefix)
