"""The lean bound (issue 28): what a move must cost in this stack, with nothing but what it needs.

``python -m benchmarks.server_floor --lean`` runs it beside the server and the floor.
The floor is a room broadcast and nothing else; ``serve`` is the whole server. Between them this
app does only what no server of ours can skip, each part the cheapest way this stack offers:

- the real game: 4-player Capitol, its compiled rules (``scripts/build_native.py``), each ``act``
  checked against the seat's legal actions and applied;
- durability before anyone sees a move: each move's action appended to SQLite and the room's row
  upserted with its game state as of its last 32 actions at most (a restore applies the actions
  after it, as ``serve``'s snapshots do: ``STATE_EVERY``), WAL with ``synchronous=NORMAL`` as
  ``serve``, one transaction a batch, batches at most every 2 ms, written on the event loop (as
  ``serve`` writes SQLite);
- each seat's own message: its view with the log entries its socket lacks (protocol v2), its legal
  actions, ``decision_since`` (an answer to a decision that goes on is taken, as ``serve`` does),
  encoded once with msgspec, sent straight to uvicorn.

Nothing else: no clocks, no limits, no metrics but the move counter, no room info beyond
``game_id``, no second tab, no reconnect, no spectators, no archive, no checks a hostile client
needs. It is not a server anyone should run: it is the measure of how near the floor a server of
this stack can come at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from typing import Any

import msgspec


class _Act(msgspec.Struct):
    type: str
    action: dict[str, Any] | None = None
    seq: int = -1


# What the lean app's messages weigh without padding (4-player Capitol, random play, log deltas;
# measured 2026-12-05): ``server_floor`` pads them to the server's size, as the floor's, so that the
# three sides send the same bytes.
NATURAL_BYTES = 956


def lean_app(db_path: str, pad_bytes: int = 0) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route, WebSocketRoute
    from starlette.websockets import WebSocket, WebSocketDisconnect

    from benchmarks.server_floor import table_routes
    from conflictology import native

    native.install()  # before the rules are imported: their compiled build
    from conflictology import games
    from conflictology.engine import IllegalAction
    from conflictology.server.snapshots import STATE_EVERY

    game = games.get("capitol")
    decode = msgspec.json.Decoder(_Act).decode
    encode = msgspec.json.Encoder().encode
    stale = '{"type":"error","code":"stale","message":"stale"}'
    illegal = '{"type":"error","code":"illegal","message":"illegal"}'
    # (a ``sync`` too: a client asks for one only when its log has a gap, which is the app's fault)
    unknown = '{"type":"error","code":"bad_message","message":"the lean app takes act only"}'

    db = sqlite3.connect(db_path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE rooms (code TEXT PRIMARY KEY, version INTEGER, state_at INTEGER, state TEXT)")
    db.execute("CREATE TABLE actions (code TEXT, seq INTEGER, seat INTEGER, action TEXT)")
    upsert = (
        "INSERT INTO rooms (code, version, state_at, state) VALUES (?, ?, ?, ?) ON CONFLICT(code) "
        "DO UPDATE SET version = excluded.version, state_at = excluded.state_at, state = excluded.state"
    )
    append = "INSERT INTO actions (code, seq, seat, action) VALUES (?, ?, ?, ?)"
    pad = "x" * pad_bytes

    class Socket:
        __slots__ = ("held", "send")

        def __init__(self, send: Any) -> None:
            self.send = send
            self.held = 0  # the log entries this socket has (0: its next view is whole)

    class LeanRoom:
        def __init__(self, code: str) -> None:
            self.code = code
            self.seats = 1
            self.seq = 0
            self.games = 0
            self.state: Any = None
            self.decision_since = 0
            self.acted: set[int] = set()  # seats that acted since decision_since
            self.sockets: dict[int, Socket] = {}
            self.records: list[tuple[str, int, int, str]] = []
            self.saved: tuple[int, str] = (0, "")  # the seq and JSON of the state saved last

        def row(self) -> tuple[str, int, int, str]:
            if self.seq - self.saved[0] >= STATE_EVERY or not self.saved[1] or self.state.is_over():
                self.saved = (self.seq, self.state.to_json())
            return (self.code, self.seq, *self.saved)

        def new_game(self) -> None:
            self.games += 1
            self.state = game.new_game(self.seats)
            self.seq += 1
            self.decision_since, self.acted = self.seq, set()
            self.saved = (self.seq, self.state.to_json())

        def act(self, seat: int, seq: int, action: dict[str, Any]) -> str | None:
            state = self.state
            if seq != self.seq and not (self.decision_since <= seq < self.seq and seat not in self.acted):
                return stale
            waiting = state.waiting_for()
            if seat not in waiting:
                return stale
            try:
                state.apply(seat, action)
            except IllegalAction:
                # (an older seq's answer whose choices changed is stale, as ``serve`` says)
                return illegal if seq == self.seq else stale
            self.seq += 1
            self.records.append((self.code, self.seq, seat, encode(action).decode()))
            after = state.waiting_for()
            if after and set(after) <= set(waiting) and seat not in after:
                self.acted.add(seat)  # the same decision goes on without this seat
            else:
                self.decision_since, self.acted = self.seq, set()
            return None

        def texts(self, only: Socket | None = None) -> list[tuple[Socket, str]]:
            """Each socket's message (``only``: that socket's alone; the others' logs stay where
            they are)."""
            state = self.state
            over = state.is_over()
            winners = state.winners() if over else None
            out = []
            for seat, sock in self.sockets.items():
                if only is not None and sock is not only:
                    continue
                if sock.held:
                    view, length = state.view_since(seat, sock.held)
                    log_from = sock.held if sock.held <= length else 0
                    if not log_from:
                        view = state.view(seat)
                else:
                    view, log_from = state.view(seat), 0
                legal = [] if over else state.legal_actions(seat)
                message = {
                    "type": "state", "seq": self.seq, "view": view, "legal": legal,
                    "room": {"game_id": f"{self.code}.{self.games}", "pad": pad},
                    "decision_since": self.decision_since, "log_from": log_from,
                }  # fmt: skip
                if winners is not None:
                    message["winners"] = winners
                sock.held = log_from + len(view["log"])
                out.append((sock, encode(message).decode()))
            return out

    rooms: dict[str, LeanRoom] = {}
    dirty: dict[str, LeanRoom] = {}
    moves = [0]
    wake = asyncio.Event()

    def changed(room: LeanRoom) -> None:
        dirty[room.code] = room
        wake.set()

    async def write_forever() -> None:
        loop = asyncio.get_running_loop()
        started = 0.0
        while True:
            await wake.wait()
            wake.clear()
            wait = started + 0.002 - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            started = loop.time()
            batch = list(dirty.values())
            dirty.clear()
            db.execute("BEGIN")
            db.executemany(upsert, [r.row() for r in batch])
            db.executemany(append, [rec for r in batch for rec in r.records])
            db.execute("COMMIT")
            for room in batch:
                room.records.clear()
                for sock, text in room.texts():
                    with contextlib.suppress(Exception):
                        await sock.send({"type": "websocket.send", "text": text})

    writer: list[asyncio.Task[None]] = []

    def ensure_writer() -> None:
        if not writer:
            writer.append(asyncio.get_running_loop().create_task(write_forever()))

    def new_room(code: str) -> LeanRoom:
        ensure_writer()
        return LeanRoom(code)

    async def start(request: Request) -> JSONResponse:
        room = rooms[request.path_params["code"]]
        if room.state is None or room.state.is_over():
            room.new_game()
            changed(room)
        return JSONResponse({})

    async def play(ws: WebSocket) -> None:
        room = rooms[ws.path_params["code"]]
        seat = int(ws.query_params["token"].rsplit(".", 1)[1])
        await ws.accept()
        sock = room.sockets[seat] = Socket(ws.scope.get("lean.send", ws.send))
        if room.state is not None:
            for _, text in room.texts(only=sock):
                await ws.send_text(text)
        try:
            while True:
                msg = decode(await ws.receive_text())
                if msg.type != "act" or msg.action is None:
                    await ws.send_text(unknown)
                    continue
                if room.state is None:
                    await ws.send_text(stale)
                    continue
                refused = room.act(seat, msg.seq, msg.action)
                if refused is not None:
                    await ws.send_text(refused)
                    continue
                moves[0] += 1
                changed(room)
        except (WebSocketDisconnect, RuntimeError):
            room.sockets.pop(seat, None)

    app = Starlette(
        routes=[
            *table_routes(rooms, new_room, moves),
            Route("/api/rooms/{code}/start", start, methods=["POST"]),
            Route("/api/rooms/{code}/rematch", start, methods=["POST"]),
            WebSocketRoute("/ws/{code}", play),
        ]
    )

    async def with_raw_send(scope: Any, receive: Any, send: Any) -> None:
        # A socket's messages go on uvicorn's own send, as ``serve``'s do (transport.py).
        if scope["type"] == "websocket":
            scope["lean.send"] = send
        await app(scope, receive, send)

    return with_raw_send


def serve_lean(port: int, db_path: str, ws: str, message_bytes: int) -> None:
    from benchmarks.server_floor import serve_app

    serve_app(lean_app(db_path, max(0, message_bytes - NATURAL_BYTES)), port, ws)
