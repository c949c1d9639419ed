"""How the server says no: a JSON error over HTTP, or a WebSocket refused at its handshake.

Both carry ``{"error": message, "code": code}`` (docs/protocol.md); a refused handshake answers with
an HTTP status where the server supports it, and the log line uvicorn writes for every such refusal
is dropped (it is not a failure).
"""

from __future__ import annotations

import contextvars
import json
import logging

from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

# Seconds a client is asked to wait (Retry-After) when the rooms' store is unavailable.
RETRY_AFTER = 2


def error(status: int, code: str, message: str, retry_after: int | None = None) -> JSONResponse:
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    return JSONResponse({"error": message, "code": code}, status_code=status, headers=headers)


# Set (in the connection's own task) once this app has refused a handshake on purpose.
_handshake_denied: contextvars.ContextVar[bool] = contextvars.ContextVar("handshake_denied", default=False)


class DeniedHandshakeFilter(logging.Filter):
    """uvicorn's default WebSocket implementation (websockets-sansio) sends an ASGI denial response
    (the ``websocket.http.response`` extension, what Starlette's ``send_denial_response`` uses) but
    never marks the handshake done, so it logs an ERROR for every deliberate 403/404. The log call
    runs in the connection's task, where ``deny_websocket`` set the flag: only that record is
    dropped; a real handshake failure is still logged."""

    MESSAGE = "ASGI callable returned without completing handshake."

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.msg == self.MESSAGE and _handshake_denied.get())


def install_denied_handshake_filter() -> None:
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, DeniedHandshakeFilter) for f in logger.filters):
        logger.addFilter(DeniedHandshakeFilter())


async def deny_websocket(
    scope: Scope,
    receive: Receive,
    send: Send,
    status: int,
    code: str,
    message: str,
    retry_after: int | None = None,
) -> None:
    """Refuse a WebSocket at the handshake with an HTTP status (404 no room, 403 bad token/origin,
    429 a limit, 503 the rooms' backend unavailable)."""
    await receive()  # the websocket.connect message
    if "websocket.http.response" in scope.get("extensions", {}):
        _handshake_denied.set(True)
        body = json.dumps({"error": message, "code": code}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        if retry_after is not None:
            headers.append((b"retry-after", str(retry_after).encode()))
        await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1008, "reason": message[:120]})
