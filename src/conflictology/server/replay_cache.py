"""Finished games' answers, built once, off the event loop, and kept as the bytes sent.

A replay replays every move with every card face up: up to a second of work for a long game; even
the finished game's own answer (``GET /api/games/{id}``: the record, its final views) is tens of
milliseconds of encoding for one. So each is built elsewhere (``replay_builds.py``: in a child process,
or a thread on a tiny host), encoded there once (the JSON the route sends, and for a replay its text
record), and kept in a least-recently-used cache bounded in bytes: ``per_replay`` at most for one
answer (a larger one is sent but not kept) and ``budget`` in all. Identical builds are merged: while
one game's answer is being built, every other request for it waits for that build (single flight)
instead of starting its own; and at most ``max_builds`` different ones wait or build at once (each
holds its game's record meanwhile), the next one is refused (503) until one ends.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from conflictology import games, recap, replay
from conflictology.server.lifecycle import RoomError

REPLAY_BUDGET = 64 * 1024 * 1024  # every answer kept, in all
REPLAY_MAX = 16 * 1024 * 1024  # one answer kept (a 2,000-decision Capitol game's replay is ~2 MB)
MAX_BUILDS = 16  # different answers waiting for a build or being built, at once

# What is built of a finished game: its step-by-step replay (``/replay``, and ``/record.txt``), the
# game as archived (``GET /api/games/{id}``, the JSON export), or its recap (``/recap``: the end
# screen's cards).
Kind = Literal["replay", "game", "recap"]

# What a finished game's answer copies from its archived record.
_RECORD_FIELDS = (
    "id",
    "room",
    "game",
    "options",
    "players",
    "started",
    "finished",
    "winners",
    "log",
    "actions",
)


@dataclass(frozen=True, slots=True)
class Encoded:
    """One finished game's answer as sent: the JSON, and for a replay the text of ``/record.txt``
    (with the name the download gets)."""

    json: bytes
    text: bytes = b""
    filename: str = ""

    @property
    def size(self) -> int:
        return len(self.json) + len(self.text)


def _json(content: Any) -> bytes:
    # The bytes Starlette's JSONResponse sends for the same content.
    return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


def encode(record: dict[str, Any]) -> Encoded:
    """Build and encode one replay (``replay.build``, ``replay.text_record``)."""
    built = replay.build(record)
    text = replay.text_record(built).encode("utf-8")
    return Encoded(_json(built), text, f"conflictology-{built['game']}-{built['id'][:12]}.txt")


def encode_game(record: dict[str, Any]) -> Encoded:
    """The finished game as ``GET /api/games/{id}`` sends it: everything (docs/protocol.md), its
    players' keys excepted."""
    final = games.get(record["game"]).from_json(record["final"])
    return Encoded(
        _json(
            {
                **{k: record[k] for k in _RECORD_FIELDS},
                "status": "over",
                "initial": record["initial"],
                "final": record["final"],
                "final_views": [final.view(i) for i in range(len(record["players"]))],
            }
        )
    )


def build(kind: Kind, record: dict[str, Any]) -> Encoded:
    """What ``kind`` answers for the finished game ``record`` (run in a child process or a thread)."""
    if kind == "replay":
        return encode(record)
    if kind == "game":
        return encode_game(record)
    if kind == "recap":
        return Encoded(_json(recap.build(record)))
    raise ValueError(f"no such answer: {kind!r}")


class Builds(Protocol):
    """Where builds run (``replay_builds.py``)."""

    async def build(self, kind: Kind, record: dict[str, Any]) -> Encoded: ...

    async def stop(self) -> None: ...


# A finished game's archived record, read when a build needs it (not before: a kept answer needs none).
Loader = Callable[[], Awaitable[dict[str, Any]]]


class ReplayCache:
    """Answers by game: built once per game however many ask at once, kept within a byte budget."""

    def __init__(
        self,
        builds: Builds,
        budget: int = REPLAY_BUDGET,
        per_replay: int = REPLAY_MAX,
        max_builds: int = MAX_BUILDS,
    ) -> None:
        if not 0 < per_replay <= budget:
            raise ValueError(f"per_replay must be from 1 to the budget ({budget}), got {per_replay}")
        if max_builds < 1:
            raise ValueError(f"max_builds must be at least 1, got {max_builds}")
        self.builds = builds
        self.budget = budget
        self.per_replay = per_replay
        self.max_builds = max_builds
        self._kept: OrderedDict[tuple[Kind, str], Encoded] = OrderedDict()
        self._bytes = 0
        self._flights: dict[tuple[Kind, str], asyncio.Future[Encoded]] = {}  # builds under way

    @property
    def kept_bytes(self) -> int:
        return self._bytes

    def kept(self, game_id: str, kind: Kind = "replay") -> bool:
        return (kind, game_id) in self._kept

    async def get(self, game_id: str, load: Loader, kind: Kind = "replay") -> Encoded:
        """The ``kind`` answer of the finished game ``game_id`` (whose record ``load`` reads)."""
        key = (kind, game_id)
        kept = self._kept.get(key)
        if kept is not None:
            self._kept.move_to_end(key)
            return kept
        flight = self._flights.get(key)
        if flight is None:
            if len(self._flights) >= self.max_builds:
                raise RoomError(503, "replay_busy", "too many replays are being built: try again shortly")
            # The build is its own task: a requester who goes away does not cancel it for the others.
            flight = asyncio.ensure_future(self._run(key, load))
            flight.add_done_callback(_retrieved)
            self._flights[key] = flight
        return await asyncio.shield(flight)

    async def _run(self, key: tuple[Kind, str], load: Loader) -> Encoded:
        try:
            encoded = await self.builds.build(key[0], await load())
        finally:
            del self._flights[key]
        self._keep(key, encoded)
        return encoded

    def _keep(self, key: tuple[Kind, str], encoded: Encoded) -> None:
        if encoded.size > self.per_replay:
            return  # sent, not kept: one huge answer must not empty the cache of every other
        self._kept[key] = encoded
        self._bytes += encoded.size
        while self._bytes > self.budget:
            _, old = self._kept.popitem(last=False)
            self._bytes -= old.size

    async def stop(self) -> None:
        """Stop the builds (the server stops): what is under way is answered 503."""
        await self.builds.stop()


def _retrieved(flight: asyncio.Future[Encoded]) -> None:
    # A build whose every requester went away (or the server stopped) failed for no one: not an
    # "exception never retrieved" in the log.
    if not flight.cancelled():
        flight.exception()
