"""Bots by name in a room: a Capitol personality by its name, and a *mystery* bot whose personality
(drawn from the game's pool at each start) no player learns before the game is over."""

from __future__ import annotations

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
