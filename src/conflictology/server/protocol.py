"""The schemas of every message the server accepts, checked with msgspec before anything changes.

Request bodies and WebSocket messages are decoded straight into these structs: an unknown field, a
wrong type or a value out of range is refused with a clear error, and nothing in the room changes.
Game rule options stay a free JSON object here; the game itself checks them (``new_game`` raises
``ValueError``), so the server never needs to know them.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

Name = Annotated[str, Meta(min_length=1, max_length=40)]
Seconds = Annotated[float, Meta(ge=1.0, le=3600.0)]
# A room's bot delay has a floor: a room of bots with none would play as fast as the server can
# (anyone may make such a room); the server's own --bot-delay (an operator's) may be 0.
Delay = Annotated[float, Meta(ge=0.2, le=30.0)]
Grace = Annotated[float, Meta(ge=0.0, le=3600.0)]
Seat = Annotated[int, Meta(ge=0, le=63)]
# A seat's stable id (public: room info shows it; a seat's token is what proves it is yours).
SeatId = Annotated[str, Meta(min_length=1, max_length=64)]
# How long the host's pause stops the clocks at most (then they start again by themselves).
PauseSeconds = Annotated[float, Meta(ge=5.0, le=3600.0)]
# How long a player's hold stops every clock (table talk, once per game; docs/protocol.md).
HoldSeconds = Annotated[float, Meta(ge=1.0, le=300.0)]

# The reactions a seated player may send (no free text: nothing to moderate, nothing to leak).
REACTIONS = ("👍", "👏", "😂", "😮", "🤔", "🤥", "😬", "🙏")


class RoomSettings(Struct, forbid_unknown_fields=True):
    """The server's room settings (Capitol ruling 19 gives the timer defaults)."""

    timers: bool = True
    turn_seconds: Seconds = 60.0
    response_seconds: Seconds = 12.0
    choice_seconds: Seconds = 30.0
    # None: the server's --bot-delay.
    bot_delay: Delay | None = None
    # None: the server's grace period before a bot takes over a disconnected seat.
    grace_seconds: Grace | None = None
    # Public rooms are listed by GET /api/rooms; private ones are reached by their code only.
    public: bool = False
    spectators: bool = True
    # A standing table: its code lasts (serve --standing-days idle) and its games add up by name.
    standing: bool = False
    hold_seconds: HoldSeconds = 30.0
    pause_seconds: PauseSeconds = 300.0
    # A practice game (Learn to play, docs/web.md "The coach"): set at creation only, never patched
    # (SettingsPatch has no such field); it deals the practice deal (server/practice.py).
    practice: bool = False


class SettingsPatch(Struct, forbid_unknown_fields=True):
    """A partial update of :class:`RoomSettings`: only the fields given change."""

    timers: bool | UnsetType = UNSET
    turn_seconds: Seconds | UnsetType = UNSET
    response_seconds: Seconds | UnsetType = UNSET
    choice_seconds: Seconds | UnsetType = UNSET
    bot_delay: Delay | UnsetType | None = UNSET
    grace_seconds: Grace | UnsetType | None = UNSET
    public: bool | UnsetType = UNSET
    spectators: bool | UnsetType = UNSET
    standing: bool | UnsetType = UNSET
    hold_seconds: HoldSeconds | UnsetType = UNSET
    pause_seconds: PauseSeconds | UnsetType = UNSET

    def apply_to(self, settings: RoomSettings) -> RoomSettings:
        changes = {f: getattr(self, f) for f in self.__struct_fields__ if getattr(self, f) is not UNSET}
        return msgspec.structs.replace(settings, **changes)


# ---- HTTP request bodies -------------------------------------------------------------------------


class CreateRoom(Struct, forbid_unknown_fields=True):
    game: Annotated[str, Meta(min_length=1, max_length=40)]
    name: Name
    options: dict[str, Any] | None = None
    settings: SettingsPatch | None = None
    # Learn to play: a private practice room (server/practice.py); only here, never in a PATCH.
    practice: bool = False


class JoinRoom(Struct, forbid_unknown_fields=True):
    name: Name


