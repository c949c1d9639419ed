"""The server's CPU per accepted move beside the transport floor (issue 28), in one sitting.

    .venv/bin/python -m benchmarks.server_floor --rounds 5 --rooms 100 --think 0 --duration 15 [--lean]

Each round runs both sides under the same load test (``conflictology loadtest``'s engine: the same
client processes, rooms made over HTTP, one WebSocket per seat, bots answering at once):

- **server**: ``conflictology serve`` (SQLite on a throwaway file, rooms in memory, no WebSocket
  compression, limits off), playing 4-player Capitol;
- **floor**: a bare Starlette/uvicorn app with the same protocol's outline and nothing else: a
  seat's ``act`` quoting the current ``seq`` moves the room on, and each of its four sockets is
  sent a ``state`` of the same size as the server's (one message in, four out, msgspec, the same
  uvicorn WebSocket implementation, no compression). No game, no storage, no clocks.

- **lean** (with ``--lean``; ``benchmarks/lean_app.py``): the bound between them, what a move cannot
  do without: the real game (compiled rules, each act checked and applied), a durable SQLite write
  before anyone sees it (the server's shape: actions appended, the state every 32 of them, one
  transaction a batch), and each seat's own view, log delta and legal actions, encoded once and
  padded to the server's size. Nothing else a server does (clocks, limits, seats, spectators,
  metrics, archive).

The sides alternate (server first in odd rounds, the order reversed in even ones), so a noisy minute
falls on each. For each run: moves per second and the process's CPU (user + system, from ``/proc``) over
the load test's window, per accepted move (moves: ``conflictology_action_seconds_count`` from
``/metrics``, read when the window opens and closes; the floor publishes the same counter), the
bytes per message the clients received, the clients' p99, and the machine's load average. The
table ends with the medians and the ratio to the floor of each round's CPU per move (the server's,
and the lean bound's).

The floor's messages are as large as the server's were in this sitting (the median of the server
runs so far; ``--kb`` fixes it instead): the floor costs what the same bytes cost to send.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from benchmarks.server_bench import cpu_seconds, free_port, wait_healthy
from conflictology.clients.loadtest import run_loadtest
from conflictology.server.metrics import text_string_to_metric_families

MOVES = "conflictology_action_seconds"
SIDES = ("server", "floor", "lean")


def moves_text(moves: int) -> str:
    """``/metrics`` of a side that is not ``serve``: the moves counter alone, as ``serve`` names it."""
    return (
        f'# TYPE {MOVES} histogram\n{MOVES}_bucket{{le="+Inf"}} {moves}\n'
        f"{MOVES}_count {moves}\n{MOVES}_sum 0\n"
    )


def table_routes(rooms: dict[str, Any], new_room: Callable[[str], Any], moves: list[int]) -> list[Any]:
    """What the floor and the lean bound answer alike: a room made and joined as ``loadworker``
    does (a token is ``CODE.SEAT``; a room has ``code`` and a count of ``seats``), the moves
    counter, and health."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse, PlainTextResponse
    from starlette.routing import Route

    async def create(_: Request) -> JSONResponse:
        code = f"R{len(rooms):05d}"
        rooms[code] = new_room(code)
        return JSONResponse({"code": code, "token": f"{code}.0"}, status_code=201)

    async def join(request: Request) -> JSONResponse:
        room = rooms[request.path_params["code"]]
        room.seats += 1
        return JSONResponse({"token": f"{room.code}.{room.seats - 1}"}, status_code=201)

    async def metrics(_: Request) -> PlainTextResponse:
        return PlainTextResponse(moves_text(moves[0]))

    async def healthz(_: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    return [
        Route("/api/rooms", create, methods=["POST"]),
        Route("/api/rooms/{code}/join", join, methods=["POST"]),
        Route("/metrics", metrics),
        Route("/healthz", healthz),
    ]


def serve_app(app: Any, port: int, ws: str) -> None:
    """uvicorn as ``serve`` runs it, without compression, on 127.0.0.1."""
    import uvicorn

    from conflictology.server.cli import tune_gc

    tune_gc()  # as `serve` does
    uvicorn.run(
        app, host="127.0.0.1", port=port, log_level="warning", http="httptools", ws=ws,
        ws_per_message_deflate=False,
    )  # fmt: skip


# ---- the floor: a room broadcast and nothing else ------------------------------------------------


def bare_app(message_bytes: int) -> Any:
    """The floor's app: rooms of seats taking turns, each move sent to every seat as a ``state`` of
    ``message_bytes``; only what ``loadworker`` uses of the protocol (make, join, start, play)."""
    import msgspec
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route, WebSocketRoute
    from starlette.websockets import WebSocket, WebSocketDisconnect

    class Act(msgspec.Struct):
        type: str
        action: Any = None
        seq: int = -1

    decode = msgspec.json.Decoder(Act).decode
    encode = msgspec.json.Encoder().encode
    legal = [{"type": "income"}, {"type": "foreign_aid"}, {"type": "banker"}]
    # The padding that brings a message to the server's size (its other fields are ~100 bytes).
    pad = "x" * max(0, message_bytes - 120)
    room_part = {"game_id": "g"}

    class BareRoom:
        def __init__(self, code: str) -> None:
            self.code = code
            self.seats = 1
            self.seq = 0
            self.turn = 0
            self.sockets: dict[int, WebSocket] = {}

        def text(self, seat: int) -> str:
            mine = legal if seat == self.turn else []
            view = {"you": seat, "turn": self.turn, "pad": pad}
            message = {"type": "state", "seq": self.seq, "view": view, "legal": mine, "room": room_part}
            return encode(message).decode()

        async def broadcast(self) -> None:
            for seat, ws in list(self.sockets.items()):
                with contextlib.suppress(Exception):
                    await ws.send_text(self.text(seat))

    rooms: dict[str, BareRoom] = {}
    moves = [0]

    async def start(request: Request) -> JSONResponse:
        room = rooms[request.path_params["code"]]
        room.seq += 1
        await room.broadcast()
        return JSONResponse({})

    async def play(ws: WebSocket) -> None:
        room = rooms[ws.path_params["code"]]
        seat = int(ws.query_params["token"].rsplit(".", 1)[1])
        await ws.accept()
        room.sockets[seat] = ws
        if room.seq:
            await ws.send_text(room.text(seat))
        try:
            while True:
                msg = decode(await ws.receive_text())
                if msg.type != "act" or msg.seq != room.seq or seat != room.turn:
                    await ws.send_text('{"type":"error","code":"stale","message":"stale"}')
                    continue
                room.seq += 1
                room.turn = (room.turn + 1) % room.seats
                moves[0] += 1
                await room.broadcast()
        except (WebSocketDisconnect, RuntimeError):  # the client went (RuntimeError: while sending)
            room.sockets.pop(seat, None)

    return Starlette(
        routes=[
            *table_routes(rooms, BareRoom, moves),
            Route("/api/rooms/{code}/start", start, methods=["POST"]),
            WebSocketRoute("/ws/{code}", play),
        ]
    )


def serve_bare(port: int, message_bytes: int, ws: str) -> None:
    serve_app(bare_app(message_bytes), port, ws)


# ---- one run -------------------------------------------------------------------------------------


def moves_count(url: str) -> float:
    text = httpx.get(f"{url}/metrics", timeout=10).text
    for family in text_string_to_metric_families(text):
        if family.name == MOVES:
            return sum(s.value for s in family.samples if s.name == f"{MOVES}_count")
    raise ValueError(f"{url}/metrics has no {MOVES}")


def start(
    side: str, args: argparse.Namespace, tmp: Path, message_bytes: int
) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    if side == "server":
        cmd = [sys.executable, "-m", "conflictology.cli", "serve", "--port", str(port),
               "--db", f"sqlite:///{tmp / 'floor.sqlite3'}", "--no-address-limits",
               "--log-level", "warning", "--max-connections-per-address", "0", "--no-ws-compression",
               *args.serve_args.split()]  # fmt: skip
    elif side == "lean":
        cmd = [sys.executable, "-m", "benchmarks.server_floor", "--lean-port", str(port),
               "--lean-db", str(tmp / "lean.sqlite3"), "--bare-bytes", str(message_bytes),
               "--bare-ws", args.floor_ws]  # fmt: skip
    else:
        cmd = [sys.executable, "-m", "benchmarks.server_floor", "--bare-port", str(port),
               "--bare-bytes", str(message_bytes), "--bare-ws", args.floor_ws]  # fmt: skip
    if args.profile and side == "server":
        cmd[1:1] = ["-m", "cProfile", "-o", args.profile]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    wait_healthy(url)
    return proc, url


def run_side(side: str, args: argparse.Namespace, message_bytes: int) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="cfy-floor-"))
    proc, url = start(side, args, tmp, message_bytes)
    state: dict[str, float] = {}
    spy: list[subprocess.Popen[bytes]] = []
    load0 = os.getloadavg()[0]
    try:

        def read(end: str) -> None:
            state[f"cpu{end}"], state[f"moves{end}"] = cpu_seconds(proc.pid), moves_count(url)
            state[f"t{end}"] = time.monotonic()

        def progress(phase: str, *_: Any) -> None:
            if phase == "running" and "cpu0" not in state:
                read("0")
                if args.py_spy and side == (args.only or "server"):
                    spy.append(subprocess.Popen(
                        [str(Path(sys.executable).with_name("py-spy")), "record", "-p", str(proc.pid),
                         "-r", "250", "-f", "raw", "-o", args.py_spy, "-d", str(int(args.duration))],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    ))  # fmt: skip
            elif phase == "measured" and "cpu1" not in state:
                read("1")  # the window is over and the clients have not closed their sockets yet

        result = run_loadtest(
            [url], args.rooms, args.players, args.duration, think=args.think, workers=args.workers,
            progress=progress,
        )  # fmt: skip
    finally:
        for p in spy:
            p.wait(timeout=args.duration + 30)
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        for f in tmp.iterdir():
            f.unlink()
        tmp.rmdir()
    moves = state["moves1"] - state["moves0"]
    cpu = state["cpu1"] - state["cpu0"]
    return {
        "side": side,
        "moves_per_s": moves / (state["t1"] - state["t0"]),
        "cpu_ms_per_move": cpu * 1000 / max(1.0, moves),
        "cpu_cores": cpu / (state["t1"] - state["t0"]),
        "bytes_per_message": result.received_bytes / max(1, result.messages),
        "client_p99_ms": result.p99_ms,
        "errors": result.errors,
        "load": (round(load0, 1), round(os.getloadavg()[0], 1)),
    }


