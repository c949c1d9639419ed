"""Slow clients against a game in progress (issue 13, item 3): does a slowloris stop the server?

    .venv/bin/python benchmarks/slowloris.py --open-files 1024                 # like `ulimit -n 1024`
    .venv/bin/python benchmarks/slowloris.py --open-files 1024 --soft-only     # soft 1024, hard as is
    .venv/bin/python benchmarks/slowloris.py --src /path/to/other/checkout/src --label before

Starts ``conflictology serve`` (from ``--src``, default this checkout) on a free loopback port with
a throwaway SQLite file and the given open-file limit, then:

1. two scripted WebSocket players start a Capitol game and play it (a random legal move after a
   think time; the host asks for a rematch over HTTP when a game ends), a fresh visitor tries once
   a second to create a room, join it and open its WebSocket — for ``--baseline`` seconds alone;
2. ``--connections`` slow connections (default 1,500) open from ``--sources`` loopback addresses
   (127.0.0.2, 127.0.0.3, …; bound before connecting, so no per-address cap alone stops them), each
   sending a request line and then one header line every ``--line-every`` seconds, never ending
   its headers; one the server closes opens again after a second, as an attacker's would;
3. both go on for ``--duration`` seconds under attack; then the attack stops and the server's
   ``/metrics`` and log are read.

Prints a table: per window (alone, under attack), the moves made and their round trip (from a move
sent to the state that follows it), the failed requests and socket errors, the fresh visitors who
got in; for the slow connections, how many were held at once and how long the server let them live;
the server's log lines and its refusal counters. ``--json`` adds one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import random
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import websockets
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def percentile(values: list[float], q: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


@dataclass
class Window:
    """What the players and the visitor saw in one window (alone, or under attack)."""

    moves: int = 0
    round_trips: list[float] = field(default_factory=list)
    failed_requests: int = 0  # HTTP requests that failed or answered 5xx
    socket_errors: int = 0  # WebSockets that could not open or dropped
    visitors: int = 0
    visitors_in: int = 0
    visitor_seconds: list[float] = field(default_factory=list)
    samples: list[str] = field(default_factory=list)

    def note(self, what: str) -> None:
        if len(self.samples) < 4:
            self.samples.append(what[:160])


@dataclass
class Slow:
    opened: int = 0
    connect_failures: int = 0
    alive: int = 0
    held_max: int = 0
    opened_at: dict[int, float] = field(default_factory=dict)  # of those open now, by connection
    lifetimes: list[float] = field(default_factory=list)  # of the connections the server closed
    answers: dict[str, int] = field(default_factory=dict)  # status line the server closed with


class Run:
    def __init__(self, url: str, args: argparse.Namespace, server_pid: int) -> None:
        self.url = url
        self.server_pid = server_pid
        self.cpu: dict[str, float] = {}
        self.ws_url = "ws://" + url.removeprefix("http://")
        self.args = args
        self.windows = {"alone": Window(), "attack": Window()}
        self.window = self.windows["alone"]
        self.slow = Slow()
        self.stopping = False
        self.attacking = False
        self.rng = random.Random(args.seed)

    # ---- the game in progress ----------------------------------------------------------------

    async def post(self, path: str, body: dict[str, Any] | None = None, token: str | None = None) -> Any:
        """A request on a fresh connection (a new visitor, or a player's browser after a while)."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        try:
            async with httpx.AsyncClient(base_url=self.url, timeout=10) as http:
                r = await http.post(path, json=body or {}, headers=headers)
        except httpx.HTTPError as exc:
            self.window.failed_requests += 1
            self.window.note(f"POST {path.split('/')[-1]}: {type(exc).__name__}")
            return None
        if r.status_code >= 500 or r.status_code == 429:
            self.window.failed_requests += 1
            self.window.note(f"POST {path.split('/')[-1]}: {r.status_code}")
            return None
        return r.json()

    async def table(self) -> tuple[str, list[str]]:
        while True:
            body = {"game": "capitol", "name": "Host", "settings": {"timers": False}}
            made = await self.post("/api/rooms", body)
            if made is not None:
                joined = await self.post(f"/api/rooms/{made['code']}/join", {"name": "Guest"})
                if joined is not None:
                    return made["code"], [made["token"], joined["token"]]
            await asyncio.sleep(1)

    async def player(self, code: str, tokens: list[str], seat: int) -> None:
        answered = -1
        pending: tuple[int, float] | None = None
        last_over: str | None = None
        while not self.stopping:
            try:
                async with connect(f"{self.ws_url}/ws/{code}?token={tokens[seat]}", open_timeout=10) as ws:
                    async for raw in ws:
                        msg = json.loads(raw)
                        if msg.get("type") == "error" and msg.get("code") != "stale":
                            self.window.note(f"error {msg.get('code')}")
                        if msg.get("type") != "state":
                            continue
                        now = time.perf_counter()
                        if pending is not None and msg["seq"] > pending[0]:
                            self.window.moves += 1
                            self.window.round_trips.append(now - pending[1])
                            pending = None
                        if "winners" in msg and not msg["legal"]:
                            game_id = msg["room"].get("game_id")
                            if seat == 0 and game_id != last_over:
                                last_over = game_id
                                asyncio.get_running_loop().create_task(self.rematch(code, tokens[0]))
                            continue
                        if msg["legal"] and msg["seq"] > answered:
                            await asyncio.sleep(self.args.think * self.rng.uniform(0.5, 1.5))
                            answered = msg["seq"]
                            pending = (msg["seq"], time.perf_counter())
                            action = self.rng.choice(msg["legal"])
                            await ws.send(json.dumps({"type": "act", "action": action, "seq": msg["seq"]}))
            except (OSError, websockets.WebSocketException, TimeoutError) as exc:
                if self.stopping:
                    return
                self.window.socket_errors += 1
                self.window.note(f"player socket: {type(exc).__name__}: {exc}")
                pending = None
                await asyncio.sleep(0.5)

    async def rematch(self, code: str, host_token: str) -> None:
        for path in ("rematch", "start"):
            while not self.stopping:
                if await self.post(f"/api/rooms/{code}/{path}", None, host_token) is not None:
                    break
                await asyncio.sleep(0.5)

    async def visitor(self) -> None:
        """Once a second: make a room, join it, open its WebSocket and read the room."""
        while not self.stopping:
            window = self.window
            began = time.perf_counter()
            try:
                async with asyncio.timeout(10):
                    made = await self.post("/api/rooms", {"game": "capitol", "name": "Visitor"})
                    joined = made and await self.post(f"/api/rooms/{made['code']}/join", {"name": "Friend"})
                    if joined:
                        url = f"{self.ws_url}/ws/{made['code']}?token={joined['token']}"
                        async with connect(url, open_timeout=10) as ws:
                            await ws.recv()
                        window.visitors_in += 1
                        window.visitor_seconds.append(time.perf_counter() - began)
            except (OSError, websockets.WebSocketException, TimeoutError) as exc:
                window.socket_errors += 1
                window.note(f"visitor: {type(exc).__name__}")
            # Counted once over (a visit the end of the run cuts short is not one).
            window.visitors += 1
            await asyncio.sleep(max(0.0, 1.0 - (time.perf_counter() - began)))

    # ---- the attack ----------------------------------------------------------------------------

    async def slow_connection(self, index: int, source: str, host: str, port: int) -> None:
        loop = asyncio.get_running_loop()
        slow = self.slow
        await asyncio.sleep(self.args.ramp * index / self.args.connections)
        while self.attacking:
            opened = loop.time()
            try:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(host, port, local_addr=(source, 0)), timeout=10
                )
            except (OSError, TimeoutError):
                slow.connect_failures += 1
                await asyncio.sleep(1.0)
                continue
            slow.opened += 1
            slow.alive += 1
            slow.held_max = max(slow.held_max, slow.alive)
            slow.opened_at[index] = opened
            closed_by_server = False
            answer = ""
            try:
                writer.write(f"GET /?slow={index} HTTP/1.1\r\nHost: {host}:{port}\r\n".encode())
                line = 0
                while self.attacking:
                    try:
                        data = await asyncio.wait_for(reader.read(4096), timeout=self.args.line_every)
                    except TimeoutError:
                        writer.write(f"X-Slow-{line}: {line}\r\n".encode())
                        line += 1
                        continue
                    if not data:
                        closed_by_server = True
                        break
                    answer = answer or data.split(b"\r\n", 1)[0][9:12].decode(errors="replace")
            except OSError:
                closed_by_server = True
            finally:
                slow.alive -= 1
                slow.opened_at.pop(index, None)
                writer.close()
            if closed_by_server:
                slow.lifetimes.append(loop.time() - opened)
                slow.answers[answer or "none"] = slow.answers.get(answer or "none", 0) + 1
                await asyncio.sleep(1.0)

    # ---- the run -------------------------------------------------------------------------------------

    async def main(self) -> dict[str, Any]:
        code, tokens = await self.table()
        players = [asyncio.create_task(self.player(code, tokens, seat)) for seat in (0, 1)]
        await asyncio.sleep(0.3)
        await self.post(f"/api/rooms/{code}/start", None, tokens[0])
        visitor = asyncio.create_task(self.visitor())
        cpu = cpu_seconds(self.server_pid)
        await asyncio.sleep(self.args.baseline)
        self.cpu["alone"] = (cpu_seconds(self.server_pid) - cpu) / self.args.baseline
        cpu = cpu_seconds(self.server_pid)

        self.window = self.windows["attack"]
        self.attacking = True
        host, port = self.url.removeprefix("http://").split(":")
        sources = [f"127.0.0.{2 + i}" for i in range(self.args.sources)]
        attackers = [
            asyncio.create_task(self.slow_connection(i, sources[i % len(sources)], host, int(port)))
            for i in range(self.args.connections)
        ]
        await asyncio.sleep(self.args.duration)
        self.cpu["attack"] = (cpu_seconds(self.server_pid) - cpu) / self.args.duration
        still_open = self.slow.alive
        now = asyncio.get_running_loop().time()
        oldest = max((now - t for t in self.slow.opened_at.values()), default=0.0)
        self.attacking = False
        self.stopping = True
        for task in [*attackers, *players, visitor]:
            task.cancel()
        await asyncio.gather(*attackers, *players, visitor, return_exceptions=True)
        return {"still_open_at_end": still_open, "oldest_open_at_end_s": round(oldest, 1)}


