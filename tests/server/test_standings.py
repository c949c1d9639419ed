"""A standing table: three games of two kinds played in one standing room (a Capitol game, then the
same table switched to Conspiranoicos for two), with the server restarted in between; the
standings add up to what the engine says of each archived game, survive the restart, show nothing
of a game being played, reset at the host's word, and a name's history is claimed on a new device
with an old seat token. On SQLite, and on Redis with PostgreSQL (two processes)."""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from conflictology import replay
from conflictology.server.config import ServerConfig
from conflictology.server.hub import Hub
from conflictology.server.protocol import RoomSettings
from conflictology.server.rooms import Room
from conflictology.server.store import Store
from postgres_helpers import plain_postgres_url
from redis_helpers import clear_prefix, new_prefix, redis_server
from server_helpers import (
    Player,
    Server,
    ServerProcess,
    auth,
    eventually,
    make_table,
    play_randomly,
    seat_named,
    start,
    thread_server,
)


def archived(url: str, table: Any, game_id: str) -> dict[str, Any]:
    """The game's record once it is archived (written after its last state is sent: waited for)."""
    return dict(
        eventually(
            lambda: httpx.get(f"{url}/api/games/{game_id}", headers=auth(table.host_token), timeout=60),
            lambda r: r.status_code == 200 and r.json()["status"] == "over",
        ).json()
    )


def play_one(url: str, table: Any, humans: int, seed: int) -> dict[str, Any]:
    """Start the room's game, play it at random to its end, and return its archived record."""
    game_id = start(table)["game_id"]
    players = [Player(Server(url), table.code, table.tokens[i], i) for i in range(humans)]
    play_randomly(players, seed=seed)
    for p in players:
        p.close()
    return archived(url, table, game_id)


