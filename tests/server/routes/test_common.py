"""What every route reads from a request (routes.common), on requests built by hand."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from starlette.requests import Request

from conflictology.server import protocol
from conflictology.server.backend import BackendUnavailable
from conflictology.server.rooms import RoomError
from conflictology.server.routes.common import bearer_token, game_id, read_body, room_code, room_error


def request(
    body: list[bytes] | None = None,
    headers: dict[str, str] | None = None,
    path_params: dict[str, str] | None = None,
) -> Request:
    chunks = list(body or [b""])

    async def receive() -> dict[str, Any]:
        chunk = chunks.pop(0)
        return {"type": "http.request", "body": chunk, "more_body": bool(chunks)}

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/",
        "query_string": b"",
        "headers": [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()],
        "path_params": path_params or {},
    }
    return Request(scope, receive)


def refused(run: Any) -> RoomError:
    with pytest.raises(RoomError) as caught:
        run()
    return caught.value


def test_a_body_is_decoded_to_its_schema_an_empty_one_as_an_empty_object() -> None:
    joined = asyncio.run(read_body(request([b'{"name":', b' "Ann"}']), protocol.JoinRoom, 1024))
    assert joined.name == "Ann"
    assert isinstance(asyncio.run(read_body(request(), protocol.Empty, 1024)), protocol.Empty)


def test_a_body_over_the_limit_is_too_large_however_it_arrives() -> None:
    chunks = [b"x" * 600, b"x" * 600]
    err = refused(lambda: asyncio.run(read_body(request(chunks), protocol.JoinRoom, 1000)))
    assert (err.status, err.code, err.message) == (413, "too_large", "bodies are limited to 1000 bytes")


def test_a_malformed_body_is_a_bad_request_saying_why() -> None:
    err = refused(lambda: asyncio.run(read_body(request([b'{"name": 3}']), protocol.JoinRoom, 1024)))
    assert (err.status, err.code) == (400, "bad_request") and err.message.startswith("malformed body: ")


def test_the_bearer_token_is_read_from_authorization_only() -> None:
    assert bearer_token(request(headers={"Authorization": "Bearer abc "})) == "abc"
    assert bearer_token(request(headers={"Authorization": "bearer abc"})) == "abc"
    assert bearer_token(request(headers={"Authorization": "Bearer  "})) is None
    assert bearer_token(request(headers={"Authorization": "Basic abc"})) is None
    assert bearer_token(request()) is None


def test_a_room_code_is_normalised_and_one_no_server_makes_is_a_miss() -> None:
    code = room_code(request(path_params={"code": "abc234"}))
    assert code == "ABC234"
    err = refused(lambda: room_code(request(path_params={"code": "no-such-code!" * 3})))
    assert (err.status, err.code, err.message) == (404, "no_room", "no room NO-SUCH-CODE!NO-")


def test_a_game_id_is_short_and_alphanumeric() -> None:
    assert game_id(request(path_params={"game_id": "ef99ab"})) == "ef99ab"
    for bad in ["", "x" * 65, "ab-cd", "../x"]:
        err = refused(lambda bad=bad: game_id(request(path_params={"game_id": bad})))
        assert (err.status, err.code) == (404, "no_game")


def test_a_refusal_answers_its_status_and_an_outage_asks_to_retry() -> None:
    response = asyncio.run(room_error(request(), RoomError(409, "full", "the table is full")))
    assert response.status_code == 409 and "retry-after" not in response.headers
    assert json.loads(bytes(response.body)) == {"error": "the table is full", "code": "full"}
    response = asyncio.run(room_error(request(), BackendUnavailable()))
    assert response.status_code == 503 and response.headers["retry-after"] == "2"
    assert json.loads(bytes(response.body))["code"] == "unavailable"
