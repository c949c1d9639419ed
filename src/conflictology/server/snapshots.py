"""What is saved of a room: its snapshot (everything needed to resume it after a restart: seats
with hashed tokens, settings, the game's ``to_json``, the action log, the clock), the working copy
a shared backend changes before its version check, and a finished game's archive record.
"""

from __future__ import annotations

from typing import Any, Self

import msgspec

from conflictology.server.lifecycle import RoomFields, Seat
from conflictology.server.seats import copy_seat


def player_entry(seat: int, s: Seat) -> dict[str, Any]:
    """A player of an archived game: a bot with its number and whether it was a mystery (its level,
    played, is no longer a secret once the game is over), for clients to name it in their words."""
    entry: dict[str, Any] = {"seat": seat, "name": s.name, "bot": s.bot, "level": s.level}
    if s.number is not None:
        entry["bot_number"] = s.number
    if s.mystery:
        entry["mystery"] = True
    return entry


class Snapshots(RoomFields):
    """The saving part of a room (``rooms.Room`` is made of it; ``Room.restore`` reads a snapshot)."""

    def archive_record(self) -> dict[str, Any]:
        """The finished game, whole: initial deal, every action, final state (ruling: a finished
        game's log may be published whole)."""
        assert self.state is not None and self.game_id is not None
        final_public = self.state.view(None)
        return {
            "id": self.game_id,
            "room": self.code,
            "game": self.game_name,
            # GET /api/games lists only public rooms' games: a private room's code is its only lock.
            "public": self.settings.public,
            "options": self.options,
            "players": [player_entry(i, s) for i, s in enumerate(self.seats)],
            "started": self.started,
            "finished": self.finished,
            "winners": self.state.winners(),
            "initial": self.initial_json,
            "actions": self.actions,
            "final": self.state.to_json(),
            "log": final_public.get("log", []),
            # The players' token hashes: a private room's finished games are replayed only for them
            # (never served: GET /api/games/{id} picks its fields).
            "keys": [s.token_hash for s in self.seats if s.token_hash is not None],
        }

    def copy(self) -> Self:
        """A working copy a shared backend changes before its version check: every container is
        new, and the game state is shared because room operations never change it in place
        (``act`` and ``expire`` apply to a clone and swap it in)."""
        # Attribute by attribute rather than dataclasses.replace, which runs __init__ with every
        # field: a shared backend copies on every move, and this is 4x faster.
        room = object.__new__(type(self))
        room.__dict__.update(self.__dict__)
        room.options = dict(self.options)
        room.seats = [copy_seat(s) for s in self.seats]
        room.actions = list(self.actions)
        room.timed_out = list(self.timed_out)
        room.decision = dict(self.decision)
        room.past_games = list(self.past_games)
        room.pause = None if self.pause is None else dict(self.pause)
        room.holds = list(self.holds)
        return room

    def snapshot(self) -> dict[str, Any]:
        # Containers are copied: a snapshot may be encoded on another thread while the room changes
        # (a move appended to the live log must not land in an older snapshot).
        return {
            "code": self.code,
            "game": self.game_name,
            "options": dict(self.options),
            "settings": msgspec.to_builtins(self.settings),
            "seats": [s.__dict__.copy() for s in self.seats],
            "host": self.host,
            "status": self.status.value,
            "created": self.created,
            "updated": self.updated,
            "version": self.version,
            "seq": self.seq,
            "game_id": self.game_id,
            "state": self.state.to_json() if self.state is not None else None,
            "initial": self.initial_json,
            "actions": list(self.actions),
            "started": self.started,
            "finished": self.finished,
            "deadline": self.deadline,
            "deadline_kind": self.deadline_kind,
            "decision": {str(k): v for k, v in self.decision.items()},
            "past_games": list(self.past_games),
            # Replaced, never changed in place (server/standings.py): shared safely with the writer.
            "standings": self.standings,
            "pause": None if self.pause is None else dict(self.pause),
            "holds": list(self.holds),
            "creator": self.creator,
        }
