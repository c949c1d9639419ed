"""The game master's word to the table: what each seat (or a spectator) is told of a room.

It knows no socket: the hub hands it a room as shown and the seats connected, and sends the texts
it returns. A seat is only ever told its own view (``GameState.view(seat)``) and its own legal
actions; a spectator the public view. What every seat is told alike (the room's description, the
clocks' timeouts, a pause, the holds) is built once per change and shared by every seat's message,
and each seat's text is encoded once per change however many tabs it has open.

A connection that asked for log deltas (``/ws/{code}?v=2``, docs/protocol.md) is sent of the view's
log only what it has not had yet: what it :class:`Held` after its previous message says where its
log ends. Every connection of a seat that is up to date holds the same, so the common case still
encodes one text per seat per change; a connection just opened, or one that asked for a ``sync``,
holds nothing and gets the whole log. A game's log only grows while the game lasts (each view's
log is append-only), so the entries before ``log_from`` are exactly those the connection has.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import msgspec

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
    out: list[Timeout] = []
    for a in reversed(room.actions):  # the newest first: a long game's list is read only that far
        if a["by"] == "timeout":
            out.append(Timeout(a["seq"], a["seat"]))
            if len(out) == last:
                break
    out.reverse()
    return out


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


class Held(NamedTuple):
    """What a connection holds of a game's log after its last message: whose view (the game and the
    seat, None for a spectator's) and how many entries."""

    game: str
    seat: int | None
    length: int


class SeatTexts:
    """One seat's message for one version of a room, and its texts by where the receiving
    connection's log ends: built once, each text encoded once, however many sockets share it."""

    __slots__ = ("_log", "_texts", "held", "message")

    def __init__(self, room: Room, seat: int | None, message: RoomMessage) -> None:
        self.message = message
        log = message.view.get("log") if isinstance(message, State) else None
        self._log: list[Any] | None = None
        self.held: Held | None = None
        # A view without a log list (a game that keeps none) is always sent whole.
        if isinstance(log, list) and room.game_id is not None:
            self._log = log
            self.held = Held(room.game_id, seat, len(log))
        self._texts: dict[int | None, str] = {}

    def log_from(self, held: Held | None) -> int:
        """Where this message's log starts for a connection holding ``held``: the entries it lacks,
        or 0 (the whole log) when it holds another game's, another seat's, or more than there is."""
        mine = self.held
        if held is None or mine is None or held[:2] != mine[:2] or held.length > mine.length:
            return 0
        return held.length

    def text(self, held: Held | None, deltas: bool) -> str:
        """The text for a connection that holds ``held`` (ignored without ``deltas``: the whole view,
        without ``log_from``, as every message was before deltas)."""
        key = self.log_from(held) if deltas and self._log is not None else None
        text = self._texts.get(key)
        if text is None:
            text = self._texts[key] = encode(self._shaped(key))
        return text

    def _shaped(self, log_from: int | None) -> RoomMessage:
        message = self.message
        if log_from is None or self._log is None or not isinstance(message, State):
            return message
        view = message.view if log_from == 0 else {**message.view, "log": self._log[log_from:]}
        return msgspec.structs.replace(message, view=view, log_from=log_from)


class Texts:
    """The messages of a room's last broadcast, per seat: a ``sync``, a second tab or a spectator
    arriving is answered by a lookup, not by a view and an encode, while nothing changed (the
    room's version and who is connected)."""

    def __init__(self) -> None:
        self._rooms: dict[str, tuple[int, frozenset[int], dict[int | None, SeatTexts]]] = {}

    def fresh(self, room: Room, connected: set[int]) -> dict[int | None, SeatTexts]:
        """A new, empty set of messages for this version of the room (a broadcast fills it)."""
        cache: dict[int | None, SeatTexts] = {}
        self._rooms[room.code] = (room.version, frozenset(connected), cache)
        return cache

    def current(self, room: Room, connected: set[int]) -> dict[int | None, SeatTexts] | None:
        """The messages of this very version of the room, if it was the last broadcast."""
        texts = self._rooms.get(room.code)
        if texts is not None and texts[0] == room.version and texts[1] == connected:
            return texts[2]
        return None

    def forget(self, code: str) -> None:
        self._rooms.pop(code, None)


def texts_for(
    room: Room,
    seat: int | None,
    connected: set[int],
    cache: dict[int | None, SeatTexts] | None = None,
    info: dict[str, Any] | None = None,
    shared: Table | None = None,
) -> SeatTexts:
    """``seat``'s message, from ``cache`` when another socket of the seat had it built already."""
    texts = cache.get(seat) if cache is not None else None
    if texts is None:
        texts = SeatTexts(room, seat, message_for(room, seat, connected, info, shared))
        if cache is not None:
            cache[seat] = texts
    return texts
