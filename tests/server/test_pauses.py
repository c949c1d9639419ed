"""Pauses that end (issue 25): the host's pause lasts the room's ``pause_seconds`` at most, and while
the host is away any seated player may end it; a player's hold still ends by itself."""

from __future__ import annotations

import time
from pathlib import Path

import msgspec
import pytest

from conflictology.server.protocol import RoomSettings, SettingsPatch
from conflictology.server.rooms import RoomError
from room_helpers import capitol_room
from server_helpers import Player, auth, make_table, register_toy, start, thread_server


def test_the_host_pause_ends_at_the_rooms_pause_seconds() -> None:
    t = 0.0
    room = capitol_room(t, pause_seconds=120.0)
    room.host_pause(0, t + 10)
    assert room.pause is not None and room.pause["until"] == t + 130
    # The scheduler's timer ends it then, even when it runs late (a restart): the clock gets back
    # what it had left at the pause.
    room.resume(t + 500, hold_until=t + 130)
    assert room.pause is None and room.deadline == t + 130 + 50


def test_who_may_resume() -> None:
    room = capitol_room(0.0)
    room.host_pause(0, 1.0)
    room.require_resumer(0, host_here=True)
    with pytest.raises(RoomError) as refused:
        room.require_resumer(1, host_here=True)
    assert refused.value.code == "not_host"
    room.require_resumer(1, host_here=False)  # the host is away: anyone seated
    room.resume(2.0)
    room.hold(2, 3.0)
    with pytest.raises(RoomError) as refused:
        room.require_resumer(1, host_here=False)  # a hold is not the host's pause
    assert refused.value.code == "not_host"


def test_pause_seconds_is_a_bounded_room_setting() -> None:
    assert RoomSettings().pause_seconds == 300.0
    for bad in (0, 4.9, 3601):
        with pytest.raises(msgspec.ValidationError):
            msgspec.convert({"pause_seconds": bad}, SettingsPatch)
    patch = msgspec.convert({"pause_seconds": 60}, SettingsPatch)
    assert patch.apply_to(RoomSettings()).pause_seconds == 60


def test_a_host_who_walks_away_does_not_stop_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_toy(monkeypatch)
    with thread_server(tmp_path) as server:
        settings = {"turn_seconds": 60, "response_seconds": 60, "choice_seconds": 60, "pause_seconds": 5}
        table = make_table(server, "toy", humans=2, options={"cards": 2}, settings=settings)
        host = Player(server, table.code, table.tokens[0], 0)
        guest = Player(server, table.code, table.tokens[1], 1)
        start(table)
        guest.wait_for(lambda m: m["type"] == "state")
        code = table.code
        hub = server.app.state.hub
        with server.http() as http:
            assert http.post(f"/api/rooms/{code}/pause", headers=auth(table.host_token)).status_code == 200
            # The host is here: only they resume.
            r = http.post(f"/api/rooms/{code}/resume", headers=auth(table.tokens[1]))
            assert r.status_code == 403 and r.json()["code"] == "not_host"
            host.close()
            deadline = time.time() + 60
            while 0 in hub.connected_seats(hub.backend.get_now(code)):
                assert time.time() < deadline, "the host's socket was never seen closed"
                time.sleep(0.05)
            # The host is away: the guest may start the clocks again.
            r = http.post(f"/api/rooms/{code}/resume", headers=auth(table.tokens[1]))
            assert r.status_code == 200, r.text
            assert r.json()["pause"] is None and r.json()["deadline"] is not None
            # Paused again (the host back for a moment, then gone): the pause ends by itself.
            paused = http.post(f"/api/rooms/{code}/pause", headers=auth(table.host_token))
            assert paused.status_code == 200
            seq, since = paused.json()["seq"], paused.json()["pause"]["since"]
        guest.wait_for(
            lambda m: m["type"] == "state" and m["pause"] is not None and m["pause"]["since"] == since
        )
        ended = guest.wait_for(lambda m: m["type"] == "state" and m["pause"] is None, 60)
        assert ended["seq"] >= seq
        assert ended["deadline"] is not None and time.time() >= since + 5
        guest.close()
