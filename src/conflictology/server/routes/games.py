"""Games over HTTP: the latest public ones, one game (live public view, or everything once over),
and a finished game's step-by-step replay and text record.

A finished game's archive is read once and kept (the latest few, decoded); a private room's finished
game is for its players only.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from conflictology import games
from conflictology.server.hub import Hub
from conflictology.server.replay_cache import Encoded, ReplayCache
from conflictology.server.rooms import RoomError, RoomStatus
from conflictology.server.routes.common import bearer_token, game_id
from conflictology.server.security import hash_token, same_hash

RECENT_SECONDS = 5
REPLAYS_CACHED = 64

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


class GameRoutes:
    """``/api/games`` and ``/api/games/{game_id}`` (``/replay``, ``/record.txt``)."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        # The recent public games, read again at most every few seconds (reading them decodes
        # archived records).
        self._recent: tuple[tuple[int, int], list[dict[str, Any]]] | None = None
        # Finished games' replays as sent (building one reads the archive and computes every view).
        self._replays: OrderedDict[str, bytes] = OrderedDict()
        # Their archived records (who may read them), likewise.
        self._records: OrderedDict[str, dict[str, Any]] = OrderedDict()
        # Their step-by-step replays and text records: built off the event loop, once however many ask
        # at once, kept as bytes within a byte budget (replay_cache.py).
        self.replays = ReplayCache()

    async def _archived(self, game_id: str) -> dict[str, Any] | None:
        """A finished game's archived record (the latest ones kept decoded: a replay viewer asks
        for the record, the replay and the text of the same game)."""
        record = self._records.get(game_id)
        if record is not None:
            self._records.move_to_end(game_id)
            return record
        await self.hub.persist()
        record = await asyncio.to_thread(self.hub.store.get_game, game_id)
        if record is not None:
            self._records[game_id] = record
            if len(self._records) > REPLAYS_CACHED:
                self._records.popitem(last=False)
        return record

    def _may_replay(self, request: Request, record: dict[str, Any]) -> None:
        """A private room's finished game is for its players only: the token of one of its seats
        (``Authorization: Bearer``). Public rooms' games are anyone's; a game archived before the
        players' keys were kept stays reachable by its id alone, as it was."""
        keys = record.get("keys")
        if record.get("public", False) or not keys:
            return
        token = bearer_token(request)
        if not token:
            message = "a private room's game is replayed for its players only (Authorization: Bearer …)"
            raise RoomError(401, "no_token", message)
        mine = hash_token(token)
        if not any(same_hash(mine, k) for k in keys):
            raise RoomError(403, "private_game", "a private room's game is replayed for its players only")

    async def get_game(self, request: Request) -> Response:
        """A replay: public events while the game goes on; everything once it is over."""
        wanted = game_id(request)
        record = await self._archived(wanted)
        if record is not None:
            self._may_replay(request, record)
            cached = self._replays.get(wanted)
            if cached is not None:  # a finished game's replay never changes
                self._replays.move_to_end(wanted)
                return Response(cached, media_type="application/json")
            game = games.get(record["game"])
            final = game.from_json(record["final"])
            response = JSONResponse(
                {
                    **{k: record[k] for k in _RECORD_FIELDS},
                    "status": "over",
                    "initial": record["initial"],
                    "final": record["final"],
                    "final_views": [final.view(i) for i in range(len(record["players"]))],
                }
            )
            self._replays[wanted] = bytes(response.body)
            if len(self._replays) > REPLAYS_CACHED:
                self._replays.popitem(last=False)
            return response
        found = await self.hub.backend.find_game(wanted)
        room = await self.hub.room(found.code) if found is not None else None
        if room is not None and room.game_id == wanted and room.state is not None:
            if not room.settings.spectators and room.status is RoomStatus.PLAYING:
                # The live public view is what a spectator sees: refused like the spectator socket.
                raise RoomError(403, "no_spectators", "this room has no spectators")
            view = room.state.view(None)
            return JSONResponse(
                {
                    "id": wanted,
                    "room": room.code,
                    "game": room.game_name,
                    "status": room.status.value,
                    "players": [{"seat": i, "name": s.name, "bot": s.bot} for i, s in enumerate(room.seats)],
                    "log": view.get("log", []),
                    "view": view,
                }
            )
        raise RoomError(404, "no_game", f"no game {wanted}")

    async def _finished_replay(self, request: Request) -> Encoded:
        """The step-by-step replay of a finished game the asker may read (``replay.build``), encoded."""
        wanted = game_id(request)
        record = await self._archived(wanted)
        if record is None:
            found = await self.hub.backend.find_game(wanted)
            if found is not None and found.game_id == wanted:
                # A game still being played (or not archived yet) shows nothing face up.
                raise RoomError(409, "not_over", "a game is replayed once it is over")
            raise RoomError(404, "no_game", f"no game {wanted}")
        self._may_replay(request, record)
        return await self.replays.get(wanted, record)

    async def get_replay(self, request: Request) -> Response:
        """A finished game step by step, every card face up (the replay viewer's data)."""
        return Response((await self._finished_replay(request)).json, media_type="application/json")

    async def get_record(self, request: Request) -> Response:
        """A finished game as a plain text record, to download."""
        encoded = await self._finished_replay(request)
        return Response(
            encoded.text,
            media_type="text/plain; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{encoded.filename}"'},
        )

    async def list_games(self, request: Request) -> Response:
        """The latest public games, read again when this process archived one or after a few seconds
        (reading them decodes archived records: not once per request)."""
        await self.hub.persist()
        key = (self.hub.games_archived, int(time.monotonic() // RECENT_SECONDS))
        if self._recent is None or self._recent[0] != key:
            self._recent = (key, await asyncio.to_thread(self.hub.store.recent_games))
        return JSONResponse({"games": self._recent[1]})
