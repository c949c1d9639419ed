"""How the server says no (refusals.py): a JSON error, and a WebSocket refused at its handshake —
with an HTTP status where the server supports it, else a policy close — whose log line is dropped."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from conflictology.server.refusals import DeniedHandshakeFilter, deny_websocket, error


def test_an_error_is_its_code_and_message_with_retry_after_when_asked() -> None:
    plain = error(404, "no_room", "no room ABC234")
    assert plain.status_code == 404 and "retry-after" not in plain.headers
    assert json.loads(bytes(plain.body)) == {"error": "no room ABC234", "code": "no_room"}
    assert error(429, "rate_limited", "slow down", 7).headers["retry-after"] == "7"


def deny(extensions: dict[str, Any], retry: int | None) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {"type": "websocket", "extensions": extensions}

    async def main() -> None:
        await deny_websocket(scope, receive, send, 429, "too_many_spectators", "full of spectators", retry)
        # The flag that drops uvicorn's line is set in this task (the connection's own).
        record = logging.LogRecord(
            "uvicorn.error", logging.ERROR, __file__, 1, DeniedHandshakeFilter.MESSAGE, None, None
        )
        sent.append({"filtered": not DeniedHandshakeFilter().filter(record)})

    asyncio.run(main())
    return sent


def test_a_handshake_is_refused_with_an_http_status_where_the_server_can() -> None:
    start, body, logged = deny({"websocket.http.response": {}}, 10)
    assert start["type"] == "websocket.http.response.start" and start["status"] == 429
    headers = dict(start["headers"])
    assert headers[b"content-type"] == b"application/json" and headers[b"retry-after"] == b"10"
    assert json.loads(body["body"]) == {"error": "full of spectators", "code": "too_many_spectators"}
    assert int(headers[b"content-length"]) == len(body["body"])
    assert logged == {"filtered": True}


def test_else_the_socket_is_closed_as_a_policy_violation_and_a_real_failure_still_logged() -> None:
    close, logged = deny({}, None)
    assert close == {"type": "websocket.close", "code": 1008, "reason": "full of spectators"}
    assert logged == {"filtered": False}
