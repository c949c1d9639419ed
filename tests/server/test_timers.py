"""The decision clocks of Capitol ruling 19 on the real games, driven by a fake clock (no waiting):
how decisions are classified, when a clock is kept or restarted, and what a timeout does."""

from __future__ import annotations

import random
from typing import Any

import msgspec

from conflictology import games
from conflictology.server import master
from conflictology.server.messages import RoomMessage, encode
from conflictology.server.rooms import Room, RoomStatus
from room_helpers import DECK, capitol_room


def test_each_game_says_which_clock_a_decision_runs_on() -> None:
    capitol = games.get("capitol").new_game(3, seed=1, options={"first_player": 0}, deck=DECK)
    assert capitol.decision_kind(0) == "turn"
    capitol.apply(0, {"type": "banker"})
    assert capitol.decision_kind(1) == "response"
    capitol.apply(1, {"type": "challenge"})
    assert capitol.decision_kind(1) == "choice"  # lose an influence
    cons = games.get("conspiranoicos").new_game(2, seed=1)
    assert cons.decision_kind(0) == "turn"  # simultaneous plays


def test_the_kinds_match_what_the_awaited_seats_are_offered() -> None:
    """Over random games of both: a turn offers a move of one's own, a response only pass,
    challenge or block, and a choice neither (the classification the server once made itself)."""
    rng = random.Random(5)
    own_moves = {"income", "foreign_aid", "scandal", "banker", "mafia", "hacker", "reporter",
                 "police_investigate", "police_swap", "play"}  # fmt: skip
    seen = set()
    for name, players in (("capitol", 2), ("capitol", 5), ("conspiranoicos", 2)):
        for seed in range(8):
            state = games.get(name).new_game(players, seed=seed)
            while not state.is_over():
                for seat in state.waiting_for():
                    types = {a["type"] for a in state.legal_actions(seat)}
                    kind = state.decision_kind(seat)
                    seen.add((name, kind))
                    if kind == "turn":
                        assert types & own_moves, (name, types)
                    elif kind == "response":
                        assert types <= {"pass", "challenge", "block"}, (name, types)
                    else:
                        assert not types & own_moves and not types <= {"pass", "challenge", "block"}
                seat = rng.choice(state.waiting_for())
                state.apply(seat, rng.choice(state.legal_actions(seat)))
    assert seen >= {("capitol", "turn"), ("capitol", "response"), ("capitol", "choice"),
                    ("conspiranoicos", "turn"), ("conspiranoicos", "choice")}  # fmt: skip


def test_a_clock_runs_per_decision_and_timeouts_follow_ruling_19() -> None:
    t = 1000.0
    room = capitol_room(t)
    assert room.deadline == t + 60 and room.deadline_kind == "turn"
    assert not room.expire(t + 59.9)  # not yet
    room.act(0, {"type": "banker"}, room.seq, t + 5)
    assert room.deadline == t + 5 + 12 and room.deadline_kind == "response"
    window = room.deadline
    # Seat 1 passes: seat 2 still faces the same window, its clock is not restarted.
    room.act(1, {"type": "pass"}, room.seq, t + 10)
    assert room.deadline == window
    # Seat 2 lets the clock run out: a response times out as a pass, the Banker takes $3M, and the
    # next turn gets a fresh turn clock.
    assert room.expire(window + 0.1)
    assert room.actions[-1] == {"seq": room.seq, "seat": 2, "action": {"type": "pass"}, "by": "timeout"}
    assert room.state is not None and room.state.view(None)["players"][0]["money"] == 5
    assert room.state.waiting_for() == [1]
    assert room.deadline == window + 0.1 + 60 and room.deadline_kind == "turn"
    # A silent turn takes Income.
    assert room.expire(room.deadline + 1)
    assert room.actions[-1]["action"] == {"type": "income"} and room.actions[-1]["by"] == "timeout"


def test_a_silent_response_window_passes_for_everyone_at_once() -> None:
    t = 0.0
    room = capitol_room(t, response_seconds=5)
    room.act(0, {"type": "banker"}, room.seq, t)
    seq = room.seq
    assert room.expire(t + 5.01)
    assert [(a["seat"], a["action"]["type"], a["by"]) for a in room.actions[-2:]] == [
        (1, "pass", "timeout"),
        (2, "pass", "timeout"),
    ]
    assert room.seq == seq + 2 and room.state is not None and room.state.waiting_for() == [1]


