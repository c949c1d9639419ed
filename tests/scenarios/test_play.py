"""Live play over real WebSockets (a throwaway game keeps it fast): views and legal actions after
every change, stale and illegal actions, spectators, timers, reconnection, the grace period and the
stand-in bot, leaving, rematch, replays."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server_helpers import (
    Player,
    Server,
    auth,
    check_no_leaks,
    eventually,
    make_table,
    play_randomly,
    register_toy,
    seat_named,
    start,
    thread_server,
)


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    register_toy(monkeypatch)
    with thread_server(tmp_path, bot_delay=0.0) as srv:
        yield srv


def game_record(server: Server, code: str, token: str) -> dict[str, Any]:
    """The room's finished game as archived (written after its last state is sent: waited for)."""
    with server.http() as http:
        game_id = http.get(f"/api/rooms/{code}").json()["game_id"]
        return dict(
            eventually(
                lambda: http.get(f"/api/games/{game_id}", headers=auth(token)).json(),
                lambda record: record.get("status") == "over",
            )
        )


def is_state(m: dict[str, Any]) -> bool:
    return m["type"] == "state"


def test_full_game_humans_bots_and_a_spectator_see_only_their_own_views(server: Server) -> None:
    table = make_table(server, "toy", humans=2, bots=2, level="random", options={"cards": 3})
    players = [Player(server, table.code, table.tokens[i], i) for i in range(2)]
    spectator = Player(server, table.code, None, None)
    for p in players:
        assert p.next()["type"] == "lobby"
    game = start(table)
    assert game["status"] == "playing"
    # During the game the replay holds only public events.
    with server.http() as http:
        live = http.get(f"/api/games/{game['game_id']}").json()
    assert live["status"] == "playing" and "initial" not in live and "final" not in live
    play_randomly(players)
    final = spectator.wait_for(lambda m: is_state(m) and "winners" in m)
    assert final["legal"] == [] and final["view"]["winners"] == final["winners"]
    record = game_record(server, table.code, table.host_token)
    assert record["status"] == "over" and record["winners"] == final["winners"]
    assert [p["bot"] for p in record["players"]] == [False, False, True, True]
    assert {a["by"] for a in record["actions"]} <= {"player", "bot", "timeout"}
    assert any(a["by"] == "bot" for a in record["actions"])
    # After the end the replay reveals everything: each seat's final view shows its own cards.
    assert len(record["final_views"]) == 4 and record["initial"] and record["final"]
    received = [(p.seat, p.messages) for p in players] + [(None, spectator.messages)]
    checked = check_no_leaks(record, received)
    assert checked >= len(record["actions"])
    # Every seq the humans saw is consecutive per change: nothing was skipped silently.
    seqs = [m["seq"] for m in spectator.messages if is_state(m)]
    assert seqs == sorted(seqs)
    for p in [*players, spectator]:
        p.close()


def test_stale_illegal_and_out_of_turn_actions_change_nothing(server: Server) -> None:
    table = make_table(server, "toy", humans=2, settings={"timers": False})
    p0, p1 = (Player(server, table.code, table.tokens[i], i) for i in range(2))
    spectator = Player(server, table.code, None, None)
    start(table)
    s0 = p0.wait_for(is_state)
    p1.wait_for(is_state)
    spectator.wait_for(is_state)
    assert s0["legal"] and s0["deadline"] is None
    seq = s0["seq"]
    cases = [
        (p0, {"type": "act", "action": s0["legal"][0], "seq": seq - 1}, "stale"),
        (p0, {"type": "act", "action": s0["legal"][0], "seq": seq + 5}, "bad_seq"),
        (p0, {"type": "act", "action": {"type": "play", "card": 42}, "seq": seq}, "illegal"),
        (p0, {"type": "act", "action": {"card": 1}}, "bad_action"),
        (p1, {"type": "act", "action": s0["legal"][0]}, "not_your_turn"),
        (spectator, {"type": "act", "action": s0["legal"][0]}, "spectator"),
        (p0, {"type": "act"}, "bad_message"),
        (p0, {"type": "shout", "action": {}}, "bad_message"),
    ]
    for who, msg, code in cases:
        who.send(msg)
        err = who.wait_for(lambda m: m["type"] in ("error", "state"))
        assert err["type"] == "error" and err["code"] == code, (msg, err)
    p0.send({"type": "ping"})
    assert p0.wait_for(lambda m: m["type"] != "error")["type"] == "pong"
    p0.send({"type": "sync"})
    again = p0.wait_for(is_state)
    assert again["seq"] == seq and again["view"] == s0["view"]
    # And a legal one, quoting the right seq, goes through and everyone hears of it.
    p0.send({"type": "act", "action": s0["legal"][0], "seq": seq})
    assert p0.wait_for(is_state)["seq"] == seq + 1
    assert spectator.wait_for(lambda m: is_state(m) and m["seq"] == seq + 1)["legal"] == []
    for p in (p0, p1, spectator):
        p.close()


