"""Issue 29, a table of ten through the real server: a standing Capitol room of five people (WebSocket
clients speaking protocol 2, log deltas) and five bots plays the big-table variant to its end over
uvicorn; a spectator who arrives mid-game is sent only the public view; the room's standings count
the game for its five players (not the bots) as the engine's replay of it says; the finished game's
replay has every decision and stays its players' (a private room); a rematch deals the next game to
the same ten seats, which plays to its end too and adds to the standings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from conflictology import replay
from conflictology.clients.netbot import LogJoin
from server_helpers import (
    Player,
    Server,
    Table,
    auth,
    check_no_leaks,
    eventually,
    make_table,
    play_randomly,
    start,
    thread_server,
)

HUMANS = 5
BOTS = {"easy": 2, "normal": 3}
SEATS = HUMANS + sum(BOTS.values())
ROLES = {"banker", "mafia", "hacker", "judge", "reporter", "police"}
# Generous: a ten-seat game of random people and bots on a loaded two-core machine.
GAME_SECONDS = 600.0


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    with thread_server(tmp_path, bot_delay=0.0) as srv:
        yield srv


def joined(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A v2 socket's state messages with their logs joined (each one checked to be a delta, never a
    gap): what the socket was told, whole."""
    logs = LogJoin()
    out = []
    for msg in messages:
        if msg["type"] != "state":
            continue
        assert "log_from" in msg, "a v2 socket was sent a state without log_from"
        whole = logs.join(msg)
        assert whole is not None, f"a gap at seq {msg['seq']} on a socket that missed nothing"
        out.append(whole)
    return out


def archived(server: Server, game_id: str, token: str) -> dict[str, Any]:
    with server.http() as http:
        return dict(
            eventually(
                lambda: http.get(f"/api/games/{game_id}", headers=auth(token)).json(),
                lambda r: r.get("status") == "over",
            )
        )


def standings_of(server: Server, code: str, games: int) -> dict[str, Any]:
    with server.http() as http:
        return dict(
            eventually(
                lambda: http.get(f"/api/rooms/{code}/standings").json(),
                lambda r: len(r.get("games", [])) >= games,
            )
        )


