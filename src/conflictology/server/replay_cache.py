"""Finished games' replays, built once, off the event loop, and kept as the bytes sent.

A replay replays every move with every card face up: seconds of work for a long game. So a replay is
built in a worker thread (``asyncio.to_thread``: the build is linear in the game's length, bounded by
Capitol's hard cap of decisions, so it holds the interpreter a bounded time), encoded there once (the
JSON the route sends and the text record), and kept in a least-recently-used cache bounded in bytes:
``per_replay`` at most for one replay (a larger one is sent but not kept) and ``budget`` in all.
Identical builds are merged: while one game's replay is being built, every other request for it waits
for that build (single flight) instead of starting its own.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from conflictology import replay

REPLAY_BUDGET = 64 * 1024 * 1024  # every replay kept, in all
REPLAY_MAX = 16 * 1024 * 1024  # one replay kept (a 2,000-decision Capitol game is ~2 MB)


@dataclass(frozen=True, slots=True)
class Encoded:
    """One finished game's replay as sent: the JSON of ``GET /replay`` and the text of ``/record.txt``
    (with the name the download gets)."""

    json: bytes
    text: bytes
    filename: str

    @property
    def size(self) -> int:
        return len(self.json) + len(self.text)


def encode(record: dict[str, Any]) -> Encoded:
    """Build and encode one replay (``replay.build``, ``replay.text_record``): run in a thread."""
    built = replay.build(record)
    # The bytes Starlette's JSONResponse sends for the same content.
    body = json.dumps(built, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
    text = replay.text_record(built).encode("utf-8")
    return Encoded(body, text, f"conflictology-{built['game']}-{built['id'][:12]}.txt")


class ReplayCache:
    """Replays by game id: built once per game however many ask at once, kept within a byte budget."""

    def __init__(
        self,
        build: Callable[[dict[str, Any]], Encoded] = encode,
        budget: int = REPLAY_BUDGET,
        per_replay: int = REPLAY_MAX,
    ) -> None:
        if not 0 < per_replay <= budget:
            raise ValueError(f"per_replay must be from 1 to the budget ({budget}), got {per_replay}")
        self._build = build
        self.budget = budget
        self.per_replay = per_replay
        self._kept: OrderedDict[str, Encoded] = OrderedDict()
        self._bytes = 0
        self._flights: dict[str, asyncio.Future[Encoded]] = {}  # builds under way

    @property
    def kept_bytes(self) -> int:
        return self._bytes

    def __contains__(self, game_id: str) -> bool:
        return game_id in self._kept

    async def get(self, game_id: str, record: dict[str, Any]) -> Encoded:
        """The replay of the finished game ``record`` (whose id is ``game_id``)."""
        kept = self._kept.get(game_id)
        if kept is not None:
            self._kept.move_to_end(game_id)
            return kept
        flight = self._flights.get(game_id)
        if flight is None:
            # The build is its own task: a requester who goes away does not cancel it for the others.
            flight = asyncio.ensure_future(self._run(game_id, record))
            self._flights[game_id] = flight
        return await asyncio.shield(flight)

    async def _run(self, game_id: str, record: dict[str, Any]) -> Encoded:
        try:
            encoded = await asyncio.to_thread(self._build, record)
        finally:
            del self._flights[game_id]
        self._keep(game_id, encoded)
        return encoded

    def _keep(self, game_id: str, encoded: Encoded) -> None:
        if encoded.size > self.per_replay:
            return  # sent, not kept: one huge replay must not empty the cache of every other
        self._kept[game_id] = encoded
        self._bytes += encoded.size
        while self._bytes > self.budget:
            _, old = self._kept.popitem(last=False)
            self._bytes -= old.size