# ---- the sitting ---------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rooms", type=int, default=100)
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--think", type=float, default=0.0)
    ap.add_argument("--duration", type=float, default=15.0, help="seconds measured in each run")
    ap.add_argument("--workers", type=int, default=2, help="load test client processes")
    ap.add_argument("--kb", type=float, help="the floor's message size (default: the server's, as measured)")
    ap.add_argument(
        "--floor-ws", default="websockets-sansio", help="the floor's uvicorn WebSocket implementation"
    )
    ap.add_argument("--serve-args", default="", help="more flags for `serve`")
    ap.add_argument(
        "--nice",
        type=int,
        default=0,
        help="run both sides and the load test at this niceness (e.g. -10, as root): on a shared machine "
        "it keeps other work from starving the clients, so the server is measured near saturation",
    )
    ap.add_argument("--only", choices=SIDES, help="one side only (a profile, say)")
    ap.add_argument(
        "--lean",
        action="store_true",
        help="run the lean bound too (benchmarks/lean_app.py: the real game, SQLite and per-seat views, "
        "nothing else), and print its ratio to the floor",
    )
    ap.add_argument("--profile", help="write the server's cProfile here (with --only server --rounds 1)")
    ap.add_argument("--py-spy", help="sample the server with py-spy over the window: folded stacks here")
    ap.add_argument("--json", action="store_true", help="print each run as a JSON line too")
    ap.add_argument("--bare-port", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--bare-bytes", type=int, default=3000, help=argparse.SUPPRESS)
    ap.add_argument("--bare-ws", default="websockets-sansio", help=argparse.SUPPRESS)
    ap.add_argument("--lean-port", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--lean-db", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.bare_port:
        serve_bare(args.bare_port, args.bare_bytes, args.bare_ws)
        return
    if args.lean_port:
        from benchmarks.lean_app import serve_lean

        serve_lean(args.lean_port, args.lean_db, args.bare_ws, args.bare_bytes)
        return
    if args.nice:
        os.nice(args.nice)  # the servers and the load test's client processes inherit it

    runs: list[dict[str, Any]] = []
    columns = ["round", "side", "moves/s", "server CPU ms/move", "CPU (cores)", "bytes/message",
               "client p99 ms", "errors", "load 1m (start, end)"]  # fmt: skip
    print("| " + " | ".join(columns) + " |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---|")
    for r in range(1, args.rounds + 1):
        order = ["server", "floor", "lean"] if args.lean else ["server", "floor"]
        if not r % 2:
            order.reverse()
        if args.only:
            order = [args.only]
        for side in order:
            sizes = [run["bytes_per_message"] for run in runs if run["side"] == "server"]
            size = int(args.kb * 1024) if args.kb else int(statistics.median(sizes)) if sizes else 3072
            run = run_side(side, args, size)
            run["round"] = r
            runs.append(run)
            print(
                f"| {r} | {side} | {run['moves_per_s']:,.0f} | {run['cpu_ms_per_move']:.3f} | "
                f"{run['cpu_cores']:.2f} | {run['bytes_per_message']:,.0f} | {run['client_p99_ms']:.0f} | "
                f"{run['errors']} | {run['load'][0]}, {run['load'][1]} |",
                flush=True,
            )
            if args.json:
                print(json.dumps(run), file=sys.stderr, flush=True)
    summary(runs)


def summary(runs: list[dict[str, Any]]) -> None:
    def med(side: str, key: str) -> float:
        values = [r[key] for r in runs if r["side"] == side]
        return statistics.median(values) if values else float("nan")

    print()
    print("| medians | moves/s | server CPU ms/move | bytes/message | client p99 ms |")
    print("|---|---:|---:|---:|---:|")
    for side in SIDES:
        if not any(run["side"] == side for run in runs):
            continue
        print(
            f"| {side} | {med(side, 'moves_per_s'):,.0f} | {med(side, 'cpu_ms_per_move'):.3f} | "
            f"{med(side, 'bytes_per_message'):,.0f} | {med(side, 'client_p99_ms'):.0f} |"
        )
    for side in ("server", "lean"):
        ratios = []
        for r in sorted({run["round"] for run in runs}):
            ran = {run["side"]: run for run in runs if run["round"] == r}
            if side in ran and "floor" in ran:
                ratios.append(ran[side]["cpu_ms_per_move"] / ran["floor"]["cpu_ms_per_move"])
        if ratios:
            each = ", ".join(f"{x:.2f}" for x in ratios)
            median = statistics.median(ratios)
            print(f"\n{side}/floor CPU per move, each round: {each}; median **{median:.2f}×**")


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        main()