def expected(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """What the standings must say, from each archived game as the engine replays it."""
    out: dict[str, dict[str, Any]] = {}
    for record in records:
        built = replay.build(record)
        for seat, p in enumerate(record["players"]):
            if p["bot"]:
                continue
            row = out.setdefault(p["name"], {"name": p["name"], "games": 0, "wins": 0, "by_game": {}})
            won = int(seat in built["winners"])
            row["games"] += 1
            row["wins"] += won
            per = row["by_game"].setdefault(record["game"], {"games": 0, "wins": 0})
            per["games"] += 1
            per["wins"] += won
            for k, v in built["figures"][seat].items():
                per[k] = per.get(k, 0) + v
    return out


def standings(url: str, code: str) -> dict[str, Any]:
    r = httpx.get(f"{url}/api/rooms/{code}/standings", timeout=60)
    assert r.status_code == 200, r.text
    return dict(r.json())


def strings(doc: Any) -> set[str]:
    if isinstance(doc, str):
        return {doc}
    if isinstance(doc, dict):
        return set().union(*(strings(v) for v in doc.values()), set(doc)) if doc else set()
    if isinstance(doc, list):
        return set().union(*(strings(v) for v in doc)) if doc else set()
    return set()


def scenario(launch: Callable[[], list[ServerProcess]]) -> None:
    """The standings' story over two launches of the servers; every server launched is stopped at
    the end, whether the story fails or not (a failure left them running, loading the machine)."""
    launched: list[ServerProcess] = []

    def tracked() -> list[ServerProcess]:
        servers = launch()
        launched.extend(servers)
        return servers

    try:
        _story(tracked)
    finally:
        for server in launched:
            server.stop()  # (a stopped one is left alone)


def _story(launch: Callable[[], list[ServerProcess]]) -> None:
    servers = launch()
    url = servers[0].url
    table = make_table(
        servers[0].server,
        "capitol",
        humans=2,
        bots=1,
        level="random",
        settings={"timers": False, "standing": True},
    )
    assert standings(url, table.code)["players"] == []
    records = [play_one(url, table, humans=2, seed=1)]
    before = standings(url, table.code)
    # A restart: the room, its code and its standings are still there.
    for s in servers:
        s.stop()
    servers = launch()
    url = servers[-1].url  # (on Redis, the other process this time)
    table.server = servers[-1].server
    assert standings(url, table.code) == before
    with httpx.Client(base_url=url, headers=auth(table.host_token), timeout=60) as http:
        assert http.post(f"/api/rooms/{table.code}/rematch").status_code == 200
        assert (
            http.post(f"/api/rooms/{table.code}/kick", json=seat_named(http, table.code, 2)).status_code
            == 200
        )
        r = http.patch(f"/api/rooms/{table.code}", json={"game": "conspiranoicos"})
        assert r.status_code == 200 and r.json()["game"] == "conspiranoicos", r.text
    records.append(play_one(url, table, humans=2, seed=2))
    with httpx.Client(base_url=url, headers=auth(table.host_token), timeout=60) as http:
        assert http.post(f"/api/rooms/{table.code}/rematch").status_code == 200
    # A game being played shows nothing in the standings: they change only once it is over.
    between = standings(url, table.code)
    game_id = start(table)["game_id"]
    host = Player(servers[0].server, table.code, table.tokens[0], 0)
    hand = host.wait_for(lambda m: m.get("type") == "state")["view"]["players"][0]["hand"]
    during = standings(url, table.code)
    assert during == between and not strings(during) & set(hand)
    guest = Player(servers[-1].server, table.code, table.tokens[1], 1)
    play_randomly([host, guest], seed=3)
    host.close()
    guest.close()
    records.append(archived(url, table, game_id))
    after = standings(servers[0].url, table.code)
    want = expected(records)
    assert {p["name"]: p for p in after["players"]} == want
    wins = [p["wins"] for p in after["players"]]
    assert wins == sorted(wins, reverse=True)
    assert [g["id"] for g in after["games"]] == [r["id"] for r in records]
    assert sum(p["by_game"]["conspiranoicos"]["games"] for p in after["players"]) == 4
    assert sum(p["by_game"]["capitol"]["games"] for p in after["players"]) == 2
    assert "keys" not in json.dumps(after)
    # A new device: Player 1's seat is gone; their old token claims the name back, once.
    old = table.tokens[1]
    with httpx.Client(base_url=url, timeout=60) as http:
        r = http.post(f"/api/rooms/{table.code}/rematch", headers=auth(table.host_token))
        assert r.status_code == 200
        assert http.post(f"/api/rooms/{table.code}/leave", headers=auth(old)).status_code == 200
        r = http.post(f"/api/rooms/{table.code}/claim", json={"token": secrets.token_urlsafe(24)})
        assert r.status_code == 403 and r.json()["code"] == "bad_claim"
        r = http.post(f"/api/rooms/{table.code}/claim", json={"token": old})
        assert r.status_code == 201 and r.json()["name"] == "Player 1", r.text
        seat, new = r.json()["seat"], r.json()["token"]
        r = http.post(f"/api/rooms/{table.code}/claim", json={"token": old})
        assert r.status_code == 409 and r.json()["code"] == "name_taken"
        # The new token is the name's too, and resumes the seat it claimed.
        r = http.post(f"/api/rooms/{table.code}/claim", json={"token": new})
        assert r.status_code == 201 and r.json() == {"seat": seat, "token": new, "name": "Player 1"}
        # Only the host resets the standings.
        r = http.post(f"/api/rooms/{table.code}/standings/reset", headers=auth(new))
        assert r.status_code == 403
        r = http.post(f"/api/rooms/{table.code}/standings/reset", headers=auth(table.host_token))
        assert r.status_code == 200 and r.json()["players"] == [] and r.json()["standing"] is True
    for s in servers:
        s.stop()


def test_standings_add_up_over_three_games_and_a_restart_on_sqlite(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'standing.sqlite3'}"
    scenario(lambda: [ServerProcess(db, None, "--bot-delay", "0")])


@pytest.mark.redis
@pytest.mark.postgres
def test_standings_add_up_on_redis_and_postgresql(tmp_path: Path) -> None:
    pg = plain_postgres_url()
    if pg is None:
        pytest.skip("no PostgreSQL server answers (set POSTGRES_URL)")
    with redis_server(tmp_path) as redis_url:
        prefix = new_prefix()
        args = ("--redis", redis_url, "--redis-prefix", prefix, "--bot-delay", "0.02")
        try:
            scenario(lambda: [ServerProcess(pg, None, *args), ServerProcess(pg, None, *args)])
        finally:
            clear_prefix(redis_url, prefix)


def test_a_standing_room_outlasts_the_idle_sweep(tmp_path: Path) -> None:
    """Six idle hours remove a room; a standing one lasts its --standing-days."""
    config = ServerConfig(db_url=f"sqlite:///{tmp_path / 'sweep.sqlite3'}", standing_idle_seconds=3 * 86400)
    store = Store(config.resolved_db_url())
    hub = Hub(config, store)

    async def run() -> list[list[str]]:
        now = time.time()
        for code, standing in (("AAAAAA", False), ("BBBBBB", True)):
            room, _ = Room.create(code, "capitol", "Ana", None, RoomSettings(standing=standing))
            room.updated = now
            hub.backend.load(room)
        return [
            await hub.sweep(now + 7 * 3600),
            await hub.sweep(now + 2 * 86400),
            await hub.sweep(now + 4 * 86400),
        ]

    try:
        assert asyncio.run(run()) == [["AAAAAA"], [], ["BBBBBB"]]
    finally:
        store.close()


def test_standings_and_claims_are_bounded_per_address(tmp_path: Path) -> None:
    """The standings are a read, a claim a write: each under the address's existing budgets."""
    # Small budgets refilled slowly, so the answer does not hang on how fast a loaded machine
    # sends the requests (the defaults are bursts of 200 writes and 300 reads).
    slow = {
        "http_rate_per_second": 0.01,
        "http_rate_burst": 30.0,
        "http_read_rate_per_second": 0.01,
        "http_read_burst": 40.0,
    }
    with thread_server(tmp_path, **slow) as srv:
        table = make_table(srv, "capitol", humans=1, settings={"standing": True})
        with srv.http() as http:
            claims = [
                http.post(f"/api/rooms/{table.code}/claim", json={"token": f"guess{i}"}).status_code
                for i in range(40)
            ]
            reads = [http.get(f"/api/rooms/{table.code}/standings").status_code for _ in range(50)]
    assert claims[0] == 403 and claims[-1] == 429  # the claims spent the address's writes
    assert reads[0] == 200 and reads[-1] == 429  # the standings spent its reads