def test_timers_play_for_silent_players_and_keep_the_clock_within_a_window(server: Server) -> None:
    # The window is long enough for a loaded machine to pass in time; the turns run out fast.
    settings = {"turn_seconds": 1, "response_seconds": 2.5, "choice_seconds": 1}
    table = make_table(server, "toy", humans=3, options={"cards": 1}, settings=settings)
    players = [Player(server, table.code, table.tokens[i], i) for i in range(3)]
    started = time.time()
    start(table)
    first = players[0].wait_for(is_state)
    # One turn from the start (however long the machine took to tell it).
    assert first["timer"] == "turn" and started + 1 - 0.01 <= first["deadline"] <= time.time() + 1 + 0.01
    # Seat 0 says nothing: its clock runs out and the timeout action (play) is taken for it.
    window = players[1].wait_for(lambda m: is_state(m) and m["legal"], timeout=60)
    assert window["timer"] == "response"
    assert {a["type"] for a in window["legal"]} == {"pass", "challenge"}
    # Seat 1 passes; seat 2 is still in the same window, so its clock does not restart.
    players[1].send({"type": "act", "action": {"type": "pass"}, "seq": window["seq"]})
    after = players[2].wait_for(lambda m: is_state(m) and m["seq"] == window["seq"] + 1)
    assert after["legal"] and after["deadline"] == window["deadline"]
    final = players[0].wait_for(lambda m: is_state(m) and "winners" in m, timeout=120)
    assert final["legal"] == []
    record = game_record(server, table.code, table.host_token)
    by = [(a["seat"], a["action"]["type"], a["by"]) for a in record["actions"]]
    assert (
        by[0] == (0, "play", "timeout") and by[1] == (1, "pass", "player") and by[2] == (2, "pass", "timeout")
    )
    assert all(b == "timeout" for _, _, b in by[3:])
    for p in players:
        p.close()


def test_reconnecting_with_the_token_resumes_the_seat(server: Server) -> None:
    table = make_table(server, "toy", humans=2, options={"cards": 2}, settings={"timers": False})
    p0, p1 = (Player(server, table.code, table.tokens[i], i) for i in range(2))
    start(table)
    s = p0.wait_for(is_state)
    p0.send({"type": "act", "action": s["legal"][0], "seq": s["seq"]})
    p0.wait_for(lambda m: is_state(m) and m["seq"] == s["seq"] + 1)
    p0.close()
    p1.wait_for(lambda m: is_state(m) and m["room"]["seats"][0]["connected"] is False)
    back = Player(server, table.code, table.tokens[0], 0)
    resumed = back.wait_for(is_state)
    assert resumed["view"]["you"] == 0 and resumed["seq"] == s["seq"] + 1
    # Two tabs on one token both follow the seat.
    tab2 = Player(server, table.code, table.tokens[0], 0)
    assert tab2.wait_for(is_state)["seq"] == resumed["seq"]
    play_randomly([back, p1])
    assert tab2.wait_for(lambda m: is_state(m) and "winners" in m)
    for p in (back, p1, tab2):
        p.close()


def test_a_bot_stands_in_after_the_grace_period_until_the_player_returns(server: Server) -> None:
    table = make_table(
        server, "toy", humans=2, options={"cards": 3}, settings={"timers": False, "grace_seconds": 0.3}
    )
    p0, p1 = (Player(server, table.code, table.tokens[i], i) for i in range(2))
    start(table)
    p0.wait_for(is_state)
    p1.close()
    # Seat 1 is marked away, and the game goes on without it: the stand-in bot answers for it.
    away = p0.wait_for(lambda m: is_state(m) and m["room"]["seats"][1].get("afk"), timeout=60)
    assert away["room"]["seats"][1]["connected"] is False
    m, sent = away, 0
    while sent < 2 and "winners" not in m:
        if m["legal"]:
            p0.send({"type": "act", "action": m["legal"][0], "seq": m["seq"]})
            sent += 1
        m = p0.wait_for(lambda m: is_state(m) and (m["legal"] or "winners" in m), timeout=60)
    back = Player(server, table.code, table.tokens[1], 1)
    resumed = back.wait_for(is_state)
    assert not resumed["room"]["seats"][1].get("afk")
    if "winners" not in resumed:
        play_randomly([p0, back])
    record = game_record(server, table.code, table.host_token)
    assert any(a["seat"] == 1 and a["by"] == "bot" for a in record["actions"])
    for p in (p0, back):
        p.close()