def expected_standings(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each person's row as the engine's replay of every game says (bots are not players)."""
    out: dict[str, dict[str, Any]] = {}
    for record in records:
        built = replay.build(record)
        for seat, p in enumerate(record["players"]):
            if p["bot"]:
                continue
            row = out.setdefault(p["name"], {"name": p["name"], "games": 0, "wins": 0, "by_game": {}})
            per = row["by_game"].setdefault("capitol", {"games": 0, "wins": 0})
            won = int(seat in built["winners"])
            for part in (row, per):
                part["games"] += 1
                part["wins"] += won
            for k, v in built["figures"][seat].items():
                per[k] = per.get(k, 0) + v
    return out


def seats_of(room: dict[str, Any]) -> list[tuple[str, bool, str | None]]:
    return [(s["name"], s["bot"], s.get("level")) for s in room["seats"]]


def check_replay(server: Server, table: Table, record: dict[str, Any]) -> None:
    """The finished game's replay opens for its players, step by step with every decision, and for
    nobody else (the room is private)."""
    game_id = record["id"]
    with server.http() as http:
        for path in (
            f"/api/games/{game_id}",
            f"/api/games/{game_id}/replay",
            f"/api/games/{game_id}/record.txt",
        ):
            r = http.get(path)
            assert r.status_code == 401 and r.json()["code"] == "no_token", (path, r.text)
        # Any of the five people may open it, not only the host.
        r = http.get(f"/api/games/{game_id}/replay", headers=auth(table.tokens[HUMANS - 1]))
        assert r.status_code == 200, r.text
        shown = r.json()
        text = http.get(f"/api/games/{game_id}/record.txt", headers=auth(table.host_token))
        assert text.status_code == 200
    assert len(shown["players"]) == SEATS and len(shown["figures"]) == SEATS
    assert [p["bot"] for p in shown["players"]] == [False] * HUMANS + [True] * (SEATS - HUMANS)
    assert shown["winners"] == record["winners"]
    actions = record["actions"]
    assert len(actions) > SEATS and len(shown["steps"]) == len(actions) + 1
    for step, entry in zip(shown["steps"][1:], actions, strict=True):
        assert (step["seq"], step["seat"], step["action"], step["by"]) == (
            entry["seq"],
            entry["seat"],
            entry["action"],
            entry["by"],
        )
    # People and bots both decided, and each seat of the ten is in the game's decisions.
    assert {a["by"] for a in actions} == {"player", "bot"}
    assert {a["seat"] for a in actions} == set(range(SEATS))
    # Once over, every card is face up in the replay: the deal's ten hands, as roles.
    dealt = shown["steps"][0]["view"]["players"]
    assert len(dealt) == SEATS and all(set(p["hidden"]) <= ROLES and len(p["hidden"]) == 2 for p in dealt)
    for p in shown["players"]:
        assert p["name"] in text.text


def test_ten_seats_of_people_and_bots_play_watch_rank_replay_and_rematch(server: Server) -> None:
    table = make_table(server, "capitol", humans=HUMANS, settings={"timers": False, "standing": True})
    with server.http() as http:
        for level, count in BOTS.items():
            r = http.post(
                f"/api/rooms/{table.code}/bots",
                json={"count": count, "level": level},
                headers=auth(table.host_token),
            )
            assert r.status_code == 201, r.text
        lobby = http.get(f"/api/rooms/{table.code}").json()
        # An eleventh seat is refused, and changes nothing.
        r = http.post(f"/api/rooms/{table.code}/join", json={"name": "Eleven"})
        assert r.status_code == 409 and r.json()["code"] == "full", r.text
        assert http.get(f"/api/rooms/{table.code}").json() == lobby
    assert len(lobby["seats"]) == SEATS and lobby["max_players"] == SEATS
    players = [Player(server, table.code, table.tokens[i], i, version=2) for i in range(HUMANS)]
    for p in players:
        assert p.wait_for(lambda m: m["type"] == "lobby")["you"] == p.seat
    first = start(table)
    first_state = players[0].wait_for(lambda m: m["type"] == "state")
    view = first_state["view"]
    # The big-table variant, offered by itself: five copies of each role, the Treasury at $85M.
    assert first_state["room"]["options"].get("copies") in (None, 5) and len(view["players"]) == SEATS
    assert view["deck"] == 5 * len(ROLES) - 2 * SEATS
    assert view["treasury"] + sum(p["money"] for p in view["players"]) == 85
    # A few decisions in, a spectator (protocol 2 too) comes to watch.
    play_randomly(players, seed=29, timeout=GAME_SECONDS, stop_after=3 * HUMANS)
    spectator = Player(server, table.code, None, None, version=2)
    play_randomly(players, seed=30, timeout=GAME_SECONDS)
    final = spectator.wait_for(lambda m: m["type"] == "state" and "winners" in m, timeout=60)
    assert final["legal"] == [] and len(final["winners"]) >= 1

    record = archived(server, first["game_id"], table.host_token)
    assert record["winners"] == final["winners"] and len(record["players"]) == SEATS
    # Every message each socket was sent, its log joined, is exactly the game's view for its seat
    # (the spectator's: view(None)), with legal actions only for the seat that may act.
    received = [(p.seat, joined(p.messages)) for p in players]
    watched = joined(spectator.messages)
    checked = check_no_leaks(record, [*received, (None, watched)])
    assert checked >= len(record["actions"])
    # The spectator's first state is whole and mid-game; none holds a face-down card of anyone.
    assert watched and watched[0]["seq"] > first_state["seq"]
    assert spectator.messages[[m["type"] for m in spectator.messages].index("state")]["log_from"] == 0
    for msg in watched:
        assert msg["legal"] == [] and msg["view"]["you"] is None
        assert all(isinstance(p["hidden"], int) for p in msg["view"]["players"]), msg["seq"]
    check_replay(server, table, record)

    # The standings count the game for the five people, by name, and for no bot.
    ranked = standings_of(server, table.code, games=1)
    assert {p["name"]: p for p in ranked["players"]} == expected_standings([record])
    assert [g["id"] for g in ranked["games"]] == [record["id"]]
    assert ranked["games"][0]["players"] == [p["name"] for p in record["players"] if not p["bot"]]

    # A rematch: back to the lobby with the same ten seats, then the next game deals them again.
    with server.http() as http:
        r = http.post(f"/api/rooms/{table.code}/rematch", headers=auth(table.host_token))
        assert r.status_code == 200 and r.json()["status"] == "lobby", r.text
        assert seats_of(r.json()) == seats_of(lobby)
    for p in [*players, spectator]:
        again = p.wait_for(lambda m: m["type"] == "lobby")
        assert seats_of(again["room"]) == seats_of(lobby) and again["you"] == p.seat
    second = start(table)
    assert second["game_id"] != first["game_id"]
    for p in players:
        dealt = p.wait_for(lambda m: m["type"] == "state" and m["room"]["game_id"] == second["game_id"])
        # A new game: the socket's log starts again, whole.
        assert dealt["log_from"] == 0 and seats_of(dealt["room"]) == seats_of(lobby)
        assert [q["seat"] for q in dealt["view"]["players"]] == list(range(SEATS))
        assert set(dealt["view"]["players"][p.seat]["hidden"]) <= ROLES
    with server.http() as http:
        # While it lasts, its record is the public one, and its replay is refused.
        live = http.get(f"/api/games/{second['game_id']}").json()
        assert live["status"] == "playing" and "initial" not in live and "actions" not in live
        r = http.get(f"/api/games/{second['game_id']}/replay", headers=auth(table.host_token))
        assert r.status_code == 409 and r.json()["code"] == "not_over"
    play_randomly(players, seed=31, timeout=GAME_SECONDS)
    again_record = archived(server, second["game_id"], table.host_token)
    sockets = [(p.seat, joined(p.messages)) for p in players] + [(None, joined(spectator.messages))]
    assert check_no_leaks(again_record, sockets) >= len(again_record["actions"])
    check_replay(server, table, again_record)
    ranked = standings_of(server, table.code, games=2)
    assert {p["name"]: p for p in ranked["players"]} == expected_standings([record, again_record])
    assert sum(p["games"] for p in ranked["players"]) == 2 * HUMANS
    for p in [*players, spectator]:
        p.close()
    # (nothing of the standings names a bot)
    with httpx.Client(base_url=server.url) as http:
        names = {p["name"] for p in http.get(f"/api/rooms/{table.code}/standings").json()["players"]}
    assert names == {s[0] for s in seats_of(lobby) if not s[1]}
