"""A room's lifecycle (lobby → playing → over, → lobby again on a rematch), the refusal of a
request (:class:`RoomError`), and the fields every piece of a room works on (:class:`RoomFields`,
its seats as :class:`Seat` records).

A room is one dataclass (``rooms.Room``) made of pieces, each a concept of its own: its seats
(``seats.py``), its clocks (``clocks.py``), what is saved of it (``snapshots.py``), and the game
itself (``rooms.py``). The pieces see the room's fields through :class:`RoomFields`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from conflictology import games
from conflictology.engine import Game, GameState
from conflictology.server.protocol import RoomSettings


class RoomStatus(StrEnum):
    """Lobby → playing (start) → over (the game ended) → lobby (rematch)."""

    LOBBY = "lobby"
    PLAYING = "playing"
    OVER = "over"


class RoomError(Exception):
    """A refused request: the HTTP status, a stable error code and a message for people."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


@dataclass
class Seat:
    id: str
    name: str
    token_hash: str | None = None  # None for a bot
    bot: bool = False
    level: str | None = None
    afk: bool = False  # a disconnected player past the grace period: a bot plays for them
    left: bool = False  # the player left (or was kicked) mid-game: a bot plays on
    mystery: bool = False  # a mystery bot: its level is shown only once the game is over
    # A bot's number at the table ("Bot 2"): clients name it in their own words from it and its level.
    # None for a player, and for a bot seated before bots were numbered.
    number: int | None = None
    # A disconnected player's grace period ends then (epoch seconds) and a bot stands in: every page
    # shows the countdown. Set when the grace starts, cleared on return (or when the bot takes over).
    away_until: float | None = None

    @property
    def bot_controlled(self) -> bool:
        return self.bot or self.afk or self.left


class RoomFields:
    """What every piece of a room may read and change, with the checks they share."""

    # The room's fields (``Room``, a dataclass, declares them with their defaults).
    code: str
    game_name: str
    options: dict[str, Any]
    settings: RoomSettings
    seats: list[Seat]
    host: str | None
    status: RoomStatus
    created: float
    updated: float
    version: int
    seq: int
    game_id: str | None
    state: GameState | None
    initial_json: str | None
    actions: list[dict[str, Any]]
    timed_out: list[tuple[int, int]]
    saved_state: tuple[int, str] | None
    started: float | None
    finished: float | None
    deadline: float | None
    deadline_kind: str | None
    decision: dict[int, str]
    decision_since: int
    past_games: list[str]
    standings: dict[str, Any] | None
    pause: dict[str, Any] | None
    holds: list[str]
    creator: str | None

    @property
    def game(self) -> Game:
        return games.get(self.game_name)

    def _require_lobby(self) -> None:
        if self.status is not RoomStatus.LOBBY:
            raise RoomError(409, "not_in_lobby", f"the room is {self.status.value}, not in its lobby")

    def _require_playing(self) -> None:
        if self.status is not RoomStatus.PLAYING or self.state is None:
            raise RoomError(409, "not_playing", f"the room is {self.status.value}: no game is being played")