def test_a_player_who_left_mid_game_takes_the_seat_back_with_the_same_token(server: Server) -> None:
    """Issue 17.2: leaving mid-game hands the seat to a bot, and the same token (the same browser)
    takes it back while the game lasts; the change is saved before anyone hears of it. A kicked
    token, a second rejoin and a rejoin after the game are refused and change nothing."""
    from conflictology.server.store import Store

    table = make_table(server, "toy", humans=3, options={"cards": 2}, settings={"timers": False})
    players = [Player(server, table.code, table.tokens[i], i) for i in range(3)]
    start(table)
    url = f"/api/rooms/{table.code}"
    with server.http() as http:
        r = http.post(f"{url}/rejoin", headers=auth(table.tokens[1]))
        assert r.status_code == 409 and r.json()["code"] == "not_left"
        assert http.post(f"{url}/leave", headers=auth(table.tokens[1])).status_code == 200
        players[1].wait_for(lambda m: m["type"] == "left")
        assert http.get(url).json()["seats"][1]["left"] is True
        r = http.post(f"{url}/rejoin", headers=auth(table.tokens[1]))
        assert r.status_code == 200, r.text
        assert r.json()["seat"] == 1 and not r.json()["room"]["seats"][1].get("left")
        # Durable before it was answered: the room's saved snapshot already has the seat back.
        saved = {room["code"]: room for room in Store(server.app.state.config.db_url).load_rooms()}
        assert not saved[table.code]["seats"][1].get("left")
        # Everyone sees the seat taken back.
        players[0].wait_for(lambda m: m["type"] == "state" and not m["room"]["seats"][1].get("left"))
        assert http.get(url).json()["seats"][1].get("left") is None
        r = http.post(f"{url}/rejoin", headers=auth(table.tokens[1]))
        assert r.status_code == 409 and r.json()["code"] == "not_left"
        # A player who left and is then kicked has no way back: the kick takes the token away.
        assert http.post(f"{url}/leave", headers=auth(table.tokens[2])).status_code == 200
        assert (
            http.post(
                f"{url}/kick", json=seat_named(http, table.code, 2), headers=auth(table.host_token)
            ).status_code
            == 200
        )
        r = http.post(f"{url}/rejoin", headers=auth(table.tokens[2]))
        assert r.status_code == 401
        r = http.post(f"{url}/kick", json=seat_named(http, table.code, 2), headers=auth(table.host_token))
        assert r.status_code == 409  # nothing left to take
    back = Player(server, table.code, table.tokens[1], 1)
    state = back.wait_for(is_state)
    assert state["view"]["you"] == 1
    play_randomly([players[0], back])
    with server.http() as http:
        assert http.post(f"{url}/leave", headers=auth(table.tokens[1])).status_code == 200
        r = http.post(f"{url}/rejoin", headers=auth(table.tokens[1]))
        assert r.status_code == 401  # after the game, leaving gives the seat up for good
    record = game_record(server, table.code, table.host_token)
    # The seat's own moves after the rejoin are the player's, not the bot's.
    assert any(a["seat"] == 1 and a["by"] == "player" for a in record["actions"])
    for p in (*players, back):
        p.close()


def test_leaving_mid_game_hands_the_seat_to_a_bot_and_the_host_role_on(server: Server) -> None:
    table = make_table(
        server, "toy", humans=3, options={"cards": 2}, settings={"timers": False, "public": True}
    )
    players = [Player(server, table.code, table.tokens[i], i) for i in range(3)]
    start(table)
    with server.http() as http:
        assert http.post(f"/api/rooms/{table.code}/leave", headers=auth(table.tokens[0])).status_code == 200
        bye = players[0].wait_for(lambda m: m["type"] == "left")
        assert bye["message"]
        r = http.post(
            f"/api/rooms/{table.code}/kick",
            json=seat_named(http, table.code, 2),
            headers=auth(table.tokens[1]),
        )
        assert r.status_code == 200, r.text
        seats = r.json()["seats"]
        assert seats[0]["left"] and seats[2]["left"] and seats[1]["host"]
    players[2].wait_for(lambda m: m["type"] == "left")
    play_randomly([players[1]])
    with server.http() as http:
        # The new host offers a rematch: back to the lobby without the two who left.
        r = http.post(f"/api/rooms/{table.code}/rematch", headers=auth(table.tokens[1]))
        assert r.status_code == 200 and r.json()["status"] == "lobby"
        assert [s["name"] for s in r.json()["seats"]] == ["Player 1"]
        lobby = players[1].wait_for(lambda m: m["type"] == "lobby")
        assert lobby["room"]["game_id"] is None
        http.post(
            f"/api/rooms/{table.code}/bots",
            json={"count": 1, "level": "random"},
            headers=auth(table.tokens[1]),
        )
        assert http.post(f"/api/rooms/{table.code}/start", headers=auth(table.tokens[1])).status_code == 200
    play_randomly([players[1]])
    with server.http() as http:
        assert len(http.get("/api/games").json()["games"]) >= 2
    for p in players:
        p.close()