def test_a_lost_influence_is_chosen_on_timeout() -> None:
    t = 0.0
    room = capitol_room(t, choice_seconds=30)
    room.act(0, {"type": "banker"}, room.seq, t)
    room.act(1, {"type": "challenge"}, room.seq, t + 1)  # seat 0 really holds a Banker
    assert room.deadline_kind == "choice" and room.deadline == t + 1 + 30
    assert room.expire(t + 31.5)
    last = room.actions[-1]
    assert last["seat"] == 1 and last["action"]["type"] == "lose" and last["by"] == "timeout"
    assert last["action"]["card"] in ("mafia", "judge")


def test_timers_off_means_no_deadline_and_no_expiry() -> None:
    room = capitol_room(0.0, timers=False)
    assert room.deadline is None
    assert not room.expire(10**9)
    assert room.status is RoomStatus.PLAYING and room.actions == []


def test_a_snapshot_round_trip_keeps_the_clock_and_the_game() -> None:
    room = capitol_room(50.0)
    room.act(0, {"type": "banker"}, room.seq, 51.0)
    copy = Room.restore(room.snapshot())
    assert copy.deadline == room.deadline and copy.decision == room.decision and copy.seq == room.seq
    assert copy.state is not None and room.state is not None
    assert copy.state.to_json() == room.state.to_json()
    copy.act(1, {"type": "pass"}, copy.seq, 52.0)
    assert copy.deadline == room.deadline  # the restored window keeps its clock too


def wire(message: RoomMessage) -> dict[str, Any]:
    """The message as its socket carries it."""
    decoded: dict[str, Any] = msgspec.json.decode(encode(message))
    return decoded


def test_state_messages_say_whose_clock_ran_out_and_nothing_more() -> None:
    """Issue 17.13: a state message lists the timeouts of the game (the state each made and the
    seat), so a client can say the clock ran out rather than present it as a choice; the action
    itself is not in it (an exchange's kept cards are private)."""
    t = 1000.0
    room = capitol_room(t)
    assert wire(master.message_for(room, 1, set()))["timeouts"] == []
    room.expire(t + room.settings.turn_seconds + 1)  # seat 0's turn: Income on timeout
    msg = wire(master.message_for(room, 1, set()))
    assert msg["timeouts"] == [{"seq": room.seq, "seat": 0}]
    assert room.actions[-1]["by"] == "timeout"
    assert set(msg["timeouts"][0]) == {"seq", "seat"}



def test_the_timeouts_named_are_the_games_own_after_a_copy_a_restart_and_a_rematch() -> None:
    """The timeouts a message names are kept as they are recorded (a pass over a long game's actions
    at every move cost the server more the longer the game): they must be what the actions say, the
    last ``TIMEOUTS_SHOWN`` of them, in a copy and in a room restored from its snapshot, and none
    after a rematch."""

    def scanned(room: Room) -> list[dict[str, int]]:
        found = [{"seq": a["seq"], "seat": a["seat"]} for a in room.actions if a["by"] == "timeout"]
        return found[-master.TIMEOUTS_SHOWN :]

    rng = random.Random(7)
    t = 1000.0
    room = capitol_room(t)
    def count() -> int:
        return sum(a["by"] == "timeout" for a in room.actions)

    while room.status is RoomStatus.PLAYING and count() <= master.TIMEOUTS_SHOWN:
        assert room.state is not None
        t += 1
        if rng.random() < 0.8 and room.deadline is not None:
            room.expire(room.deadline + 0.1)
        else:
            seat = sorted(room.state.waiting_for())[0]
            room.act(seat, rng.choice(room.state.legal_actions(seat)), room.seq, t)
        restored = Room.restore(msgspec.json.decode(msgspec.json.encode(room.snapshot())))
        for shown in (room, room.copy(), restored):
            assert wire(master.message_for(shown, 1, set()))["timeouts"] == scanned(room)
    # More timeouts than a message names: the oldest fell off the list.
    assert count() > master.TIMEOUTS_SHOWN
    while room.status is RoomStatus.PLAYING:  # to the end, then a rematch
        assert room.state is not None
        seat = sorted(room.state.waiting_for())[0]
        room.act(seat, rng.choice(room.state.legal_actions(seat)), room.seq, t)
    room.rematch()
    assert room.timed_out == []
    room.start(t + 1)
    assert wire(master.message_for(room, 1, set()))["timeouts"] == []
