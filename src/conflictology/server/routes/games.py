"""Games over HTTP: the latest public ones, one game (live public view, or everything once over),
and a finished game's step-by-step replay and text record.

A finished game's answers are built off the event loop, once, and kept as bytes (replay_cache.py,
replay_builds.py); who may read each game is kept (a few hashes a game), not its whole record, which
is read again only when an answer must be built. A private room's finished game is for its players
only.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from conflictology.server.config import ServerConfig
from conflictology.server.hub import Hub
from conflictology.server.replay_builds import builds_for
from conflictology.server.replay_cache import Encoded, Kind, Loader, ReplayCache
from conflictology.server.rooms import RoomError, RoomStatus
from conflictology.server.routes.common import bearer_token, game_id
from conflictology.server.security import hash_token, same_hash

RECENT_SECONDS = 5
# Finished games whose readers are known (a few hundred bytes each): the replay viewer asks for the
# replay, the record and the text of the same game, and asking again costs only a database read.
ACCESS_KEPT = 4096


@dataclass(frozen=True, slots=True)
class Access:
    """Who may read a finished game: anyone (a public room's), or the holders of these token hashes."""

    public: bool
    keys: tuple[str, ...]

    @classmethod
    def of(cls, record: dict[str, Any]) -> Access:
        return cls(bool(record.get("public", False)), tuple(record.get("keys") or ()))


class GameRoutes:
    """``/api/games`` and ``/api/games/{game_id}`` (``/replay``, ``/record.txt``)."""

    def __init__(self, config: ServerConfig, hub: Hub) -> None:
        self.hub = hub
        # The recent public games, read again at most every few seconds (reading them decodes
        # archived records).
        self._recent: tuple[tuple[int, int], list[dict[str, Any]]] | None = None
        # Who may read each of the latest finished games asked for (not their records: a long game's
        # decoded record is ~1 MB, and a kept answer needs none).
        self._access: OrderedDict[str, Access] = OrderedDict()
        # Finished games' answers (the game, its replay and text record): built off the event loop,
        # once however many ask at once, kept as bytes within a byte budget.
        builds = builds_for(config.replay_workers, config.replay_time_cap, config.bot_worker_setup)
        self.replays = ReplayCache(builds)

    async def stop(self) -> None:
        """The server stops: so do the builds under way."""
        await self.replays.stop()

    async def _record(self, game_id: str) -> dict[str, Any] | None:
        """A finished game's archived record (read and decoded in a thread)."""
        await self.hub.persist()
        record: dict[str, Any] | None = await asyncio.to_thread(self.hub.store.get_game, game_id)
        return record

    async def _archived(self, game_id: str) -> tuple[Access, Loader] | None:
        """Who may read the finished game ``game_id``, and how its record is read (None: no such
        finished game). A record just read for its readers is handed to the build as it is."""
        access = self._access.get(game_id)
        if access is not None:
            self._access.move_to_end(game_id)

            async def again() -> dict[str, Any]:
                record = await self._record(game_id)
                if record is None:  # the archive never forgets a game: a database swapped under us
                    raise RoomError(404, "no_game", f"no game {game_id}")
                return record

            return access, again
        record = await self._record(game_id)
        if record is None:
            return None
        access = Access.of(record)
        self._access[game_id] = access
        if len(self._access) > ACCESS_KEPT:
            self._access.popitem(last=False)

        async def read() -> dict[str, Any]:
            return record

        return access, read

    def _may_replay(self, request: Request, access: Access) -> None:
        """A private room's finished game is for its players only: the token of one of its seats
        (``Authorization: Bearer``). Public rooms' games are anyone's; a game archived before the
        players' keys were kept stays reachable by its id alone, as it was."""
        if access.public or not access.keys:
            return
        token = bearer_token(request)
        if not token:
            message = "a private room's game is replayed for its players only (Authorization: Bearer …)"
            raise RoomError(401, "no_token", message)
        mine = hash_token(token)
        if not any(same_hash(mine, k) for k in access.keys):
            raise RoomError(403, "private_game", "a private room's game is replayed for its players only")

    async def _finished(self, request: Request, wanted: str, kind: Kind) -> Encoded | None:
        """The ``kind`` answer of the finished game ``wanted`` if the asker may read it (None: no
        such finished game)."""
        archived = await self._archived(wanted)
        if archived is None:
            return None
        access, load = archived
        self._may_replay(request, access)
        return await self.replays.get(wanted, load, kind)

    async def get_game(self, request: Request) -> Response:
        """A replay: public events while the game goes on; everything once it is over."""
        wanted = game_id(request)
        finished = await self._finished(request, wanted, "game")
        if finished is not None:  # a finished game's answer never changes
            return Response(finished.json, media_type="application/json")
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

    async def _finished_replay(self, request: Request, kind: Kind = "replay") -> Encoded:
        """The step-by-step replay of a finished game the asker may read (``replay.build``), or its
        recap (``recap.build``), encoded."""
        wanted = game_id(request)
        finished = await self._finished(request, wanted, kind)
        if finished is None:
            found = await self.hub.backend.find_game(wanted)
            if found is not None and found.game_id == wanted:
                # A game still being played (or not archived yet) shows nothing face up.
                raise RoomError(409, "not_over", "a game is replayed once it is over")
            raise RoomError(404, "no_game", f"no game {wanted}")
        return finished

    async def get_replay(self, request: Request) -> Response:
        """A finished game step by step, every card face up (the replay viewer's data)."""
        return Response((await self._finished_replay(request)).json, media_type="application/json")

    async def get_recap(self, request: Request) -> Response:
        """A finished game's story for its end screen's cards (docs/protocol.md, "Recap")."""
        encoded = await self._finished_replay(request, "recap")
        return Response(encoded.json, media_type="application/json")

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
