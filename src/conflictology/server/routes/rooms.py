"""A room over HTTP: made, listed, read, joined, seated with bots, started, and the host's and the
players' controls (kick, settings, rematch, claim, leave, rejoin, pause, resume).

Every change goes through ``hub.change``: a function of the room, applied atomically, whose
:class:`RoomError` changes nothing and becomes the route's JSON error.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from conflictology.server import protocol
from conflictology.server.botshares import owner_label
from conflictology.server.config import ServerConfig
from conflictology.server.hub import Hub
from conflictology.server.rooms import Room, RoomError
from conflictology.server.routes.common import bearer_token, read_body, room_code
from conflictology.server.security import clean_name, client_key

# The room listing: built at most this often, from at most this many rooms (newest first).
LISTING_SECONDS = 1.0
LISTING_MAX = 500


class RoomRoutes:
    """``/api/rooms`` and ``/api/rooms/{code}/…`` (the standing table apart: ``routes.standings``)."""

    def __init__(self, config: ServerConfig, hub: Hub) -> None:
        self.config = config
        self.hub = hub
        # The room listing, built at most once a second however many ask (page by page from it).
        self._listing: tuple[float, list[dict[str, Any]]] | None = None
        self._listing_task: asyncio.Task[list[dict[str, Any]]] | None = None

    def _info(self, room: Room) -> dict[str, Any]:
        return room.info(self.hub.connected_seats(room))

    async def create_room(self, request: Request) -> Response:
        body = await read_body(request, protocol.CreateRoom, self.config.max_body_bytes)
        if self.hub.room_count() >= self.config.max_rooms:
            raise RoomError(503, "server_full", "this server holds as many rooms as it can; try again later")
        # Its bots take their share of the workers as this address's (server/botshares.py).
        client = request.client.host if request.client is not None else None
        room, token = await self.hub.create_room(body, owner_label(client_key(client)))
        return JSONResponse(
            {"code": room.code, "seat": 0, "token": token, "join_url": f"/?room={room.code}"},
            status_code=201,
        )

    async def list_rooms(self, request: Request) -> Response:
        """Public rooms in the lobby or playing, newest first, a page at a time (``?offset=&limit=``,
        at most 100 a page, the newest LISTING_MAX in all)."""
        try:
            offset = max(0, int(request.query_params.get("offset", "0")))
            limit = min(100, max(1, int(request.query_params.get("limit", "50"))))
        except ValueError:
            raise RoomError(400, "bad_request", "offset and limit are whole numbers") from None
        listing = await self._cached_listing()
        page = listing[offset : offset + limit]
        following = offset + limit if offset + limit < len(listing) else None
        return JSONResponse({"rooms": page, "total": len(listing), "offset": offset, "next": following})

    async def _cached_listing(self) -> list[dict[str, Any]]:
        now = time.monotonic()
        if self._listing is not None and now - self._listing[0] < LISTING_SECONDS:
            return self._listing[1]
        if self._listing_task is None or self._listing_task.done():
            self._listing_task = asyncio.ensure_future(self._build_listing())
        return await asyncio.shield(self._listing_task)

    async def _build_listing(self) -> list[dict[str, Any]]:
        rooms = await self.hub.backend.listed(LISTING_MAX)
        listing = [self._info(room) for room in rooms]
        self._listing = (time.monotonic(), listing)
        return listing

    async def get_room(self, request: Request) -> Response:
        room = await self.hub.room(room_code(request))
        return JSONResponse(self._info(room))

    async def join(self, request: Request) -> Response:
        body = await read_body(request, protocol.JoinRoom, self.config.max_body_bytes)
        room, (seat, token) = await self.hub.change(room_code(request), lambda r: r.join(body.name))
        # The name seated: told apart (``Ana 2``) when someone at the table, or of its standings,
        # has the one asked for; ``renamed`` says so (the client tells the player).
        name = room.seats[seat].name
        answer = {"seat": seat, "token": token, "name": name, "renamed": name != clean_name(body.name)}
        return JSONResponse(answer, status_code=201)

    async def add_bots(self, request: Request) -> Response:
        body = await read_body(request, protocol.AddBots, self.config.max_body_bytes)
        token = bearer_token(request)

        def add(r: Room) -> list[int]:
            r.require_host(token)
            return r.add_bots(body.count, body.level)

        _, seats = await self.hub.change(room_code(request), add)
        return JSONResponse({"seats": seats}, status_code=201)

    async def start(self, request: Request) -> Response:
        await read_body(request, protocol.Empty, self.config.max_body_bytes)
        token = bearer_token(request)

        def start(r: Room) -> None:
            r.require_host(token)
            r.start(time.time())

        room, _ = await self.hub.change(room_code(request), start)
        return JSONResponse({"status": room.status.value, "game_id": room.game_id, "seq": room.seq})

    async def kick(self, request: Request) -> Response:
        body = await read_body(request, protocol.Kick, self.config.max_body_bytes)
        token = bearer_token(request)

        def kick(r: Room) -> None:
            r.require_host(token)
            r.kick(r.kicked_seat(body.seat_id, body.seat))

        room, _ = await self.hub.change(room_code(request), kick)
        return JSONResponse(self._info(room))

    async def patch(self, request: Request) -> Response:
        body = await read_body(request, protocol.PatchRoom, self.config.max_body_bytes)
        token = bearer_token(request)

        def patch(r: Room) -> None:
            r.require_host(token)
            settings = body.settings.apply_to(r.settings) if body.settings is not None else None
            r.patch(body.options, settings, body.game, body.option_changes)

        room, _ = await self.hub.change(room_code(request), patch)
        return JSONResponse(self._info(room))

    async def rematch(self, request: Request) -> Response:
        await read_body(request, protocol.Empty, self.config.max_body_bytes)
        token = bearer_token(request)

        def rematch(r: Room) -> None:
            r.require_host(token)
            r.rematch()

        room, _ = await self.hub.change(room_code(request), rematch)
        return JSONResponse(self._info(room))

    async def claim(self, request: Request) -> Response:
        body = await read_body(request, protocol.Claim, self.config.max_body_bytes)
        _, (seat, token, name) = await self.hub.change(room_code(request), lambda r: r.claim(body.token))
        return JSONResponse({"seat": seat, "token": token, "name": name}, status_code=201)

    async def leave(self, request: Request) -> Response:
        await read_body(request, protocol.Empty, self.config.max_body_bytes)
        token = bearer_token(request)

        def leave(r: Room) -> None:
            r.leave(r.require_seat(token))

        _room, _ = await self.hub.change(room_code(request), leave)
        return JSONResponse({"left": True})

    async def rejoin(self, request: Request) -> Response:
        await read_body(request, protocol.Empty, self.config.max_body_bytes)
        token = bearer_token(request)
        # Durable before anyone hears of it: hub.change returns once the room is committed and shown.
        room, seat = await self.hub.change(room_code(request), lambda r: r.rejoin(token))
        return JSONResponse({"seat": seat, "room": self._info(room)})

    async def pause(self, request: Request) -> Response:
        """The host stops every clock (and the bots) until they resume."""
        await read_body(request, protocol.Empty, self.config.max_body_bytes)
        token = bearer_token(request)

        def pause(r: Room) -> None:
            r.host_pause(r.require_host(token), time.time())

        room, _ = await self.hub.change(room_code(request), pause)
        return JSONResponse({"pause": room.pause_info(), "deadline": room.deadline, "seq": room.seq})

    async def resume(self, request: Request) -> Response:
        """The host starts the clocks again (ending their pause, or a player's hold early); while the
        host is away, any seated player may end the host's pause."""
        await read_body(request, protocol.Empty, self.config.max_body_bytes)
        token = bearer_token(request)

        def resume(r: Room) -> None:
            seat = r.require_seat(token)
            host = r.host_index()
            r.require_resumer(seat, host is not None and host in self.hub.connected_seats(r))
            r.resume(time.time())

        room, _ = await self.hub.change(room_code(request), resume)
        return JSONResponse({"pause": None, "deadline": room.deadline, "seq": room.seq})
