"""What is saved of a room: its snapshot (everything needed to resume it after a restart: seats
with hashed tokens, settings, the game's ``to_json``, the action log, the clock), the working copy
a shared backend changes before its version check, and a finished game's archive record.
"""

from __future__ import annotations

from typing import Any, Self

import msgspec

from conflictology.server.lifecycle import RoomFields, Seat
from conflictology.server.seats import copy_seat

# At most this many actions are applied again when a room is loaded (its state saved that far back).
STATE_EVERY = 32


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
        # (saved_state, a tuple, is shared as it is)
        room.decision = dict(self.decision)
        room.past_games = list(self.past_games)
        room.pause = None if self.pause is None else dict(self.pause)
        room.holds = list(self.holds)
        return room

    def snapshot(self, state_every: int = STATE_EVERY) -> dict[str, Any]:
        """``state_every``: see ``_saved_state`` (1: the state as it is now)."""
        # Containers are copied: a snapshot may be encoded on another thread while the room changes
        # (a move appended to the live log must not land in an older snapshot).
        state, state_at = self._saved_state(state_every)
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
            "state": state,
            "state_at": state_at,
            "initial": self.initial_json,
            "actions": list(self.actions),
            "started": self.started,
            "finished": self.finished,
            "deadline": self.deadline,
            "deadline_kind": self.deadline_kind,
            "decision": {str(k): v for k, v in self.decision.items()},
            "decision_since": self.decision_since,
            "past_games": list(self.past_games),
            # Replaced, never changed in place (server/standings.py): shared safely with the writer.
            "standings": self.standings,
            "pause": None if self.pause is None else dict(self.pause),
            "holds": list(self.holds),
            "creator": self.creator,
        }

    def _saved_state(self, every: int) -> tuple[str | None, int]:
        """The game state a snapshot carries, and how many actions had been recorded when it was
        taken: the one taken last while fewer than ``every`` actions came after it (a restore
        applies those again: ``rooms._replayed``), else the state now. Taking the state's JSON was
        a tenth of the server's own work a move, and grew with the game's log; the actions after it
        are saved with every change anyway (the store's action log)."""
        if self.state is None:
            return None, 0
        saved = self.saved_state
        done = len(self.actions)
        due = saved is None or not 0 <= done - saved[0] < every or self.state.is_over()
        if saved is None or (due and saved[0] != done):
            saved = self.saved_state = (done, self.state.to_json())
        return saved[1], saved[0]