class AddBots(Struct, forbid_unknown_fields=True):
    count: Annotated[int, Meta(ge=1, le=16)] = 1
    level: Annotated[str, Meta(min_length=1, max_length=40)] | None = None


class Empty(Struct, forbid_unknown_fields=True):
    """A body that carries nothing (start, rematch, leave): absent or ``{}``."""


class Claim(Struct, forbid_unknown_fields=True):
    """A seat token from a game played in a standing room (on another device)."""

    token: Annotated[str, Meta(min_length=1, max_length=200)]


class Kick(Struct, forbid_unknown_fields=True):
    """A seat to kick, by its stable id (room info's ``seats[].id``); a seat number must come with
    the id too (numbers shift as seats leave the lobby: a number alone could name someone else)."""

    seat_id: SeatId | None = None
    seat: Seat | None = None


class PatchRoom(Struct, forbid_unknown_fields=True):
    options: dict[str, Any] | None = None
    # Only the options named change (null: back to the rules' own), the others stay: two quick edits
    # from one lobby, each sent before the other's echo arrived, both hold (``options`` replaces all).
    option_changes: dict[str, Any] | None = None
    # Another game for the next one at this table (lobby only).
    game: Annotated[str, Meta(min_length=1, max_length=40)] | None = None
    settings: SettingsPatch | None = None


# ---- WebSocket messages from a client ------------------------------------------------------------


class Act(Struct, tag="act", tag_field="type", forbid_unknown_fields=True):
    """Play an action; ``seq`` (optional) is the state it answers: an older one is refused as stale."""

    action: dict[str, Any]
    seq: Annotated[int, Meta(ge=0)] | None = None


class Ping(Struct, tag="ping", tag_field="type", forbid_unknown_fields=True):
    """Keep-alive; answered by ``{"type": "pong"}``."""


class Sync(Struct, tag="sync", tag_field="type", forbid_unknown_fields=True):
    """Ask for the current lobby or state message again."""


class React(Struct, tag="react", tag_field="type", forbid_unknown_fields=True):
    """A seated player's reaction, one of :data:`REACTIONS`; everyone in the room gets it."""

    emoji: Annotated[str, Meta(max_length=16)]


class Hold(Struct, tag="hold", tag_field="type", forbid_unknown_fields=True):
    """Stop every clock for the room's ``hold_seconds`` (table talk): once per player per game."""


ClientMessage = Act | Ping | Sync | React | Hold

client_decoder: msgspec.json.Decoder[ClientMessage] = msgspec.json.Decoder(ClientMessage)
encoder = msgspec.json.Encoder()


# No message needs more than a handful of levels; a deeply nested one (thousands of `[` fit in the
# size limit) would exhaust the decoder's or a checker's recursion, so it is refused before decoding.
MAX_DEPTH = 64


def check_depth(data: bytes, limit: int = MAX_DEPTH) -> None:
    """Raise ``msgspec.DecodeError`` when the JSON text nests arrays/objects deeper than ``limit``
    (brackets inside strings do not count)."""
    if data.count(b"[") + data.count(b"{") <= limit:
        return
    depth = 0
    in_string = escaped = False
    for byte in data:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # closing quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > limit:
                raise msgspec.DecodeError(f"JSON nested deeper than {limit} levels")
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1


def _decode(data: bytes, decode: Any) -> Any:
    check_depth(data)
    try:
        return decode(data)
    except RecursionError:  # belt and braces: the depth check should have caught it
        raise msgspec.DecodeError("JSON nested too deeply") from None


def decode_body(data: bytes, kind: type[Any]) -> Any:
    """Decode an HTTP body; an empty body counts as ``{}``. Raises ``msgspec.ValidationError`` or
    ``msgspec.DecodeError`` (also for JSON nested deeper than :data:`MAX_DEPTH`)."""
    return _decode(data or b"{}", lambda d: msgspec.json.decode(d, type=kind))


def decode_client(data: bytes) -> ClientMessage:
    """Decode a WebSocket message, with the same depth limit as :func:`decode_body`."""
    msg: ClientMessage = _decode(data, client_decoder.decode)
    return msg
