"""Table talk beside the video call: reactions (shown, never stored), a player's once-per-game hold
and the host's pause. Stopped clocks move the deadline by exactly as long as they were stopped,
a stop is saved before anyone sees it and survives SIGKILL, and nothing in the new messages tells a
player more than the game's own view."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import msgspec
import pytest

from conflictology.server.protocol import REACTIONS, RoomSettings, SettingsPatch
from conflictology.server.rooms import Room, RoomError, RoomStatus
from room_helpers import capitol_room
from server_helpers import (
    Player,
    ServerProcess,
    auth,
    check_no_leaks,
    make_table,
    play_randomly,
    register_toy,
    start,
    thread_server,
)

PAUSE_KEYS = {"kind", "seat", "since", "until", "left", "timer"}


# ---- the room, on a fake clock ----------------------------------------------------------------------


def test_a_hold_stops_the_clock_and_the_deadline_moves_by_the_hold() -> None:
    t = 1000.0
    room = capitol_room(t, hold_seconds=30)
    assert room.deadline == t + 60
    room.hold(1, t + 10)
    assert room.deadline is None and not room.expire(t + 10**6)
    assert room.pause == {"kind": "hold", "seat": 1, "since": t + 10, "until": t + 40, "left": 50.0}
    # The hold ends on time: the turn clock has its 50 s left from then.
    room.resume(t + 40, hold_until=t + 40)
    assert room.pause is None and room.deadline == t + 60 + 30
    # Once per game.
    with pytest.raises(RoomError) as refused:
        room.hold(1, t + 41)
    assert refused.value.code == "hold_used"
    room.hold(2, t + 42)
    with pytest.raises(RoomError) as refused:
        room.hold(0, t + 43)
    assert refused.value.code == "paused"


def test_a_late_timer_ends_the_hold_at_its_time_and_the_host_may_end_it_early() -> None:
    t = 0.0
    room = capitol_room(t, hold_seconds=20)
    room.hold(0, t + 5)
    # The end of the hold is handled 100 s late (a restart): the clock still lost only 20 s.
    room.resume(t + 105, hold_until=t + 25)
    assert room.deadline == t + 60 + 20
    room.hold(1, t + 30)
    with pytest.raises(RoomError) as stale:
        room.resume(t + 50, hold_until=t + 999)  # another hold's timer
    assert stale.value.code == "no_change" and room.pause is not None
    room.resume(t + 33)  # the host, early: 3 s of the hold were used
    assert room.deadline == t + 60 + 20 + 3


def test_a_decision_reached_while_stopped_gets_its_whole_clock_when_resumed() -> None:
    t = 0.0
    room = capitol_room(t, response_seconds=12)
    room.host_pause(0, t + 1)
    room.act(0, {"type": "banker"}, room.seq, t + 2)  # players may still act
    assert room.deadline is None and room.deadline_kind == "response"
    assert room.pause is not None and room.pause["left"] == 12
    room.act(1, {"type": "pass"}, room.seq, t + 3)  # the same window goes on: its clock too
    assert room.pause["left"] == 12
    room.resume(t + 100)
    assert room.deadline == t + 112


def test_the_host_pause_takes_over_a_hold_and_refusals_change_nothing() -> None:
    t = 0.0
    room = capitol_room(t)
    with pytest.raises(RoomError) as refused:
        room.resume(t)
    assert refused.value.code == "not_paused"
    room.hold(2, t + 10)
    room.host_pause(0, t + 12)
    assert room.pause is not None and room.pause["kind"] == "host" and room.pause["until"] == t + 12 + 300
    before = room.snapshot()
    with pytest.raises(RoomError):
        room.host_pause(0, t + 13)
    with pytest.raises(RoomError):
        room.hold(1, t + 13)
    assert room.snapshot() == before
    room.resume(t + 100)
    assert room.deadline == t + 60 + 90
    # A rematch forgets the holds.
    room.status = RoomStatus.OVER
    room.rematch()
    assert room.holds == [] and room.pause is None


def test_stopped_clocks_and_spent_holds_survive_a_snapshot() -> None:
    room = capitol_room(0.0)
    room.hold(1, 5.0)
    copy = Room.restore(room.snapshot())
    assert copy.pause == room.pause and copy.holds == room.holds
    copy.resume(35.0, hold_until=35.0)
    assert copy.deadline == 90.0
    # Snapshots saved before clocks could stop restore with none stopped.
    old = room.snapshot()
    del old["pause"], old["holds"]
    assert Room.restore(old).pause is None


def test_hold_seconds_is_a_bounded_room_setting() -> None:
    assert RoomSettings().hold_seconds == 30.0
    for bad in (0.5, 301, "30"):
        with pytest.raises(msgspec.ValidationError):
            msgspec.convert({"hold_seconds": bad}, SettingsPatch)
    assert msgspec.convert({"hold_seconds": 5}, SettingsPatch).apply_to(RoomSettings()).hold_seconds == 5


# ---- a live server ---------------------------------------------------------------------------------


def _state(p: Player, pred: object = None) -> dict[str, object]:
    return p.wait_for(lambda m: m["type"] == "state" and (pred is None or pred(m)))  # type: ignore[operator]


def test_reactions_reach_everyone_and_nothing_else(tmp_path: Path) -> None:
    with thread_server(tmp_path, reaction_burst=3.0) as server:
        table = make_table(server, "capitol", humans=2, settings={"timers": False})
        p0 = Player(server, table.code, table.tokens[0], 0)
        p1 = Player(server, table.code, table.tokens[1], 1)
        watcher = Player(server, table.code, None, None)
        start(table)
        for p in (p0, p1, watcher):
            _state(p)
        version = server.app.state.hub.backend.get_now(table.code).version
        p1.send({"type": "react", "emoji": "🤥"})
        expected = {"type": "reaction", "seat": 1, "emoji": "🤥"}
        for p in (p0, p1, watcher):
            assert p.wait_for(lambda m: m["type"] == "reaction") == expected
        # Refused: a spectator, anything outside the set (text, another emoji), a malformed one.
        watcher.send({"type": "react", "emoji": "👍"})
        assert watcher.wait_for(lambda m: m["type"] == "error")["code"] == "spectator"
        for bad in ("hello", "💩", "👍👍"):
            p0.send({"type": "react", "emoji": bad})
            assert p0.wait_for(lambda m: m["type"] == "error")["code"] == "bad_emoji"
        p0.send({"type": "react", "emoji": "👍", "to": 1})
        assert p0.wait_for(lambda m: m["type"] == "error")["code"] == "bad_message"
        # Per seat: a burst of three, then refused (the other seat still may).
        for _ in range(2):
            p0.send({"type": "react", "emoji": "👍"})
        p0.send({"type": "react", "emoji": "👍"})
        p0.send({"type": "react", "emoji": "👍"})
        assert p0.wait_for(lambda m: m["type"] == "error")["code"] == "rate_limited"
        p1.send({"type": "react", "emoji": "👏"})
        assert watcher.wait_for(lambda m: m["type"] == "reaction" and m["seat"] == 1)["emoji"] == "👏"
        for p in (p0, p1):  # the last reaction reached the players too (waited for)
            p.wait_for(lambda m: m["type"] == "reaction" and m["emoji"] == "👏", timeout=60)
        time.sleep(0.3)  # (a reaction that must not come would come meanwhile)
        # Leaks: every reaction anyone got is exactly {type, seat, emoji} with a seat that sent one,
        # the same for players and spectators.
        got = [[m for m in p.messages if m["type"] == "reaction"] for p in (p0, p1, watcher)]
        assert got[0] == got[1] == got[2]
        assert [m["seat"] for m in got[0]] == [1, 0, 0, 0, 1]
        assert all(set(m) == {"type", "seat", "emoji"} and m["emoji"] in REACTIONS for m in got[0])
        # Nothing was stored: the room did not change.
        assert server.app.state.hub.backend.get_now(table.code).version == version
        for p in (p0, p1, watcher):
            p.close()


def _state_seq(p: Player) -> int:
    latest = p.latest_state()
    assert latest is not None
    return int(latest["seq"])


def test_a_reaction_per_address_is_bounded_too(tmp_path: Path) -> None:
    with thread_server(tmp_path, reaction_address_burst=2.0) as server:
        table = make_table(server, "capitol", humans=3, settings={"timers": False})
        players = [Player(server, table.code, table.tokens[i], i) for i in range(3)]
        for i, p in enumerate(players):
            p.send({"type": "react", "emoji": "😮"})
            if i < 2:
                assert players[2].wait_for(lambda m: m["type"] == "reaction")["seat"] == i
        # Three seats, one address: the third is refused although its own seat has reactions left.
        assert players[2].wait_for(lambda m: m["type"] == "error")["code"] == "rate_limited"
        for p in players:
            p.close()


def test_a_hold_and_the_host_pause_stop_every_clock_and_the_bots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_toy(monkeypatch)
    with thread_server(tmp_path) as server:
        settings = {"turn_seconds": 60, "response_seconds": 60, "choice_seconds": 60, "hold_seconds": 1,
                    "bot_delay": 0.2}  # fmt: skip
        table = make_table(server, "toy", humans=2, bots=1, options={"cards": 2}, settings=settings)
        p0 = Player(server, table.code, table.tokens[0], 0)
        p1 = Player(server, table.code, table.tokens[1], 1)
        watcher = Player(server, table.code, None, None)
        start(table)
        first = _state(p1)
        deadline = first["deadline"]
        assert isinstance(deadline, float) and first["pause"] is None and first["holds"] == []
        # Seat 1 holds (it is seat 0's turn: a decision pending anywhere at the table is enough).
        p1.send({"type": "hold"})
        held = [_state(p, lambda m: m["pause"] is not None) for p in (p0, p1, watcher)]
        for msg in held:
            pause = msg["pause"]
            assert isinstance(pause, dict) and set(pause) == PAUSE_KEYS
            assert pause["kind"] == "hold" and pause["seat"] == 1 and msg["deadline"] is None
            assert pause["until"] == pytest.approx(pause["since"] + 1)
            assert pause["left"] == pytest.approx(deadline - pause["since"])
            assert msg["holds"] == [1]
        pause = held[0]["pause"]
        assert isinstance(pause, dict)
        p0.send({"type": "hold"})
        assert p0.wait_for(lambda m: m["type"] == "error")["code"] == "paused"
        # When it ends, the deadline has moved by exactly the hold.
        resumed = [_state(p, lambda m: m["pause"] is None) for p in (p0, p1, watcher)]
        for msg in resumed:
            assert msg["deadline"] == pytest.approx(deadline + 1, abs=1e-6)
        p1.send({"type": "hold"})
        assert p1.wait_for(lambda m: m["type"] == "error")["code"] == "hold_used"
        watcher.send({"type": "hold"})
        assert watcher.wait_for(lambda m: m["type"] == "error")["code"] == "spectator"

        code = table.code
        with server.http() as http:
            assert http.post(f"/api/rooms/{code}/pause").status_code == 401
            assert http.post(f"/api/rooms/{code}/pause", headers=auth(table.tokens[1])).status_code == 403
            refused = http.post(f"/api/rooms/{code}/resume", headers=auth(table.host_token))
            assert refused.status_code == 409 and refused.json()["code"] == "not_paused"
            r = http.post(f"/api/rooms/{code}/pause", headers=auth(table.host_token))
            assert r.status_code == 200, r.text
            body = r.json()
            assert body["deadline"] is None and body["pause"]["kind"] == "host" and body["pause"]["seat"] == 0
            assert http.post(f"/api/rooms/{code}/pause", headers=auth(table.host_token)).status_code == 409
        paused = _state(watcher, lambda m: m["pause"] is not None and m["pause"]["kind"] == "host")
        assert paused["deadline"] is None
        # Seat 0 plays while paused (players may); seat 1 and the bot (seat 2) are then awaited in the
        # response window, and the bot waits while the clocks are stopped.
        legal = p0.latest_state()["legal"]  # type: ignore[index]
        p0.send({"type": "act", "action": legal[0], "seq": _state_seq(p0)})
        window = _state(p1, lambda m: m["legal"] and m["legal"][0]["type"] == "pass")
        assert window["deadline"] is None and window["pause"]["left"] == 60  # type: ignore[index]
        time.sleep(0.8)  # the room's bot delay is 0.2 s
        assert server.app.state.hub.backend.get_now(code).seq == window["seq"]
        assert not [k for k in server.app.state.hub.tasks.get(code, {}) if k.startswith("bot:")]
        before = time.time()
        with server.http() as http:
            r = http.post(f"/api/rooms/{code}/resume", headers=auth(table.host_token))
        after = time.time()
        assert r.status_code == 200, r.text
        # The window was reached while stopped: its whole clock starts at the resume.
        assert before + 60 - 0.01 <= r.json()["deadline"] <= after + 60 + 0.01
        back = _state(watcher, lambda m: m["pause"] is None and m["seq"] == window["seq"])
        assert back["deadline"] == r.json()["deadline"]
        # The bot answers now.
        _state(watcher, lambda m: m["seq"] > window["seq"])
        # The game goes on to its end; every state anyone saw (stops included) is its own view.
        play_randomly([p0, p1], seed=3, timeout=60)
        game_id = first["room"]["game_id"]  # type: ignore[index]
        record = httpx.get(f"{server.url}/api/games/{game_id}", headers=auth(table.host_token)).json()
        assert check_no_leaks(record, [(0, p0.messages), (1, p1.messages), (None, watcher.messages)]) > 6
        # What the stops say is public: the players and the spectator saw the same ones, in order.
        seen = []
        for p in (p0, p1, watcher):
            stops = [repr((m["pause"], m["holds"])) for m in p.messages if m["type"] == "state"]
            seen.append([x for i, x in enumerate(stops) if i == 0 or stops[i - 1] != x])
        assert seen[0] == seen[1] == seen[2] and len(seen[0]) >= 5
        for p in (p0, p1, watcher):
            p.close()


def test_stopped_clocks_survive_sigkill(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'talk.sqlite3'}"
    first = ServerProcess(db, None, "--bot-delay", "0.05")
    try:
        server = first.server
        settings = {"turn_seconds": 120, "hold_seconds": 3}
        table = make_table(server, "capitol", humans=2, options={"first_player": 0}, settings=settings)
        p1 = Player(server, table.code, table.tokens[1], 1)
        start(table)
        deadline = _state(p1)["deadline"]
        assert isinstance(deadline, float)
        p1.send({"type": "hold"})
        # Shown only once saved: SIGKILL right after it was seen.
        _state(p1, lambda m: m["pause"] is not None)
    finally:
        first.kill()
    p1.close()
    second = ServerProcess(db, None, "--bot-delay", "0.05")
    try:
        server = second.server
        p1 = Player(server, table.code, table.tokens[1], 1)
        back = _state(p1)
        if back["pause"] is not None:  # the restart took less than the hold
            assert back["pause"]["kind"] == "hold" and back["holds"] == [1]  # type: ignore[index]
            back = _state(p1, lambda m: m["pause"] is None)
        # Ended at its time by the restored server, whenever that ran: the clock lost 3 s.
        assert back["deadline"] == pytest.approx(deadline + 3, abs=1e-6) and back["holds"] == [1]
        # The host's pause survives too; resuming gives the clock what it had left.
        with server.http() as http:
            paused = http.post(f"/api/rooms/{table.code}/pause", headers=auth(table.host_token)).json()
        left = paused["pause"]["left"]
        _state(p1, lambda m: m["pause"] is not None)
    finally:
        second.kill()
    p1.close()
    third = ServerProcess(db, None, "--bot-delay", "0.05")
    try:
        server = third.server
        p1 = Player(server, table.code, table.tokens[1], 1)
        assert _state(p1)["pause"]["kind"] == "host"  # type: ignore[index]
        before = time.time()
        with server.http() as http:
            resumed = http.post(f"/api/rooms/{table.code}/resume", headers=auth(table.host_token)).json()
        after = time.time()
        assert before - 0.01 <= resumed["deadline"] - left <= after + 0.01
        assert _state(p1, lambda m: m["pause"] is None)["deadline"] == resumed["deadline"]
        p1.close()
    finally:
        third.stop()
