"""Every message the server sends on a WebSocket, as typed structs (the incoming ones are in
``protocol.py``); docs/protocol.md, "Server → client", describes them.

Each struct encodes to exactly the JSON the server has always sent: the ``type`` tag first, then the
fields in the order declared here, and a field left ``UNSET`` absent (a ``state``'s ``winners``
before the end). Key order means nothing to a client, but recorded fixtures and tests compare text.
The room's description (``room``) and the game's ``view`` stay plain JSON objects: the first is also
an HTTP answer (``GET /api/rooms/{code}``), the second is the game's own (docs/contract.md).
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, Struct, UnsetType

from conflictology.engine import Action

# What a seat's sockets are told when it is kicked or given up (the socket is closed after it).
LEFT_MESSAGE = "you no longer hold a seat in this room"
# What the oldest tab of a seat is told when one more than the server keeps opens.
REPLACED_MESSAGE = "this seat was opened in another tab"


class Timeout(Struct):
    """A clock that ran out in this game: the state its timeout action made, and whose it was (the
    action itself is told by the game's log: its own fields may be private)."""

    seq: int
    seat: int


class Pause(Struct):
    """Every clock stopped: who and since when, until when (a hold; None for the host's pause), the
    seconds the decision clock will have when it starts again and its kind (None with timers off)."""

    kind: str
    seat: int
    since: float
    until: float | None
    left: float | None
    timer: str | None


class Lobby(Struct, tag="lobby", tag_field="type"):
    """Before the start and after a rematch. ``you``: the receiver's seat now (None: a spectator)."""

    room: dict[str, Any] | msgspec.Raw  # (Raw: encoded once for every seat of a broadcast)
    you: int | None


class State(Struct, tag="state", tag_field="type"):
    """From the start on, the end included: the receiver's own view and legal actions, the decision
    clock, and what every seat is told alike of the clocks (``timeouts``, ``pause``, ``holds``).

    ``log_from`` (only to a connection that asked for log deltas, ``/ws/{code}?v=2``): the view's
    ``log`` holds the entries from this index on, those the connection has not been sent yet; its
    earlier entries are the ones the connection's previous message ended with (0: the whole log)."""

    seq: int
    view: dict[str, Any]
    legal: list[Action]
    deadline: float | None
    timer: str | None
    room: dict[str, Any] | msgspec.Raw
    timeouts: list[Timeout]
    pause: Pause | None
    holds: list[int]
    # The state since which the decision awaited now has gone on: an answer quoting it or any later
    # one is taken (docs/protocol.md, ``act``).
    decision_since: int = 0
    winners: list[int] | UnsetType = UNSET
    log_from: int | UnsetType = UNSET


class Reaction(Struct, tag="reaction", tag_field="type"):
    seat: int
    emoji: str


class Error(Struct, tag="error", tag_field="type"):
    """A refused message, to the connection that sent it only; nothing changed."""

    code: str
    message: str


class Replaced(Struct, tag="replaced", tag_field="type"):
    message: str = REPLACED_MESSAGE


class Pong(Struct, tag="pong", tag_field="type"):
    time: float


class Left(Struct, tag="left", tag_field="type"):
    message: str = LEFT_MESSAGE


ServerMessage = Lobby | State | Reaction | Error | Replaced | Pong | Left
# What a table is told of itself: the message built per seat on each change of the room.
RoomMessage = Lobby | State

_encoder = msgspec.json.Encoder()


def encode(message: ServerMessage) -> str:
    """The message's text, as it goes on the socket."""
    return _encoder.encode(message).decode()


def decode(text: str | bytes) -> ServerMessage:
    """A message as a client reads it (tests and network bots)."""
    return _decoder.decode(text)


_decoder: msgspec.json.Decoder[ServerMessage] = msgspec.json.Decoder(ServerMessage)
