"""A player who drops is shown at once (issue 26): when their last socket closes, every other page
is told the seat is offline and when a bot stands in (``away_until``, the grace period's end); the
mark clears when they are back. Each step waits on the message it checks, never on a clock."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from server_helpers import Player, make_table, start, thread_server

GRACE = 600.0  # long enough that no bot stands in while the test runs, however loaded the machine


def seat_of(msg: dict[str, Any], seat: int) -> dict[str, Any]:
    room = msg.get("room") or {}
    found = [s for s in room.get("seats", []) if s["seat"] == seat]
    return found[0] if found else {}


def test_a_dropped_seat_is_marked_with_its_grace_deadline_and_the_mark_clears_on_return(
    tmp_path: Path,
) -> None:
    with thread_server(tmp_path, grace_seconds=GRACE) as server:
        table = make_table(server, "capitol", 2, settings={"timers": False})
        start(table)
        host = Player(server, table.code, table.tokens[0], 0)
        ben = Player(server, table.code, table.tokens[1], 1)
        try:
            host.wait_for(lambda m: m["type"] == "state" and seat_of(m, 1).get("connected") is True)
            closed = time.time()
            ben.close()
            marked = host.wait_for(lambda m: m["type"] == "state" and "away_until" in seat_of(m, 1))
            seat = seat_of(marked, 1)
            assert seat["connected"] is False and not seat.get("afk")
            # The deadline is the grace period's end, counted from the drop (not a bot already in).
            assert closed + GRACE / 2 < seat["away_until"] <= time.time() + GRACE

            ben = Player(server, table.code, table.tokens[1], 1)
            back = host.wait_for(lambda m: m["type"] == "state" and seat_of(m, 1).get("connected") is True)
            if "away_until" in seat_of(back, 1):
                back = host.wait_for(lambda m: m["type"] == "state" and "away_until" not in seat_of(m, 1))
            assert seat_of(back, 1)["connected"] is True and not seat_of(back, 1).get("afk")
            # Saved as the room is: the mark is gone from the room itself, not only hidden.
            with server.http() as http:
                again = http.get(f"/api/rooms/{table.code}").json()["seats"][1]
            assert "away_until" not in again and again["connected"] is True
        finally:
            host.close()
            ben.close()


def test_a_spectator_sees_the_mark_too_and_it_tells_nothing_of_the_game(tmp_path: Path) -> None:
    with thread_server(tmp_path, grace_seconds=GRACE) as server:
        table = make_table(server, "capitol", 2, settings={"timers": False})
        start(table)
        ben = Player(server, table.code, table.tokens[1], 1)
        watcher = Player(server, table.code, None, None)
        try:
            watcher.wait_for(lambda m: m["type"] == "state" and seat_of(m, 1).get("connected") is True)
            ben.close()
            marked = watcher.wait_for(lambda m: m["type"] == "state" and "away_until" in seat_of(m, 1))
            # The seat entry gains a number only: its fields are the room's public ones.
            assert set(seat_of(marked, 1)) <= {"seat", "id", "name", "bot", "host", "connected", "away_until"}
            assert isinstance(seat_of(marked, 1)["away_until"], float)
        finally:
            watcher.close()
            ben.close()
