"""Outgoing messages as typed structs (server/messages.py, built by server/master.py) encode to the
very bytes the server sent when they were dicts, and a seat is only ever told its own cards."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from conflictology.server import master
from conflictology.server.messages import (
    LEFT_MESSAGE,
    REPLACED_MESSAGE,
    Error,
    Left,
    Lobby,
    Pong,
    Reaction,
    Replaced,
    State,
    decode,
    encode,
)
from conflictology.server.protocol import RoomSettings
from conflictology.server.rooms import Room, RoomStatus
from room_helpers import capitol_room

_dicts = msgspec.json.Encoder()


def old_message(room: Room, seat: int | None, connected: set[int]) -> dict[str, Any]:
    """The message as rooms.py built it before the structs (kept here as the reference)."""
    info = room.info(connected)
    if room.status is RoomStatus.LOBBY or room.state is None:
        return {"type": "lobby", "room": info, "you": seat}
    state = room.state
    view = state.view(seat)
    legal = state.legal_actions(seat) if seat is not None and not room.seats[seat].left else []
    pause = None
    if room.pause is not None:
        p = room.pause
        timer = room.deadline_kind if p["left"] is not None else None
        pause = {k: p[k] for k in ("kind", "seat", "since", "until", "left")} | {"timer": timer}
    timeouts = [{"seq": a["seq"], "seat": a["seat"]} for a in room.actions if a["by"] == "timeout"][-20:]
    msg: dict[str, Any] = {
        "type": "state",
        "seq": room.seq,
        "view": view,
        "legal": legal,
        "deadline": room.deadline,
        "timer": room.deadline_kind if room.deadline is not None else None,
        "room": info,
        "timeouts": timeouts,
        "pause": pause,
        "holds": [i for i, s in enumerate(room.seats) if s.id in room.holds],
        "decision_since": room.decision_since,
    }
    if state.is_over():
        msg["winners"] = state.winners()
        if "winners" not in view:
            view["winners"] = state.winners()
    return msg


def play_out(room: Room, now: float, seed: int) -> None:
    rng = random.Random(seed)
    assert room.state is not None
    while not room.state.is_over():
        seat = rng.choice(room.state.waiting_for())
        room.act(seat, rng.choice(room.state.legal_actions(seat)), room.seq, now)


def sample_rooms() -> list[Room]:
    lobby, _ = Room.create("LOBBY2", "capitol", "Ada", None, RoomSettings())
    lobby.join("Bob")
    lobby.add_bots(1, "mystery")
    playing = capitol_room(1000.0)
    playing.expire(1000.0 + playing.settings.turn_seconds + 1)  # a timeout in the list
    held = capitol_room(1000.0)
    held.hold(1, 1001.0)  # a pause with until and left
    paused = capitol_room(1000.0, timers=False)
    paused.host_pause(0, 1002.0)  # a pause with neither
    left = capitol_room(1000.0)
    left.leave(2)
    over = capitol_room(1000.0)
    play_out(over, 1000.0, seed=3)
    cons, _ = Room.create("CONSP2", "conspiranoicos", "Ada", None, RoomSettings())
    cons.add_bots(1, None)
    cons.start(500.0)
    cons_over, _ = Room.create("CONSP3", "conspiranoicos", "Ada", None, RoomSettings())
    cons_over.add_bots(1, None)
    cons_over.start(500.0, seed=4)
    play_out(cons_over, 500.0, seed=4)
    return [lobby, playing, held, paused, left, over, cons, cons_over]


@pytest.mark.parametrize("index", range(8))
def test_every_seats_message_encodes_to_the_same_bytes_as_before(index: int) -> None:
    room = sample_rooms()[index]
    connected = {0, 1} if len(room.seats) > 1 else {0}
    for seat in [None, *range(len(room.seats))]:
        new = master.message_for(room, seat, connected)
        assert isinstance(new, Lobby if room.state is None else State)
        assert encode(new).encode() == _dicts.encode(old_message(room, seat, connected))


def test_a_broadcast_shares_what_every_seat_is_told_alike_and_still_matches() -> None:
    room = capitol_room(1000.0)
    room.hold(2, 1001.0)
    connected = {0, 2}
    info, shared = room.info(connected), master.table(room)
    cache: dict[int | None, master.SeatTexts] = {}
    for seat in (0, 1, 2, None, 0):
        text = master.texts_for(room, seat, connected, cache, info, shared).text(None, deltas=False)
        assert text.encode() == _dicts.encode(old_message(room, seat, connected))
    assert set(cache) == {0, 1, 2, None}


def test_the_other_messages_encode_as_the_dicts_did() -> None:
    pairs: list[tuple[Any, dict[str, Any]]] = [
        (Error("stale", "state 3"), {"type": "error", "code": "stale", "message": "state 3"}),
        (Pong(1795959351.8), {"type": "pong", "time": 1795959351.8}),
        (Replaced(), {"type": "replaced", "message": "this seat was opened in another tab"}),
        (Left(), {"type": "left", "message": "you no longer hold a seat in this room"}),
        (Reaction(2, "🤥"), {"type": "reaction", "seat": 2, "emoji": "🤥"}),
    ]
    for struct, old in pairs:
        assert encode(struct).encode() == _dicts.encode(old)
        assert decode(encode(struct)) == struct
    assert (Left().message, Replaced().message) == (LEFT_MESSAGE, REPLACED_MESSAGE)


def test_a_seat_is_told_its_own_hidden_cards_and_nobody_elses() -> None:
    room = capitol_room(1000.0)  # seat 0: two Bankers, seat 1: Mafia + Judge, seat 2: Hacker + Police
    assert room.state is not None
    for seat in (None, 0, 1, 2):
        msg = master.message_for(room, seat, {0, 1, 2})
        assert isinstance(msg, State)
        for player in msg.view["players"]:
            if player["seat"] == seat:
                assert sorted(player["hidden"]) == sorted(room.state.view(seat)["players"][seat]["hidden"])
            else:
                assert player["hidden"] == 2  # a count, never the cards
        assert msg.view == room.state.view(seat)  # the game's own view, nothing added
        wanted = room.state.legal_actions(seat) if seat is not None else []
        assert msg.legal == wanted
    # On the wire too: seat 1's text names none of seat 0's cards as seat 0's.
    text = encode(master.message_for(room, 1, {0, 1, 2}))
    seat0 = msgspec.json.decode(text)["view"]["players"][0]
    assert seat0["hidden"] == 2 and "banker" not in msgspec.json.encode(seat0).decode()


def test_a_seat_that_left_is_shown_the_game_but_offered_nothing() -> None:
    room = capitol_room(1000.0)
    room.leave(0)  # seat 0 was awaited (its turn)
    assert room.state is not None and 0 in room.state.waiting_for()
    msg = master.message_for(room, 0, set())
    assert isinstance(msg, State) and msg.legal == [] and msg.view == room.state.view(0)
