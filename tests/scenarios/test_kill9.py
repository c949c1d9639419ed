"""A server killed with SIGKILL at random moments never takes back a move a player saw (issue 13,
item 6), checked from outside by the attack tool's kill -9 round (benchmarks/attacks/kill9.py,
``python -m benchmarks.attacks --only kill9``): every client records each state it receives; after
each kill and restart, a room's seq must not be below the last one seen, and the log seen must be a
prefix of the log now. The benchmark runs 100 kills; this test a handful."""

from __future__ import annotations

from benchmarks.attacks.kill9 import kill9


def test_a_killed_server_takes_back_no_move_a_player_saw() -> None:
    result = kill9(kills=5, rooms=6, seed=13)
    assert result.room_checks == 30
    assert result.moves > 100  # the rooms really played between the kills
    assert result.lost_seen_moves == 0 and result.divergent_rooms == 0, result.details
