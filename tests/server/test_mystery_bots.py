"""Bots by name in a room: a Capitol personality by its name, and a *mystery* bot whose personality
(drawn from the game's pool at each start) no player learns before the game is over."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from server_helpers import Player, Server, auth, make_table, play_randomly, start, thread_server

POOLS = {
    "capitol": {"heuristic-honest", "heuristic-bluffer", "heuristic-sceptic", "heuristic-aggressive"},
    "conspiranoicos": {"easy", "normal", "hard"},
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with thread_server(tmp_path_factory.mktemp("mystery")) as srv:
        yield srv


def test_the_info_offers_personalities_and_the_mystery_bot(server: Server) -> None:
    with server.http() as http:
        info = {g["name"]: g for g in http.get("/api/info").json()["games"]}
    for game, pool in POOLS.items():
        assert "mystery" in info[game]["bots"] and set(info[game]["mystery"]) == pool


@pytest.mark.parametrize("game", sorted(POOLS))
def test_a_mystery_bot_is_revealed_only_at_the_end(server: Server, game: str) -> None:
    table = make_table(server, game, humans=1, settings={"timers": False})
    with server.http() as http:
        r = http.post(f"/api/rooms/{table.code}/bots", json={"count": 1, "level": "mystery"},
                      headers=auth(table.host_token))
        assert r.status_code == 201, r.text
        seat = http.get(f"/api/rooms/{table.code}").json()["seats"][1]
        assert seat["name"] == "Mystery bot 1" and seat["level"] == "mystery" and seat["mystery"] is True
    host = Player(server, table.code, table.host_token, 0)
    game_id = start(table)["game_id"]
    play_randomly([host], seed=4)
    host.close()
    # Nothing any message brought before the end names the bot's personality.
    before_end = [m for m in host.messages if "winners" not in m]
    text = json.dumps(before_end)
    personalities = [level for level in POOLS[game] if level.startswith("heuristic-")]
    assert before_end and not any(level in text for level in personalities)
    for m in before_end:
        if "room" in m:
            assert m["room"]["seats"][1]["level"] == "mystery"
    with server.http() as http:
        seat = http.get(f"/api/rooms/{table.code}").json()["seats"][1]
        assert seat["level"] in POOLS[game] and seat["mystery"] is True
        record: dict[str, Any] = http.get(f"/api/games/{game_id}", headers=auth(table.host_token)).json()
        assert record["players"][1]["level"] == seat["level"]
        # A rematch: a new mystery, hidden again.
        r = http.post(f"/api/rooms/{table.code}/rematch", headers=auth(table.host_token))
        assert r.status_code == 200
        assert http.get(f"/api/rooms/{table.code}").json()["seats"][1]["level"] == "mystery"


def test_a_named_personality_is_seated_by_its_name(server: Server) -> None:
    table = make_table(server, "capitol", humans=1)
    with server.http() as http:
        r = http.post(f"/api/rooms/{table.code}/bots", json={"count": 1, "level": "heuristic-bluffer"},
                      headers=auth(table.host_token))
        assert r.status_code == 201
        seat = http.get(f"/api/rooms/{table.code}").json()["seats"][1]
    assert seat["level"] == "heuristic-bluffer" and "mystery" not in seat


# ---- a mystery bot's answer time and the metrics (issue 25, item 5) -------------------------------


class _Clock:
    """Epoch seconds that move only by the scheduler's sleeps and the stub pool's thinking."""

    def __init__(self) -> None:
        self.t = 1_000_000.0

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.t += max(0.0, seconds)
        await asyncio.sleep(0)


# How long each level "thinks" in the stub pool: a heuristic at once, a search on its clock.
THINK = {"easy": 0.001, "normal": 0.002, "hard": 0.29}


def _answer_time(level: str, mystery: bool, searches_lately: float = 0.0) -> float:
    """From a bot's turn to its action applied, on the fake clock, for a Conspiranoicos bot seat of
    ``level`` (a mystery seat drawn as it, or a plain seat)."""
    from conflictology.server.backend import MemoryBackend
    from conflictology.server.botpool import BotPool, Share
    from conflictology.server.config import ServerConfig
    from conflictology.server.protocol import RoomSettings
    from conflictology.server.rooms import Room
    from conflictology.server.scheduler import Scheduler

    clock = _Clock()
    shares: list[Share | None] = []

    class Pool(BotPool):
        async def decide(self, game: Any, level: str, seat: int, seed: int, view: Any, legal: list[Any],
                         where: str, share: Share | None = None) -> Any:  # fmt: skip
            shares.append(share)
            clock.t += THINK[level]
            return legal[0]

    async def main() -> float:
        room, _ = Room.create("MYST1", "conspiranoicos", "Ada", None, RoomSettings(bot_delay=0.0))
        room.add_bots(1, "mystery" if mystery else level)
        room.seats[1].level = level  # what the mystery was drawn as
        room.start(clock.now())
        room.seats[1].level = level
        backend = MemoryBackend()
        backend.load(room)
        pool = Pool(1, 2.0, 1.0)
        pool._search_latency = searches_lately  # a busy pool: searches wait for a worker

        async def change(code: str, fn: Any) -> Any:
            return await backend.update(code, fn)

        scheduler = Scheduler(ServerConfig(bot_delay=0.0), backend, change, lambda r: {0}, pool, clock)
        start, seq = clock.now(), room.seq
        await scheduler._bot_turn(room.code, 1, seq)
        after = backend.get_now(room.code)
        assert after is not None and after.seq == seq + 1 and after.actions[-1]["by"] == "bot"
        assert shares == [Share(owner=room.code, room=room.code, mystery=mystery)]
        return clock.now() - start

    return asyncio.run(main())


def test_a_mystery_bots_answer_time_does_not_tell_its_level() -> None:
    times = {level: _answer_time(level, mystery=True) for level in POOLS["conspiranoicos"]}
    assert max(times.values()) - min(times.values()) < 1e-6, times
    assert min(times.values()) > THINK["hard"]  # every level waits as long as the slowest thinks
    # A seat named openly keeps its own pace (a heuristic answers at once).
    assert _answer_time("normal", mystery=False) < 0.01
    # When searches wait for a worker lately, a mystery decision waits as long as one does.
    levels = POOLS["conspiranoicos"]
    busy = {level: _answer_time(level, mystery=True, searches_lately=0.8) for level in levels}
    assert max(busy.values()) - min(busy.values()) < 1e-6 and min(busy.values()) > 0.8, busy


def test_a_rooms_creator_is_kept_and_never_shown(server: Server) -> None:
    from conflictology.server.botshares import owner_label

    table = make_table(server, "capitol", humans=1)
    room = server.app.state.hub.durability.shown[table.code]
    assert room.creator == owner_label("127.0.0.1")
    assert room.restore(room.snapshot()).creator == room.creator
    with server.http() as http:
        text = http.get(f"/api/rooms/{table.code}").text
    assert room.creator not in text and "creator" not in text