def server_counters(url: str) -> dict[str, float]:
    out: dict[str, float] = {}
    with contextlib.suppress(httpx.HTTPError):
        for line in httpx.get(f"{url}/metrics", timeout=10).text.splitlines():
            if line.startswith(
                (
                    "conflictology_connections_refused_total",
                    "conflictology_connections_evicted_total",
                    "conflictology_connections_timed_out_total",
                    "conflictology_max_connections",
                )
            ):
                name, value = line.rsplit(" ", 1)
                out[name.removeprefix("conflictology_")] = float(value)
    return out


def soft_limit() -> int:
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", type=Path, default=ROOT / "src", help="the checkout's src/ to serve")
    ap.add_argument("--label", default="", help="a name for the row (default: the src's checkout)")
    ap.add_argument("--open-files", type=int, default=1024, help="the server's open-file limit")
    ap.add_argument("--soft-only", action="store_true", help="set only the soft limit (hard as is)")
    ap.add_argument("--connections", type=int, default=1500)
    ap.add_argument("--sources", type=int, default=19, help="loopback source addresses (127.0.0.2 on)")
    ap.add_argument("--line-every", type=float, default=5.0, help="seconds between header lines")
    ap.add_argument("--ramp", type=float, default=3.0, help="seconds over which the connections open")
    ap.add_argument("--baseline", type=float, default=8.0, help="seconds of play before the attack")
    ap.add_argument("--duration", type=float, default=40.0, help="seconds of play under attack")
    ap.add_argument("--think", type=float, default=0.2, help="a player's mean think time, seconds")
    ap.add_argument("--serve-args", default="", help="more flags for `serve`")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    # This client holds --connections sockets itself.
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if soft_limit() < args.connections + 200:
        sys.exit(f"this client needs {args.connections + 200} open files; its limit is {soft_limit()}")

    def limit_server() -> None:
        _s, h = resource.getrlimit(resource.RLIMIT_NOFILE)
        hard_limit = h if args.soft_only else args.open_files
        resource.setrlimit(resource.RLIMIT_NOFILE, (args.open_files, hard_limit))

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(tmp) / "server.log"
        cmd = [sys.executable, "-m", "conflictology.cli", "serve", "--host", "127.0.0.1",
               "--port", str(port), "--db", f"sqlite:///{tmp}/db.sqlite3", "--log-level", "warning",
               *args.serve_args.split()]  # fmt: skip
        env = dict(os.environ, PYTHONPATH=str(args.src.resolve()), PYTHONUNBUFFERED="1")
        with log_path.open("wb") as log_file:
            server = subprocess.Popen(
                cmd, env=env, stdout=log_file, stderr=subprocess.STDOUT, preexec_fn=limit_server
            )
            try:
                deadline = time.time() + 30
                while True:
                    with contextlib.suppress(httpx.HTTPError):
                        if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                            break
                    if time.time() > deadline or server.poll() is not None:
                        sys.exit(f"the server did not start:\n{log_path.read_text()}")
                    time.sleep(0.1)
                limits = Path(f"/proc/{server.pid}/limits").read_text()
                server_files = next(int(ln.split()[3]) for ln in limits.splitlines() if "open files" in ln)
                lines_before = len(log_path.read_text(errors="replace").splitlines())
                run = Run(url, args, server.pid)
                extra = asyncio.run(run.main())
                time.sleep(1.0)
                counters = server_counters(url)
                log_lines = log_path.read_text(errors="replace").splitlines()[lines_before:]
            finally:
                server.send_signal(signal.SIGTERM)
                try:
                    server.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    server.kill()
                    server.wait()

    label = args.label or args.src.resolve().parent.name
    slow = run.slow
    rows = []
    for name, w in run.windows.items():
        rows.append(
            {
                "window": name,
                "moves": w.moves,
                "moves_per_s": round(w.moves / (args.baseline if name == "alone" else args.duration), 1),
                "rtt_p50_ms": round(percentile(w.round_trips, 0.5) * 1000, 1),
                "rtt_p99_ms": round(percentile(w.round_trips, 0.99) * 1000, 1),
                "rtt_max_ms": round(max(w.round_trips, default=math.nan) * 1000, 1),
                "failed_requests": w.failed_requests,
                "socket_errors": w.socket_errors,
                "visitors_in": f"{w.visitors_in}/{w.visitors}",
                "visitor_p50_ms": round(percentile(w.visitor_seconds, 0.5) * 1000, 1),
                "server_cpu": round(run.cpu.get(name, math.nan), 2),
                "samples": w.samples,
            }
        )
    summary = {
        "label": label,
        "server_open_files": server_files,
        "connections": args.connections,
        "sources": args.sources,
        "line_every": args.line_every,
        "slow_opened": slow.opened,
        "slow_connect_failures": slow.connect_failures,
        "slow_held_max": slow.held_max,
        "slow_closed_by_server": len(slow.lifetimes),
        "slow_lifetime_p50_s": round(percentile(slow.lifetimes, 0.5), 1),
        "slow_lifetime_max_s": round(max(slow.lifetimes, default=math.nan), 1),
        "slow_answers": slow.answers,
        "slow_still_open_at_end": extra["still_open_at_end"],
        "slow_oldest_open_at_end_s": extra["oldest_open_at_end_s"],
        "server_log_lines_during_attack": len(log_lines),
        "server_log_sample": log_lines[:3],
        "server_counters": counters,
        "windows": rows,
    }
    print(
        f"\n{label}: serve with {server_files} open files; {args.connections} slow connections from "
        f"{args.sources} addresses, a header line every {args.line_every:g} s, for {args.duration:g} s\n"
    )
    head = ["window", "moves", "moves/s", "move p50 ms", "p99", "max", "failed requests", "socket errors",
            "visitors in", "visitor p50 ms", "server CPU (cores)"]  # fmt: skip
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        cells = [r["window"], r["moves"], r["moves_per_s"], r["rtt_p50_ms"], r["rtt_p99_ms"], r["rtt_max_ms"],
                 r["failed_requests"], r["socket_errors"], r["visitors_in"], r["visitor_p50_ms"],
                 r["server_cpu"]]  # fmt: skip
        print("| " + " | ".join(str(c) for c in cells) + " |")
    print()
    print("| slow connections opened | connect failures | held at once (max) | closed by the server | "
          "lifetime p50 s | max s | still open at end (oldest s) | server's answers | "
          "server log lines |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    answers = ", ".join(f"{k}: {v}" for k, v in sorted(slow.answers.items())) or "-"
    print(f"| {slow.opened} | {slow.connect_failures} | {slow.held_max} | {len(slow.lifetimes)} | "
          f"{summary['slow_lifetime_p50_s']} | {summary['slow_lifetime_max_s']} | "
          f"{extra['still_open_at_end']} ({extra['oldest_open_at_end_s']}) | {answers} | "
          f"{len(log_lines)} |")  # fmt: skip
    if counters:
        print("\nserver counters: " + ", ".join(f"{k} {v:g}" for k, v in counters.items()))
    for r in rows:
        if r["samples"]:
            print(f"{r['window']}: " + "; ".join(r["samples"]))
    if log_lines:
        print("server log (first lines): " + " | ".join(line[:120] for line in log_lines[:3]))
    if args.json:
        print(json.dumps(summary))


if __name__ == "__main__":
    main()
