"""A Capitol room dealt from a known deck, for the tests of clocks, holds and table talk."""

from __future__ import annotations

from conflictology import games
from conflictology.server.protocol import RoomSettings
from conflictology.server.rooms import Room

# Seat 0 holds two Bankers, seat 1 Mafia + Judge, seat 2 Hacker + Police; the rest is the deck.
DECK = ["banker", "banker", "mafia", "judge", "hacker", "police", "banker", "mafia", "mafia", "hacker",
        "hacker", "judge", "judge", "reporter", "reporter", "reporter", "police", "police"]  # fmt: skip


def capitol_room(now: float, **settings: object) -> Room:
    room, _ = Room.create("TEST2", "capitol", "Ada", {"first_player": 0}, RoomSettings(**settings))  # type: ignore[arg-type]
    room.join("Bob")
    room.join("Cy")
    room.start(now)
    # The same table, dealt from a known deck (start() shuffles with a fresh seed).
    room.state = games.get("capitol").new_game(3, seed=1, options=room.options, deck=DECK)
    room.initial_json = room.state.to_json()
    room.saved_state = None  # the state saved at the start was the one replaced
    room.decision = {}
    room._after_state_change(now, force_new_clock=True)
    return room
