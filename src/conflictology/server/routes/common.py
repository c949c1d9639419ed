"""What the routes read from a request, the same way everywhere: a body of a known shape (bounded
however it arrives), the bearer token, a room's code, a game's id; and how their refusals answer."""

from __future__ import annotations

from typing import TypeVar

import msgspec
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from conflictology.server import protocol
from conflictology.server.backend import BackendUnavailable
from conflictology.server.refusals import RETRY_AFTER, error
from conflictology.server.rooms import RoomError, normalize_code, plausible_code

B = TypeVar("B")


async def read_body(request: Request, kind: type[B], max_bytes: int) -> B:
    # Read the stream ourselves so a body without Content-Length cannot grow without bound.
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > max_bytes:
                raise RoomError(413, "too_large", f"bodies are limited to {max_bytes} bytes")
            chunks.append(chunk)
    except ClientDisconnect:
        # The client hung up half-way (a closed tab, a cancelled request): nothing to do, and
        # nothing to log as a server error.
        raise RoomError(400, "client_gone", "the connection closed before the request was read") from None
    data = b"".join(chunks)
    try:
        decoded: B = protocol.decode_body(data, kind)
        return decoded
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise RoomError(400, "bad_request", f"malformed body: {exc}") from None


def bearer_token(request: Request) -> str | None:
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip() or None
    return None


def room_code(request: Request) -> str:
    code = normalize_code(str(request.path_params["code"]))
    if not plausible_code(code):
        # Not a code the server ever makes: a miss without asking the rooms' store.
        raise RoomError(404, "no_room", f"no room {code[:16]}")
    return code


def game_id(request: Request) -> str:
    found = str(request.path_params["game_id"])
    if not (0 < len(found) <= 64 and found.isalnum()):
        raise RoomError(404, "no_game", "no such game")
    return found


async def room_error(request: Request, exc: Exception) -> Response:
    """A refusal raised by a route (or the rooms' store gone) as its JSON error."""
    assert isinstance(exc, RoomError | BackendUnavailable)
    return error(exc.status, exc.code, exc.message, RETRY_AFTER if exc.status == 503 else None)
