"""A room's standing table over HTTP: read by anyone who may read the room, reset by its host."""

from __future__ import annotations

import time
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from conflictology.server import protocol, standings
from conflictology.server.config import ServerConfig
from conflictology.server.hub import Hub
from conflictology.server.rooms import Room
from conflictology.server.routes.common import bearer_token, read_body, room_code


def standing_table(room: Room) -> dict[str, Any]:
    # Counts and names only, added once a game is over: nothing of a game being played.
    out = {"code": room.code, "standing": room.settings.standing, **standings.public(room.standings)}
    if not room.settings.standing:
        # Any room lists its earlier games (before its rematches), for their replays.
        out["games"] = [{"id": g} for g in room.past_games[-standings.MAX_GAMES :]]
    return out


class StandingRoutes:
    """``/api/rooms/{code}/standings`` and ``…/standings/reset``."""

    def __init__(self, config: ServerConfig, hub: Hub) -> None:
        self.config = config
        self.hub = hub

    async def get_standings(self, request: Request) -> Response:
        room = await self.hub.room(room_code(request))
        return JSONResponse(standing_table(room))

    async def reset_standings(self, request: Request) -> Response:
        await read_body(request, protocol.Empty, self.config.max_body_bytes)
        token = bearer_token(request)

        def reset(r: Room) -> None:
            r.require_host(token)
            r.reset_standings(time.time())

        room, _ = await self.hub.change(room_code(request), reset)
        return JSONResponse(standing_table(room))
