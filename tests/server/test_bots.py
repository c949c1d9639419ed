"""Bots on a server (issue 13, item 1): a host seats bots from a closed list (levels, bot names and
personalities that can play the game, never a spec with parameters), and a room saved with a level
outside it plays on at the default level."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from conflictology.server.protocol import RoomSettings
from conflictology.server.rooms import Room
from conflictology.server.store import Store
from server_helpers import (
    Player,
    auth,
    make_table,
    thread_server,
)

# What the attack run used: one such bot stopped every bot of the server, for good.
RUNAWAY = "ismcts:iterations=999999999:seconds=1e9"


def test_a_bot_spec_with_parameters_is_refused_over_http_and_changes_nothing(tmp_path: Path) -> None:
    with thread_server(tmp_path) as server, server.http() as http:
        table = make_table(server, "capitol", humans=1)
        before = http.get(f"/api/rooms/{table.code}").json()
        for level in (RUNAWAY, "hard:seconds=100", "normal:", "pimc:iterations=5"):
            r = http.post(
                f"/api/rooms/{table.code}/bots",
                json={"count": 2, "level": level},
                headers=auth(table.host_token),
            )
            assert r.status_code == 400, (level, r.text)
            assert r.json()["code"] == "unknown_level"
            assert "offered: " in r.json()["error"] and "hard" in r.json()["error"]
        assert http.get(f"/api/rooms/{table.code}").json() == before
        # A personality is offered where it can play, and only there.
        r = http.post(
            f"/api/rooms/{table.code}/bots",
            json={"count": 1, "level": "heuristic-bluffer"},
            headers=auth(table.host_token),
        )
        assert r.status_code == 201, r.text
        other = make_table(server, "conspiranoicos", humans=1)
        r = http.post(
            f"/api/rooms/{other.code}/bots",
            json={"count": 1, "level": "heuristic-bluffer"},
            headers=auth(other.host_token),
        )
        assert r.status_code == 400 and r.json()["code"] == "unknown_level"
        info = http.get("/api/info").json()
        per_game = {g["name"]: g["bots"] for g in info["games"]}
        assert {"easy", "normal", "hard", "random", "heuristic", "ismcts", "pimc", "search"} <= set(
            per_game["capitol"]
        )
        assert "heuristic-bluffer" in per_game["capitol"]
        assert "heuristic-bluffer" not in per_game["conspiranoicos"]
        assert set(info["bots"]) == set(per_game["capitol"]) | set(per_game["conspiranoicos"])
        assert not any(":" in level for level in info["bots"])


def test_a_room_restored_with_a_level_outside_the_list_plays_on_at_the_default_level(tmp_path: Path) -> None:
    # A room saved before the fix: its bot seat carries the runaway spec, and it is that bot's turn.
    room, token = Room.create("RUNAW", "capitol", "Host", {"first_player": 1}, RoomSettings(timers=False))
    room.add_bots(1, "normal")
    room.start(time.time())
    snapshot = room.snapshot()
    snapshot["seats"][1].update(level=RUNAWAY, name=f"Bot 1 ({RUNAWAY})")
    store = Store(f"sqlite:///{tmp_path / 'server.sqlite3'}")
    store.save_rooms([snapshot])
    store.close()

    with thread_server(tmp_path) as server:
        host = Player(server, "RUNAW", token, 0)
        try:
            # The bot's turn is played (the game moves on) instead of a search that never ends.
            moved = host.wait_for(lambda m: m["type"] == "state" and m["seq"] > room.seq, timeout=120)
            assert any(e.get("seat") == 1 for e in moved["view"]["log"])
        finally:
            host.close()
        seat = httpx.get(f"{server.url}/api/rooms/RUNAW").json()["seats"][1]
        assert seat["level"] == "normal" and seat["name"] == "Bot 1 (normal)"

    from conflictology.server.rooms import seat_level

    restored = Room.restore(snapshot)
    assert restored.seats[1].level == "normal" and seat_level(restored, 1) == "normal"
    assert restored.seats[1].name == "Bot 1 (normal)"


def test_a_bot_is_named_by_number_and_its_level_is_a_field_never_part_of_the_name() -> None:
    """Issue 26: "Bot 2 (heuristic-bluffer)" showed an id at every table, in English; clients name a
    bot from its number and level (a mystery's level stays hidden until the game is over)."""
    room, _token = Room.create("NAMES", "capitol", "Host", {}, RoomSettings(timers=False))
    room.add_bots(1, "heuristic-bluffer")
    room.add_bots(1, "mystery")
    seats = room.info()["seats"]
    assert [s["name"] for s in seats] == ["Host", "Bot 1", "Mystery bot 2"]
    assert seats[1]["bot_number"] == 1 and seats[1]["level"] == "heuristic-bluffer"
    assert seats[2]["bot_number"] == 2 and seats[2]["level"] == "mystery" and seats[2]["mystery"] is True
    assert "bot_number" not in seats[0]
    # Saved and restored with its number; a seat saved before numbers keeps its name and has none.
    snapshot = room.snapshot()
    assert Room.restore(snapshot).info()["seats"][1]["bot_number"] == 1
    del snapshot["seats"][1]["number"]
    assert "bot_number" not in Room.restore(snapshot).info()["seats"][1]
    # The archived game names the players the same way, the mystery's level now told.
    room.start(time.time())
    players = room.archive_record()["players"]
    bluffer = {"seat": 1, "name": "Bot 1", "bot": True, "level": "heuristic-bluffer", "bot_number": 1}
    assert players[1] == bluffer
    assert players[2]["bot_number"] == 2 and players[2]["mystery"] is True
