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
from msgspec import UNSET, UnsetType

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
    return [Timeout(seq, seat) for seq, seat in room.timed_out[-last:]]


def pause(room: Room) -> Pause | None:
    """What every connection is told of a stop (``Room.pause_info``, typed)."""
    p = room.pause
    if p is None:
        return None
    timer = room.deadline_kind if p["left"] is not None else None
    return Pause(p["kind"], p["seat"], p["since"], p["until"], p["left"], timer)


def table(room: Room) -> Table:
    """Built once per broadcast and shared by every seat's message."""
    return Table(timeouts(room), pause(room), [i for i, s in enumerate(room.seats) if s.id in room.holds])


def message_for(
    room: Room,
    seat: int | None,
    connected: set[int],
    info: dict[str, Any] | msgspec.Raw | None = None,
    shared: Table | None = None,
    since: int = 0,
) -> RoomMessage:
    """``seat``'s message (None: a spectator's). ``info`` (``room.info(connected)``) and ``shared``
    (``table(room)``): when the caller already has them (a broadcast builds them once for all).

    ``since`` > 0: the view's log holds only the entries from there on (``GameState.view_since``),
    and ``log_from`` says where it starts: ``since``, or 0 when the log is not that long (its view
    is whole then). Without, the view is whole and ``log_from`` unset."""
    if info is None:
        info = room.info(connected)
    if room.status is RoomStatus.LOBBY or room.state is None:
        # "you": the receiver's seat (None for a spectator); seats renumber when someone leaves.
        return Lobby(info, seat)
    state = room.state
    start: int | UnsetType = UNSET
    if since > 0:
        view, length = state.view_since(seat, since)
        if length < 0:
            pass  # a view without a log list: whole already
        elif since <= length:
            start = since
        else:
            view, start = state.view(seat), 0
    else:
        view = state.view(seat)
    legal = state.legal_actions(seat) if seat is not None and not room.seats[seat].left else []
    clocks = shared or table(room)
    timer = room.deadline_kind if room.deadline is not None else None
    msg = State(
        room.seq, view, legal, room.deadline, timer, info, clocks.timeouts, clocks.pause, clocks.holds,
        decision_since=room.decision_since, log_from=start,
    )  # fmt: skip
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
    connection's log ends: built once, each text encoded once, however many sockets share it.

    Its view's log starts at ``start``: where the log of the seat's connections that are furthest
    behind ends (0: whole), so that a change renders only the entries some connection lacks, not a
    game's whole log for every seat (``texts_for`` builds it again from 0 when a connection needs
    more)."""

    __slots__ = ("_log", "_logged", "_texts", "held", "message", "start")

    def __init__(self, room: Room, seat: int | None, message: RoomMessage) -> None:
        self.message: RoomMessage | None = message
        log = message.view.get("log") if isinstance(message, State) else None
        self._log: list[Any] | None = None
        self._logged = False  # whether its texts can be log deltas (it keeps this once sealed)
        self.held: Held | None = None
        self.start = 0
        # A view without a log list (a game that keeps none) is always sent whole.
        if isinstance(log, list) and room.game_id is not None:
            self._log = log
            self._logged = True
            if isinstance(message, State) and isinstance(message.log_from, int):
                self.start = message.log_from
            self.held = Held(room.game_id, seat, self.start + len(log))
        self._texts: dict[int | None, str] = {}

    def log_from(self, held: Held | None) -> int:
        """Where this message's log starts for a connection holding ``held``: the entries it lacks,
        or 0 (the whole log) when it holds another game's, another seat's, or more than there is."""
        mine = self.held
        if held is None or mine is None or held[:2] != mine[:2] or held.length > mine.length:
            return 0
        return held.length

    def key(self, held: Held | None, deltas: bool) -> int | None:
        """Which text a connection gets: its ``log_from``, or None (whole, without ``log_from``)."""
        return self.log_from(held) if deltas and self._logged else None

    def covers(self, held: Held | None, deltas: bool) -> bool:
        """Whether the log rendered holds every entry that connection lacks (once sealed: whether
        its text is here)."""
        key = self.key(held, deltas)
        if self.message is None:
            return key in self._texts
        return (key or 0) >= self.start

    def seal(self) -> None:
        """Keep only the texts once a broadcast is over: a second tab or a ``sync`` reads them, and
        anything else is built again. A room's last message otherwise keeps its views alive (a
        hundred-odd lists and dicts a room), which Python's collector scans at every pass: at
        1,000 rooms such passes stopped the event loop for 30-160 ms (benchmarks/server.md)."""
        self.message = None
        self._log = None

    def text(self, held: Held | None, deltas: bool) -> str:
        """The text for a connection that holds ``held`` (ignored without ``deltas``: the whole view,
        without ``log_from``, as every message was before deltas)."""
        key = self.key(held, deltas)
        text = self._texts.get(key)
        if text is None:
            text = self._texts[key] = encode(self._shaped(key))
        return text

    def _shaped(self, log_from: int | None) -> RoomMessage:
        message = self.message
        if message is None:
            # texts_for never hands out a sealed message that lacks the text asked for.
            raise ValueError(f"a sealed message has no text for log from {log_from}")
        if not isinstance(message, State) or self._log is None:
            return message
        if (log_from or 0) < self.start:
            # texts_for never hands out a message that cannot serve its connection.
            raise ValueError(f"log from {log_from} asked of a message whose log starts at {self.start}")
        if log_from is None:
            # Whole, as before deltas: the message itself when it was built whole (the v1 case).
            return message if message.log_from is UNSET else msgspec.structs.replace(message, log_from=UNSET)
        view = {**message.view, "log": self._log[log_from - self.start :]}
        return msgspec.structs.replace(message, view=view, log_from=log_from)


def wanted(room: Room, seat: int | None, held: Held | None, deltas: bool) -> int:
    """Where the log of ``seat``'s message must start for a connection holding ``held``: the length
    it holds, when it takes deltas and holds this very game's log of this seat; else 0."""
    if not deltas or held is None or held.game != room.game_id or held.seat != seat:
        return 0
    return held.length


class Texts:
    """The texts of a room's last broadcast, per seat (sealed: ``SeatTexts.seal``): a ``sync``, a
    second tab or a spectator arriving is answered by a lookup when one of them is the text it needs
    and nothing changed (the room's version and who is connected); else its message is built."""

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
    info: dict[str, Any] | msgspec.Raw | None = None,
    shared: Table | None = None,
    held: Held | None = None,
    deltas: bool = False,
) -> SeatTexts:
    """``seat``'s message for a connection holding ``held`` (with ``deltas``: protocol v2), from
    ``cache`` when another socket of the seat had it built already and it holds the log that
    connection lacks; else built from ``room`` (the version the cache is of), its log from where
    this connection's ends, or from where the cached one's started if that is sooner."""
    texts = cache.get(seat) if cache is not None else None
    if texts is None or not texts.covers(held, deltas):
        since = wanted(room, seat, held, deltas)
        if texts is not None:
            since = min(since, texts.start)
        texts = SeatTexts(room, seat, message_for(room, seat, connected, info, shared, since=since))
        if cache is not None:
            cache[seat] = texts
    return texts
