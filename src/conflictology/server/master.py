"""The game master's word to the table: what each seat (or a spectator) is told of a room.

It knows no socket: the hub hands it a room as shown and the seats connected, and sends the texts
it returns. A seat is only ever told its own view (``GameState.view(seat)``) and its own legal
actions; a spectator the public view. What every seat is told alike (the room's description, the
clocks' timeouts, a pause, the holds) is built once per change and shared by every seat's message,
and each seat's text is encoded once per change however many tabs it has open.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from conflictology.server.messages import Lobby, Pause, RoomMessage, State, Timeout, encode
from conflictology.server.rooms import Room, RoomStatus

# How many of a game's timeouts a state message lists (the newest).
TIMEOUTS_SHOWN = 20


class Table(NamedTuple):
    """What a state message tells every seat alike about the clocks."""

    timeouts: list[Timeout]
    pause: Pause | None
    holds: list[int]


def timeouts(room: Room, last: int = TIMEOUTS_SHOWN) -> list[Timeout]:
    """Whose clock ran out in this game, newest last: the state each timeout action made (``seq``)
    and the seat. Public, as the clock was; the action itself is told by the game's log (an
    action's own fields may be private: the cards an exchange keeps)."""
    out = [Timeout(a["seq"], a["seat"]) for a in room.actions if a["by"] == "timeout"]
    return out[-last:]


def pause(room: Room) -> Pause | None:
    """What every connection is told of a stop (``Room.pause_info``, typed)."""
    p = room.pause
    if p is None:
        return None
    timer = room.deadline_kind if p["left"] is not None else None
    return Pause(p["kind"], p["seat"], p["since"], p["until"], p["left"], timer)


def table(room: Room) -> Table:
    """Built once per broadcast: ``timeouts`` reads the game's whole action list."""
    return Table(timeouts(room), pause(room), [i for i, s in enumerate(room.seats) if s.id in room.holds])


def message_for(
    room: Room,
    seat: int | None,
    connected: set[int],
    info: dict[str, Any] | None = None,
    shared: Table | None = None,
) -> RoomMessage:
    """``seat``'s message (None: a spectator's). ``info`` (``room.info(connected)``) and ``shared``
    (``table(room)``): when the caller already has them (a broadcast builds them once for all)."""
    if info is None:
        info = room.info(connected)
    if room.status is RoomStatus.LOBBY or room.state is None:
        # "you": the receiver's seat (None for a spectator); seats renumber when someone leaves.
        return Lobby(info, seat)
    state = room.state
    view = state.view(seat)
    legal = state.legal_actions(seat) if seat is not None and not room.seats[seat].left else []
    clocks = shared or table(room)
    timer = room.deadline_kind if room.deadline is not None else None
    msg = State(
        room.seq, view, legal, room.deadline, timer, info, clocks.timeouts, clocks.pause, clocks.holds
    )
    if state.is_over():
        msg.winners = state.winners()
        if "winners" not in view:
            view["winners"] = state.winners()
    return msg


class Texts:
    """The texts of a room's last broadcast, per seat: a ``sync``, a second tab or a spectator
    arriving is answered by a lookup, not by a view and an encode, while nothing changed (the
    room's version and who is connected)."""

    def __init__(self) -> None:
        self._rooms: dict[str, tuple[int, frozenset[int], dict[int | None, str]]] = {}

    def fresh(self, room: Room, connected: set[int]) -> dict[int | None, str]:
        """A new, empty set of texts for this version of the room (a broadcast fills it)."""
        cache: dict[int | None, str] = {}
        self._rooms[room.code] = (room.version, frozenset(connected), cache)
        return cache

    def current(self, room: Room, connected: set[int]) -> dict[int | None, str] | None:
        """The texts of this very version of the room, if it was the last broadcast."""
        texts = self._rooms.get(room.code)
        if texts is not None and texts[0] == room.version and texts[1] == connected:
            return texts[2]
        return None

    def forget(self, code: str) -> None:
        self._rooms.pop(code, None)


def text_for(
    room: Room,
    seat: int | None,
    connected: set[int],
    cache: dict[int | None, str],
    info: dict[str, Any] | None = None,
    shared: Table | None = None,
) -> str:
    """``seat``'s text, from ``cache`` when another socket of the seat had it encoded already."""
    text = cache.get(seat)
    if text is None:
        text = cache[seat] = encode(message_for(room, seat, connected, info, shared))
    return text
