"""Attacks on a local server from outside, over HTTP and WebSocket only (issue 13).

    python benchmarks/attacks.py                                # every attack, short defaults
    python benchmarks/attacks.py --only bots,guessing --duration 10
    python benchmarks/attacks.py --only kill9 --kills 100       # the full kill -9 run
    python benchmarks/attacks.py --redis                        # rooms in a private Redis; + redis-outage
    python benchmarks/attacks.py --server-src /work/wt/before/src   # the server from another checkout

Each attack starts its own ``python -m conflictology.cli serve`` on 127.0.0.1 (a free port, a
throwaway SQLite file, the default flags an operator would use; with ``--redis`` a private
redis-server, append-only, so an outage is a real stop and restart), runs for a bounded time, stops
everything (also on errors) and prints one row: attempts, requests wrongly accepted, crashes (5xx
answers other than a 503 with Retry-After, sockets dropped without an error message, the server
process dying, tracebacks in its logs), leaks (another seat's hidden cards in a view, a token in a
room description or in the server's logs), seen moves a restart took back, and the p50/p99 of a
*probe* room played meanwhile.

The probe is a separate process (so the attacker's own event loop does not delay it): two scripted
players in a Capitol room of their own, each answering every state that awaits it after a short
pause (``--probe-think``, well under the per-socket message limit), a rematch after each game; a
move's time runs from sending it to the first state with a higher ``seq`` on the same socket. A
move still unanswered when the window closes counts with the time it has waited so far.

Nothing here imports the server: the tool measures what an outsider sees, so the same command
measures the code before and after a fix. Clients come from many loopback addresses (127.x.y.z, all
on ``lo``) where an attacker would use several, and where the tool's own set-up must stay clear of
per-address limits; what a limit refused is counted, never treated as a failure of the tool.

``kill9(kills, rooms, ...)`` runs the kill -9 attack on its own server and returns a
:class:`Kill9Result`, for a test to assert ``lost_seen_moves == 0``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import ctypes
import importlib.util
import itertools
import json
import math
import os
import random
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

# The bot level of item 1: a search with no real bound, accepted by name checks that look at "ismcts".
EVIL_LEVEL = "ismcts:iterations=999999999:seconds=1e9"
# docs/protocol.md's code alphabet; letters seen in real codes are added, so a changed alphabet is
# still covered (the length is read from a room the tool creates).
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
# Source addresses: the probe's two players, a monitor (/healthz samples), the set-up's pool (rooms
# the attacks need, spread so that a per-address quota never stops the set-up), and attacker blocks.
PROBE_ADDRESSES = ("127.20.0.1", "127.20.0.2")
MONITOR_ADDRESS = "127.20.0.3"
SETUP_ADDRESSES = [f"127.30.{i // 250}.{1 + i % 250}" for i in range(1000)]
# The issue's yardstick for guessing: the chance to find any of this many live rooms in a day.
LIVE_ROOMS = 10_000
TRACEBACK = "Traceback (most recent call last)"


def attacker(block: int, i: int = 0) -> str:
    """The i-th source address of attacker block ``block`` (each attack has its own block)."""
    return f"127.{40 + block}.{i // 250}.{1 + i % 250}"


class AttackError(RuntimeError):
    """The attack could not be set up (reported in its row; the run goes on)."""


# ---- small helpers -----------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pct(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (NaN when empty)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def fmt(x: float | None, digits: int = 0) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:,.{digits}f}"


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) of a process and of its live descendants (a server's worker
    processes count as the server's)."""
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
            for task in Path(f"/proc/{p}/task").iterdir():
                todo.extend(int(c) for c in (task / "children").read_text().split())
        except (OSError, ValueError):
            if p == pid:
                return math.nan
    return total / os.sysconf("SC_CLK_TCK")


def ws_base(url: str) -> str:
    return "ws://" + url.removeprefix("http://")


def _die_with_parent() -> None:
    # A child the tool started must not outlive it (Ctrl-C, a kill of the tool): PR_SET_PDEATHSIG.
    # (Children are always started from the main thread, whose exit is what the signal follows.)
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)


def _child_setup(nofile: int | None) -> Callable[[], None]:
    def setup() -> None:
        _die_with_parent()
        if nofile is not None:
            # `ulimit -n 1024` as a service manager's default: the soft limit; the hard one stays, so
            # a server may raise its own limit at start.
            _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, hard))

    return setup


def raise_own_file_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


_background: set[asyncio.Future[Any]] = set()


def spawn(coro: Awaitable[Any]) -> asyncio.Future[Any]:
    task = asyncio.ensure_future(coro)
    _background.add(task)
    task.add_done_callback(_spawned_done)
    return task


def _spawned_done(task: asyncio.Future[Any]) -> None:
    _background.discard(task)
    if not task.cancelled():
        task.exception()  # read: a send on a socket that closed meanwhile is expected


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---- what the attacker's clients saw -----------------------------------------------------------------------


@dataclass
class Tally:
    """What every client of one attack saw (the probe keeps its own and reports it)."""

    statuses: Counter[int] = field(default_factory=Counter)
    server_errors: int = 0  # 5xx answers other than a 503 with Retry-After (a correct refusal)
    refusals_503: int = 0  # 503 with Retry-After
    no_answer: int = 0  # HTTP requests that got no answer at all (refused connection, timeout)
    drops: int = 0  # sockets the server closed without an error message
    leaks: int = 0
    expect_drops: bool = False  # the tool itself is stopping or killing the server
    samples: list[str] = field(default_factory=list)

    def http(self, status: int, headers: Any, what: str = "") -> None:
        self.statuses[status] += 1
        if status >= 500:
            if status == 503 and headers is not None and headers.get("retry-after") is not None:
                self.refusals_503 += 1
            else:
                self.server_errors += 1
                self.sample(f"{status} {what}")

    def sample(self, what: str) -> None:
        if len(self.samples) < 8:
            self.samples.append(what[:160])


def view_leaks(view: Any) -> int:
    """Seats whose hidden cards a view shows to someone else (Capitol: ``hidden`` is a count for
    every seat but the receiver's own)."""
    if not isinstance(view, dict):
        return 0
    you = view.get("you")
    n = 0
    for i, p in enumerate(view.get("players") or []):
        if isinstance(p, dict) and p.get("seat", i) != you and not isinstance(p.get("hidden", 0), int):
            n += 1
    return n


def is_drop(close: Any, last_type: str | None) -> bool:
    """A socket the server closed without telling the client why: no close frame at all, or a close
    without a reason that no error (or ``left``) message preceded. Policy, overload and "going
    away" codes, and any close with a reason, are refusals, not drops."""
    if last_type in ("error", "left"):
        return False
    if close is None:
        return True
    return not (close.code in (1001, 1007, 1008, 1009, 1012, 1013) or close.reason)


class HttpPool:
    """httpx clients, one per loopback source address, counting every answer in the tally."""

    def __init__(self, base: str, tally: Tally, timeout: float = 15.0, connections: int = 8) -> None:
        self.base = base
        self.tally = tally
        self.timeout = timeout
        self.connections = connections
        self.clients: dict[str, httpx.AsyncClient] = {}

    def client(self, addr: str) -> httpx.AsyncClient:
        c = self.clients.get(addr)
        if c is None:
            transport = httpx.AsyncHTTPTransport(
                local_address=addr, limits=httpx.Limits(max_connections=self.connections)
            )
            c = self.clients[addr] = httpx.AsyncClient(
                base_url=self.base, timeout=self.timeout, transport=transport
            )
        return c

    async def request(
        self, method: str, path: str, addr: str, token: str | None = None, **kw: Any
    ) -> httpx.Response | None:
        headers = dict(kw.pop("headers", None) or {})
        if token:
            headers["Authorization"] = f"Bearer {token}"
        try:
            r = await self.client(addr).request(method, path, headers=headers, **kw)
        except httpx.HTTPError as exc:
            self.tally.no_answer += 1
            self.tally.sample(f"{method} {path}: {type(exc).__name__}")
            return None
        self.tally.http(r.status_code, r.headers, f"{method} {path}")
        if method == "GET" and b'"token"' in r.content:
            self.tally.leaks += 1
            self.tally.sample(f"a token in GET {path}")
        return r

    async def aclose(self) -> None:
        for c in self.clients.values():
            with contextlib.suppress(Exception):
                await c.aclose()
        self.clients.clear()


class Creator:
    """Creates rooms from one source address of a pool until that address is refused (429/503),
    then from the next: a per-address quota slows the set-up but never stops it, and few addresses
    (few connections) are used when there is none. Joins come from other addresses of the pool."""

    def __init__(self, pool: HttpPool, addresses: Sequence[str]) -> None:
        self.pool = pool
        self.addresses = list(addresses)
        self.i = 0
        self.j = 0
        self.refused = 0
        self.used: set[str] = set()

    def current(self) -> str:
        return self.addresses[self.i % len(self.addresses)]

    def other_addr(self) -> str:
        """An address for someone else at the table (a guest joining from their own connection)."""
        self.j += 1
        return self.addresses[(self.i + self.j) % len(self.addresses)]

    async def create(
        self, body: dict[str, Any], deadline: float | None = None
    ) -> tuple[str, str, str] | None:
        """(code, host token, host address), or None when every address was refused until the deadline."""
        deadline = deadline if deadline is not None else time.monotonic() + 60
        refused_in_a_row = 0
        while time.monotonic() < deadline:
            addr = self.current()
            r = await self.pool.request("POST", "/api/rooms", addr, json=body)
            if r is not None and r.status_code == 201:
                data = r.json()
                self.used.add(addr)
                return str(data["code"]), str(data["token"]), addr
            if r is not None and r.status_code not in (429, 503) and r.status_code < 500:
                raise AttackError(f"POST /api/rooms: {r.status_code} {r.text[:200]}")
            self.refused += 1
            refused_in_a_row += 1
            if addr == self.current():
                self.i += 1
            if refused_in_a_row >= len(self.addresses):
                refused_in_a_row = 0
                await asyncio.sleep(1.0)
        return None


_homes = itertools.count()


def home_address() -> str:
    """A source address of its own for one scripted seat's socket (the tool's players must not share
    a per-address limit with each other or with the attackers)."""
    i = next(_homes)
    return f"127.31.{i // 250 % 250}.{1 + i % 250}"


@dataclass
class Table:
    code: str
    tokens: list[str]
    addrs: list[str]  # where each seat's HTTP requests come from (the host's: where the room was made)
    homes: list[str] = field(default_factory=list)  # where each seat's socket connects from

    def __post_init__(self) -> None:
        self.homes = [home_address() for _ in range(16)]


async def make_table(
    pool: HttpPool,
    creator: Creator,
    humans: int = 1,
    bots: int = 0,
    level: str | None = None,
    settings: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
    names: Sequence[str] | None = None,
) -> Table:
    body: dict[str, Any] = {"game": "capitol", "name": names[0] if names else "Host"}
    if settings:
        body["settings"] = settings
    if options:
        body["options"] = options
    made = await creator.create(body)
    if made is None:
        raise AttackError("no room could be created (every address refused)")
    code, token, addr = made
    table = Table(code, [token], [addr])
    for i in range(1, humans):
        join_addr = creator.other_addr()
        name = names[i] if names else f"Player {i}"
        r = await pool.request("POST", f"/api/rooms/{code}/join", join_addr, json={"name": name})
        if r is None or r.status_code != 201:
            raise AttackError(f"join: {r.status_code if r else 'no answer'} {r.text[:200] if r else ''}")
        table.tokens.append(r.json()["token"])
        table.addrs.append(join_addr)
    if bots:
        body = {"count": bots} if level is None else {"count": bots, "level": level}
        r = await pool.request("POST", f"/api/rooms/{code}/bots", addr, token=token, json=body)
        if r is None or r.status_code != 201:
            raise AttackError(f"bots: {r.status_code if r else 'no answer'} {r.text[:200] if r else ''}")
    return table


async def start_table(pool: HttpPool, table: Table) -> None:
    r = await pool.request("POST", f"/api/rooms/{table.code}/start", table.addrs[0], token=table.tokens[0])
    if r is None or r.status_code != 200:
        raise AttackError(f"start: {r.status_code if r else 'no answer'} {r.text[:200] if r else ''}")


def auto_rematch(pool: HttpPool, table: Table) -> Callable[[Player, dict[str, Any]], None]:
    """The host's reaction to a finished game: a rematch and a new start (retried while the server
    is away)."""
    done: set[Any] = set()

    async def again() -> None:
        await asyncio.sleep(0.2)
        for _ in range(20):
            r = await pool.request(
                "POST", f"/api/rooms/{table.code}/rematch", table.addrs[0], token=table.tokens[0]
            )
            if r is not None and r.status_code in (200, 409):
                s = await pool.request(
                    "POST", f"/api/rooms/{table.code}/start", table.addrs[0], token=table.tokens[0]
                )
                if s is not None and s.status_code in (200, 409):
                    return
            await asyncio.sleep(1.0)

    def on_over(player: Player, msg: dict[str, Any]) -> None:
        game_id = (msg.get("room") or {}).get("game_id")
        if game_id not in done:
            done.add(game_id)
            spawn(again())

    return on_over


class Player:
    """A seat (or a spectator) over its own WebSocket: answers every state that awaits it with a
    random legal action after ``think`` seconds (quoting the seq), reconnects with its token when the
    socket drops, times each move, records drops, refusals and (``record_seen``) the last state it
    saw of each game: seq and public log."""

    def __init__(
        self,
        url: str,
        code: str,
        token: str | None,
        tally: Tally,
        *,
        local: str | None = None,
        think: float = 0.0,
        act: bool = True,
        seed: int = 0,
        record_seen: bool = False,
        on_over: Callable[[Player, dict[str, Any]], None] | None = None,
    ) -> None:
        self.url = f"{ws_base(url)}/ws/{code}" + (f"?token={token}" if token else "")
        self.tally = tally
        self.local = local
        self.think = think
        self.act = act and token is not None
        self.rng = random.Random(seed)
        self.record_seen = record_seen
        self.on_over = on_over
        self.latencies: list[tuple[float, float]] = []  # (wall time sent, seconds to the answer)
        self.pending: tuple[int, float, float] | None = None  # (seq answered, perf time, wall time)
        self.moves = 0
        self.sent = 0
        self.errors: Counter[str] = Counter()
        self.refused: Counter[Any] = Counter()
        self.sessions = 0
        self.drops = 0
        self.last: dict[str, Any] | None = None
        self.last_seq = -1
        self.last_type: str | None = None
        self.last_time = time.monotonic()
        # game id → (first seq seen, last seq seen, the public log at the last one)
        self.seen: dict[Any, tuple[int, int, list[Any]]] = {}
        self.paused = False
        self.open = False
        self.got_state = asyncio.Event()
        self._stop = False
        self._ws: ClientConnection | None = None
        self._answered = -1
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self) -> Player:
        self._task = asyncio.ensure_future(self.run())
        return self

    async def stop(self) -> None:
        self._stop = True
        self._cancel_timer()
        ws = self._ws
        if ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(ws.close(), 2)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task

    def resume(self) -> None:
        self.paused = False
        self._answered = -1
        if self._ws is not None:
            self._maybe_act(self._ws)

    async def run(self) -> None:
        backoff = 0.2
        while not self._stop:
            try:
                async with connect(
                    self.url,
                    open_timeout=10,
                    close_timeout=2,
                    max_size=1 << 22,
                    local_addr=(self.local, 0) if self.local else None,
                ) as ws:
                    self._ws = ws
                    self.open = True
                    self.sessions += 1
                    backoff = 0.2
                    self._answered = -1
                    self.pending = None
                    self.last_type = None
                    watchdog = asyncio.ensure_future(self._watch(ws))
                    try:
                        async for raw in ws:
                            self._on(ws, json.loads(raw))
                    finally:
                        watchdog.cancel()
                        self._cancel_timer()
                    self._closed(ws)
            except InvalidStatus as exc:
                self.refused[exc.response.status_code] += 1
                self.tally.http(exc.response.status_code, exc.response.headers, "WebSocket handshake")
            except ConnectionClosed:
                if self._ws is not None:
                    self._closed(self._ws)
            except (OSError, TimeoutError, InvalidHandshake) as exc:
                self.refused[type(exc).__name__] += 1
            finally:
                self._ws = None
                self.open = False
            if self._stop:
                return
            await asyncio.sleep(backoff * (0.5 + self.rng.random()))
            backoff = min(2.0, backoff * 1.6)

    def _closed(self, ws: ClientConnection) -> None:
        if self._stop or self.tally.expect_drops:
            return
        if is_drop(ws.protocol.close_rcvd, self.last_type):
            self.drops += 1
            self.tally.drops += 1
            close = ws.protocol.close_rcvd
            self.tally.sample(f"socket dropped ({close.code if close else 'no close frame'})")

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _on(self, ws: ClientConnection, msg: dict[str, Any]) -> None:
        kind = msg.get("type")
        self.last_type = kind
        self.last_time = time.monotonic()
        if kind == "state":
            view = msg.get("view") or {}
            leaks = view_leaks(view)
            if leaks:
                self.tally.leaks += leaks
                self.tally.sample("hidden cards of another seat in a view")
            seq = int(msg["seq"])
            if self.pending is not None and seq > self.pending[0]:
                self.latencies.append((self.pending[2], time.perf_counter() - self.pending[1]))
                self.moves += 1
                self.pending = None
            self.last = msg
            self.last_seq = seq
            if self.record_seen:
                game_id = (msg.get("room") or {}).get("game_id")
                first = self.seen[game_id][0] if game_id in self.seen else seq
                self.seen[game_id] = (first, seq, list(view.get("log") or []))
            self.got_state.set()
            if msg.get("winners") is not None and not msg.get("legal"):
                if self.on_over is not None:
                    self.on_over(self, msg)
                return
            self._maybe_act(ws)
        elif kind == "error":
            self.errors[str(msg.get("code"))] += 1
            self.pending = None
            if msg.get("code") != "stale":
                # Refused (rate limit, a backend away…): ask for the state again and answer it anew.
                self._answered = -1
                asyncio.get_running_loop().call_later(0.5, self._sync, ws)
        elif kind == "lobby":
            self.got_state.set()

    def _sync(self, ws: ClientConnection) -> None:
        if not self._stop and ws is self._ws:
            spawn(ws.send('{"type":"sync"}'))

    def _maybe_act(self, ws: ClientConnection) -> None:
        msg = self.last
        if (
            not self.act
            or self.paused
            or msg is None
            or not msg.get("legal")
            or msg["seq"] <= self._answered
            or self._timer is not None
        ):
            return
        delay = self.think * self.rng.uniform(0.5, 1.5) if self.think > 0 else 0.0
        self._timer = asyncio.get_running_loop().call_later(delay, self._act, ws)

    def _act(self, ws: ClientConnection) -> None:
        self._timer = None
        msg = self.last
        if self.paused or self._stop or ws is not self._ws or msg is None or not msg.get("legal"):
            return
        if msg["seq"] <= self._answered:
            return
        action = self.rng.choice(msg["legal"])
        self._answered = msg["seq"]
        self.pending = (msg["seq"], time.perf_counter(), time.time())
        self.sent += 1
        spawn(ws.send(json.dumps({"type": "act", "action": action, "seq": msg["seq"]})))

    async def _watch(self, ws: ClientConnection) -> None:
        # A move that got lost (a server that restarted, a backend away): ask again after 3 s.
        while True:
            await asyncio.sleep(1.0)
            msg = self.last
            if (
                self.act
                and not self.paused
                and msg is not None
                and msg.get("legal")
                and time.monotonic() - self.last_time > 3.0
            ):
                self.last_time = time.monotonic()
                self._answered = -1
                spawn(ws.send('{"type":"sync"}'))


async def open_socket(
    url: str, code: str, token: str | None = None, local: str | None = None, timeout: float = 10.0
) -> tuple[ClientConnection | None, Any, Any]:
    """(socket, 101, None), or (None, HTTP status or error name, response headers)."""
    target = f"{ws_base(url)}/ws/{code}" + (f"?token={token}" if token else "")
    try:
        ws = await connect(
            target, open_timeout=timeout, close_timeout=1, max_size=1 << 22,
            local_addr=(local, 0) if local else None,
        )  # fmt: skip
    except InvalidStatus as exc:
        return None, exc.response.status_code, exc.response.headers
    except (OSError, TimeoutError, InvalidHandshake) as exc:
        return None, type(exc).__name__, None
    return ws, 101, None


async def drain(ws: ClientConnection, tally: Tally, counts: Counter[str] | None = None) -> None:
    """Read a socket until it closes, counting messages; a close without a reason is a drop."""
    last = None
    try:
        async for raw in ws:
            text = raw if isinstance(raw, str) else raw.decode()
            last = "error" if '"type":"error"' in text[:40] else "other"
            if counts is not None:
                counts["messages"] += 1
                if '"type":"state"' in text[:40]:
                    counts["states"] += 1
    except ConnectionClosed:
        pass
    if not tally.expect_drops and ws.protocol.close_sent is None and is_drop(ws.protocol.close_rcvd, last):
        tally.drops += 1
        tally.sample("a spectator socket dropped")


async def close_all(sockets: Sequence[ClientConnection]) -> None:
    async def one(ws: ClientConnection) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(ws.close(), 2)

    for i in range(0, len(sockets), 200):
        await asyncio.gather(*(one(ws) for ws in sockets[i : i + 200]))


# ---- the server (and its Redis) as child processes ---------------------------------------------------------


class RedisProc:
    """A private redis-server on a free port, append-only with an fsync per write in its own
    directory: a kill -9 and a restart on the same port and directory is an outage, not a loss."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def _ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    async def start(self) -> None:
        exe = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.proc = subprocess.Popen(
            [exe, "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.workdir),
             "--save", "", "--appendonly", "yes", "--appendfsync", "always"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=_child_setup(None),
        )  # fmt: skip
        deadline = time.monotonic() + 15
        while not self._ping():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AttackError("redis-server did not start")
            await asyncio.sleep(0.05)

    def kill9(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


class ServerProc:
    """``python -m conflictology.cli serve`` on 127.0.0.1, a free port and a SQLite file in the
    attack's directory, logs to files there; restarts keep the port and the database."""

    def __init__(
        self,
        workdir: Path,
        src: str | None = None,
        serve_args: Sequence[str] = (),
        redis_url: str | None = None,
        nofile: int | None = None,
    ) -> None:
        self.workdir = workdir
        self.src = src
        self.serve_args = list(serve_args)
        self.redis_url = redis_url
        self.redis_prefix = f"attacks{random.getrandbits(32):08x}:"
        self.nofile = nofile
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.out = workdir / "server.out"
        self.err = workdir / "server.err"
        self.proc: subprocess.Popen[bytes] | None = None
        self.deaths = 0  # exits the tool did not cause
        self.starts = 0

    def command(self) -> list[str]:
        cmd = [sys.executable, "-m", "conflictology.cli", "serve", "--host", "127.0.0.1",
               "--port", str(self.port), "--db", f"sqlite:///{self.workdir / 'server.sqlite3'}"]  # fmt: skip
        if self.redis_url:
            cmd += ["--redis", self.redis_url, "--redis-prefix", self.redis_prefix]
        return cmd + self.serve_args

    def _check_death(self) -> None:
        if (
            self.proc is not None
            and self.proc.poll() is not None
            and not getattr(self.proc, "expected", False)
        ):
            self.deaths += 1
            self.proc.expected = True  # type: ignore[attr-defined]  # counted once

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    async def start(self, timeout: float = 60.0) -> float:
        """Start (or restart) and wait until /healthz answers; returns the seconds it took."""
        self._check_death()
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        if self.src:
            env["PYTHONPATH"] = self.src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        t0 = time.monotonic()
        with open(self.out, "ab") as out, open(self.err, "ab") as err:
            self.proc = subprocess.Popen(
                self.command(), stdout=out, stderr=err, env=env, preexec_fn=_child_setup(self.nofile)
            )
        self.starts += 1
        async with httpx.AsyncClient(timeout=2) as http:
            while time.monotonic() - t0 < timeout:
                if self.proc.poll() is not None:
                    raise AttackError(f"the server exited at start: {self.tail()}")
                with contextlib.suppress(httpx.HTTPError):
                    if (await http.get(f"{self.url}/healthz")).status_code == 200:
                        return time.monotonic() - t0
                await asyncio.sleep(0.1)
        raise AttackError("the server did not become healthy")

    async def stop(self, timeout: float = 20.0) -> tuple[float, bool]:
        """SIGTERM and wait; SIGKILL after ``timeout``. Returns (seconds, whether it had to be killed)."""
        self._check_death()
        if not self.running:
            return 0.0, False
        assert self.proc is not None
        self.proc.expected = True  # type: ignore[attr-defined]
        t0 = time.monotonic()
        self.proc.terminate()
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                return time.monotonic() - t0, False
            await asyncio.sleep(0.05)
        self.proc.kill()
        self.proc.wait(10)
        return time.monotonic() - t0, True

    def kill9(self) -> None:
        self._check_death()
        if self.running:
            assert self.proc is not None
            self.proc.expected = True  # type: ignore[attr-defined]
            self.proc.kill()
            self.proc.wait(10)

    def cpu(self) -> float:
        return cpu_seconds(self.proc.pid) if self.proc is not None else math.nan

    def logs(self) -> str:
        text = ""
        for path in (self.err, self.out):
            with contextlib.suppress(OSError):
                text += path.read_text(errors="replace")
        return text

    def tail(self, n: int = 600) -> str:
        with contextlib.suppress(OSError):
            return self.err.read_text(errors="replace")[-n:]
        return ""

    def log_size(self) -> tuple[int, int]:
        """(bytes, lines) of stderr so far."""
        try:
            data = self.err.read_bytes()
        except OSError:
            return 0, 0
        return len(data), data.count(b"\n")


class Probe:
    """The probe room, played by a child process (``--probe-child``) of this same file."""

    def __init__(self, url: str, workdir: Path, think: float, seed: int) -> None:
        self.url = url
        self.workdir = workdir
        self.think = think
        self.seed = seed
        self.proc: subprocess.Popen[str] | None = None
        self.code = ""

    async def start(self) -> None:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--probe-child", self.url,
               "--probe-think", str(self.think), "--seed", str(self.seed)]  # fmt: skip
        with open(self.workdir / "probe.err", "w") as err:
            self.proc = subprocess.Popen(
                cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
                preexec_fn=_die_with_parent,
            )  # fmt: skip
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(self.proc.stdout.readline), 90)
        if not line.startswith("ready "):
            raise AttackError(f"the probe did not start: {(self.workdir / 'probe.err').read_text()[-400:]}")
        self.code = line.split()[1]

    async def _ask(self, line: str) -> str:
        assert self.proc is not None and self.proc.stdin is not None and self.proc.stdout is not None
        if self.proc.poll() is not None:
            return ""
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return str(await asyncio.wait_for(asyncio.to_thread(self.proc.stdout.readline), 30))

    async def stats(self, windows: list[tuple[float, float]]) -> dict[str, Any]:
        line = await self._ask("stats " + json.dumps(windows))
        return dict(json.loads(line)) if line else {}

    async def expect_drops(self, expected: bool) -> None:
        """Before the tool stops or kills the server itself (answered once the child knows)."""
        await self._ask(f"expect {int(expected)}")

    def stop(self) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(Exception):
            assert self.proc.stdin is not None
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


def probe_figures(
    players: Sequence[Player], tally: Tally, windows: list[tuple[float, float]]
) -> dict[str, Any]:
    def inside(t: float) -> bool:
        return any(a <= t <= b for a, b in windows)

    answered = [lat for p in players for t, lat in p.latencies if inside(t)]
    waiting = [
        time.perf_counter() - p.pending[1] for p in players if p.pending is not None and inside(p.pending[2])
    ]
    every = answered + waiting
    errors: Counter[str] = Counter()
    for p in players:
        errors.update(p.errors)
    return {
        "moves": len(answered),
        "unanswered": len(waiting),
        "p50_ms": pct(every, 0.50) * 1000,
        "p99_ms": pct(every, 0.99) * 1000,
        "max_ms": max(every) * 1000 if every else math.nan,
        "errors": dict(errors),
        "drops": tally.drops,
        "server_errors": tally.server_errors,
        "leaks": tally.leaks,
        "reconnects": sum(max(0, p.sessions - 1) for p in players),
    }


async def probe_child(url: str, think: float, seed: int) -> None:
    tally = Tally()
    pool = HttpPool(url, tally)
    creator = Creator(pool, PROBE_ADDRESSES)
    table = await make_table(
        pool, creator, humans=2, settings={"timers": False}, names=["Probe A", "Probe B"]
    )
    await start_table(pool, table)
    players = [
        Player(url, table.code, token, tally, local=PROBE_ADDRESSES[i], think=think, seed=seed * 10 + i,
               on_over=auto_rematch(pool, table) if i == 0 else None).start()
        for i, token in enumerate(table.tokens)
    ]  # fmt: skip
    for p in players:
        await asyncio.wait_for(p.got_state.wait(), 30)
    print("ready", table.code, flush=True)
    while True:
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line or line.startswith("quit"):
            break
        if line.startswith("stats "):
            windows = [(float(a), float(b)) for a, b in json.loads(line[6:])]
            print(json.dumps(probe_figures(players, tally, windows)), flush=True)
        elif line.startswith("expect "):
            tally.expect_drops = line.split()[1] == "1"
            print("ok", flush=True)
    for p in players:
        await p.stop()
    await pool.aclose()


# ---- one attack's context and row --------------------------------------------------------------------------


@dataclass
class Row:
    attack: str
    attempts: int | None = None
    wrongly_accepted: int | None = None
    crashes: int = 0
    crash_detail: dict[str, int] = field(default_factory=dict)
    leaks: int = 0
    lost_moves: int | None = None
    probe_p50_ms: float = math.nan
    probe_p99_ms: float = math.nan
    probe_moves: int | None = None
    notes: str = ""
    figures: dict[str, Any] = field(default_factory=dict)
    failed: str | None = None


class Ctx:
    """What an attack works with: its server (and Redis), HTTP clients, the tally, the probe."""

    def __init__(
        self, args: argparse.Namespace, server: ServerProc, redis: RedisProc | None, probe: Probe | None
    ) -> None:
        self.args = args
        self.server = server
        self.redis = redis
        self.probe = probe
        self.tally = Tally()
        self.pool = HttpPool(server.url, self.tally)
        self.setup = Creator(self.pool, SETUP_ADDRESSES)
        self.rng = random.Random(args.seed)
        self.windows: list[tuple[float, float]] = []
        self.players: list[Player] = []
        self.sockets: list[ClientConnection] = []
        self.tokens: set[str] = set()
        self.probe_stats: dict[str, Any] | None = None

    @property
    def url(self) -> str:
        return self.server.url

    async def expect_drops(self, expected: bool) -> None:
        """The tool itself stops or kills the server: sockets closing now are not drops."""
        self.tally.expect_drops = expected
        if self.probe is not None:
            await self.probe.expect_drops(expected)

    async def read_probe(self) -> None:
        """The probe's figures over the windows so far (before an attack stops the server for good)."""
        if self.probe is not None and self.windows:
            self.probe_stats = await self.probe.stats(self.windows)

    def win(self, default: float) -> float:
        """An attack's main window: its default, or --duration for all."""
        return float(self.args.duration) if self.args.duration else default

    @contextlib.asynccontextmanager
    async def measuring(self) -> Any:
        """The probe's p50/p99 are read over these windows."""
        t0 = time.time()
        try:
            yield
        finally:
            self.windows.append((t0, time.time()))

    async def table(self, **kw: Any) -> Table:
        t = await make_table(self.pool, kw.pop("creator", self.setup), **kw)
        self.tokens.update(t.tokens)
        return t

    def player(self, code: str, token: str | None, **kw: Any) -> Player:
        p = Player(self.url, code, token, self.tally, **kw).start()
        self.players.append(p)
        return p

    async def healthz(self, stop: asyncio.Event, every: float, into: list[float]) -> Counter[str]:
        """/healthz latency (ms) every ``every`` seconds until ``stop``; returns the bodies seen."""
        bodies: Counter[str] = Counter()
        while not stop.is_set():
            t0 = time.perf_counter()
            r = await self.pool.request("GET", "/healthz", MONITOR_ADDRESS)
            into.append((time.perf_counter() - t0) * 1000)
            if r is None:
                bodies["no answer"] += 1
            else:
                body = re.sub(r'"time":\s*[0-9.e+-]+', '"time":…', r.text)[:120]
                bodies[f"{r.status_code} {body}"] += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every)
        return bodies

    async def close(self) -> None:
        for p in self.players:
            with contextlib.suppress(Exception):
                await p.stop()
        await close_all(self.sockets)
        await self.pool.aclose()


# ---- 1. bots -----------------------------------------------------------------------------------------------


async def _bot_moves(host: Player, seconds: float) -> int:
    """Moves the room's bots made in ``seconds``, seen by its (connected, playing) host: the seq's
    advance minus the host's own answered moves."""
    seq0, own0 = host.last_seq, host.moves
    await asyncio.sleep(seconds)
    return max(0, (host.last_seq - seq0) - (host.moves - own0))


async def attack_bots(ctx: Ctx) -> Row:
    window = ctx.win(15.0)
    pool = ctx.pool
    # The room that shows what the attack does to everyone's bots: its moves are counted before the
    # attack (the baseline), during it, and after a SIGTERM and a restart.
    victim = await ctx.table(bots=5, level="random")
    await start_table(pool, victim)
    # (A finished game is followed by a rematch: the room's moves are counted over several games.)
    rematch = auto_rematch(pool, victim)
    host = ctx.player(victim.code, victim.tokens[0], local=victim.homes[0], on_over=rematch)
    await asyncio.wait_for(host.got_state.wait(), 30)
    baseline = await _bot_moves(host, window)
    log(f"  bots: a room of 5 random bots made {baseline} moves in {window:g} s before the attack")
    creator = Creator(pool, [attacker(1, i) for i in range(4)])
    attempts = accepted = 0
    for _ in range(6):
        t = await ctx.table(creator=creator, options={"first_player": 1})
        for _ in range(4):
            r = await pool.request(
                "POST", f"/api/rooms/{t.code}/bots", t.addrs[0], token=t.tokens[0],
                json={"count": 1, "level": EVIL_LEVEL},
            )  # fmt: skip
            attempts += 1
            accepted += r is not None and r.status_code == 201
        await pool.request("POST", f"/api/rooms/{t.code}/start", t.addrs[0], token=t.tokens[0])
    log(f"  bots: {accepted}/{attempts} unbounded bot levels accepted")
    await asyncio.sleep(2.0)
    stop = asyncio.Event()
    healthz: list[float] = []
    sampler = spawn(ctx.healthz(stop, 0.5, healthz))
    cpu0, t0 = ctx.server.cpu(), time.monotonic()
    async with ctx.measuring():
        moves = await _bot_moves(host, window)
    cpu = (ctx.server.cpu() - cpu0) / (time.monotonic() - t0)
    stop.set()
    await sampler
    log(f"  bots: victim room's bots made {moves} moves in {window:g} s; SIGTERM")
    await ctx.read_probe()
    await ctx.expect_drops(True)
    term_s, killed = await ctx.server.stop(timeout=20.0)
    await ctx.server.start()
    await ctx.expect_drops(False)
    for _ in range(100):
        if host.sessions >= 2 and host.open:
            break
        await asyncio.sleep(0.2)
    await asyncio.sleep(1.0)
    moves_after = await _bot_moves(host, window)
    term = f">{term_s:.0f} s, killed" if killed else f"{term_s:.1f} s"
    return Row(
        "bots",
        attempts=attempts,
        wrongly_accepted=accepted,
        notes=(
            f"unbounded levels accepted {accepted}/{attempts} in 6 rooms; a room of 5 random bots made "
            f"{moves} moves in {window:g} s ({baseline} before the attack), {moves_after} after SIGTERM "
            f"and a restart on the same database; /healthz p50 {fmt(pct(healthz, 0.5))} ms, max "
            f"{fmt(max(healthz, default=math.nan))} ms; server CPU {cpu * 100:.0f}% of a core; SIGTERM "
            f"exit {term}"
        ),
        figures={"accepted": accepted, "baseline_moves": baseline, "moves": moves,
                 "moves_after_restart": moves_after,
                 "healthz_p50_ms": pct(healthz, 0.5), "healthz_max_ms": max(healthz, default=math.nan),
                 "cpu_share": cpu, "sigterm_seconds": term_s, "sigterm_killed": killed},
    )  # fmt: skip


async def attack_bots_hard(ctx: Ctx) -> Row:
    window = ctx.win(20.0)
    rooms = ctx.args.hard_rooms
    r = await ctx.pool.request("GET", "/api/info", MONITOR_ADDRESS)
    offered = list(r.json().get("bots", [])) if r is not None and r.status_code == 200 else []
    level = next((lv for lv in ("hard", "normal") if lv in offered), offered[-1] if offered else "hard")
    gate = asyncio.Semaphore(8)

    async def one() -> Table:
        async with gate:
            # The host never connects: with a grace of 0 s a stand-in bot plays the seat at once.
            t = await ctx.table(bots=3, level=level, settings={"grace_seconds": 0})
            await start_table(ctx.pool, t)
            return t

    tables = await asyncio.gather(*(one() for _ in range(rooms)))
    counts: Counter[str] = Counter()
    for t in tables:
        ws, _, _ = await open_socket(ctx.url, t.code, local=t.homes[15])  # a watcher of the room's moves
        if ws is not None:
            ctx.sockets.append(ws)
            spawn(drain(ws, ctx.tally, counts))
    log(f"  bots-hard: {rooms} rooms of '{level}' bots playing")
    await asyncio.sleep(2.0)
    states0, cpu0, t0 = counts["states"], ctx.server.cpu(), time.monotonic()
    async with ctx.measuring():
        await asyncio.sleep(window)
    elapsed = time.monotonic() - t0
    states = counts["states"] - states0
    cpu = (ctx.server.cpu() - cpu0) / elapsed
    await ctx.read_probe()
    await ctx.expect_drops(True)
    term_s, killed = await ctx.server.stop(timeout=20.0)
    term = f">{term_s:.0f} s, killed" if killed else f"{term_s:.1f} s"
    return Row(
        "bots-hard",
        attempts=rooms,
        notes=(
            f"{rooms} rooms of 3 '{level}' bots + a stand-in: {states / elapsed:.1f} moves/s; server CPU "
            f"{cpu * 100:.0f}% of a core; SIGTERM exit {term}"
        ),
        figures={"level": level, "moves_per_s": states / elapsed, "cpu_share": cpu,
                 "sigterm_seconds": term_s, "sigterm_killed": killed},
    )  # fmt: skip


# ---- 2. guessing room codes --------------------------------------------------------------------------------


class RawHttp:
    """A bare HTTP/1.1 keep-alive connection: an attacker's guesses cost it almost nothing."""

    def __init__(self, host: str, port: int, local: str) -> None:
        self.host, self.port, self.local = host, port, local
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def get(self, path: str, timeout: float = 10.0) -> tuple[int, dict[str, str], bytes]:
        if self.writer is None or self.reader is None:
            self.reader, self.writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, self.port, local_addr=(self.local, 0)), timeout
            )
        writer = self.writer
        assert writer is not None
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n\r\n".encode())
        try:
            return await asyncio.wait_for(self._response(), timeout)
        except BaseException:
            self.close()
            raise

    async def _response(self) -> tuple[int, dict[str, str], bytes]:
        assert self.reader is not None
        line = await self.reader.readline()
        if not line:
            raise ConnectionError("closed")
        status = int(line.split()[1])
        headers: dict[str, str] = {}
        while True:
            h = await self.reader.readline()
            if h in (b"\r\n", b"\n", b""):
                break
            k, _, v = h.decode("latin-1").partition(":")
            headers[k.strip().lower()] = v.strip()
        if "content-length" in headers:
            body = await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int((await self.reader.readline()).strip().split(b";")[0], 16)
                body += await self.reader.readexactly(size + 2)
                if size == 0:
                    break
        else:
            body = await self.reader.read()
            self.close()
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, headers, body

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


def chance_in_a_day(rate_per_second: float, live_rooms: int, space: int) -> float:
    """P(at least one hit) in a day of uniform random guesses at ``rate_per_second``, with
    ``live_rooms`` of ``space`` codes taken: 1 − (1 − rooms/space)^(rate·86,400)."""
    tries = rate_per_second * 86_400
    return -math.expm1(tries * math.log1p(-live_rooms / space)) if tries > 0 else 0.0


async def attack_guessing(ctx: Ctx) -> Row:
    window = ctx.win(15.0)
    wanted = ctx.args.guess_rooms
    t0 = time.monotonic()
    deadline = t0 + ctx.args.create_budget
    codes: list[str] = []
    gate = asyncio.Semaphore(16)

    async def one() -> None:
        async with gate:
            if time.monotonic() > deadline:
                return
            made = await ctx.setup.create({"game": "capitol", "name": "Host"}, deadline)
            if made is not None:
                codes.append(made[0])
                ctx.tokens.add(made[1])

    await asyncio.gather(*(one() for _ in range(wanted)))
    create_s = time.monotonic() - t0
    if not codes:
        raise AttackError("no room could be created")
    length = len(codes[0])
    alphabet = "".join(sorted(set(CODE_ALPHABET) | {c for code in codes for c in code}))
    space = len(alphabet) ** length
    log(f"  guessing: {len(codes)} live rooms in {create_s:.0f} s from {len(ctx.setup.used)} addresses; "
        f"guessing {length}-letter codes for {window:g} s")  # fmt: skip
    host, port = "127.0.0.1", ctx.server.port
    guesser = attacker(3, 0)
    per_second: list[Counter[str]] = [Counter() for _ in range(int(window) + 2)]
    found: set[str] = set()
    rng = random.Random(ctx.args.seed)
    start = time.monotonic()
    end = start + window

    async def worker() -> None:
        conn = RawHttp(host, port, guesser)
        while time.monotonic() < end:
            code = "".join(rng.choice(alphabet) for _ in range(length))
            slot = per_second[min(len(per_second) - 1, int(time.monotonic() - start))]
            try:
                status, headers, body = await conn.get(f"/api/rooms/{code}")
            except (OSError, TimeoutError, ValueError, IndexError, asyncio.IncompleteReadError):
                slot["no answer"] += 1
                ctx.tally.no_answer += 1
                await asyncio.sleep(0.05)
                continue
            slot[str(status)] += 1
            ctx.tally.http(status, headers, "GET /api/rooms/{code}")
            if status == 200:
                found.add(code)
                if b'"token"' in body:
                    ctx.tally.leaks += 1
            elif status in (429, 503):
                # The attacker waits as told only up to 1 s (and hammers otherwise).
                retry = headers.get("retry-after", "")
                await asyncio.sleep(min(1.0, float(retry)) if retry.replace(".", "", 1).isdigit() else 0.01)
        conn.close()

    cpu0 = ctx.server.cpu()
    async with ctx.measuring():
        await asyncio.gather(*(worker() for _ in range(ctx.args.guess_connections)))
    elapsed = time.monotonic() - start
    cpu = (ctx.server.cpu() - cpu0) / elapsed
    total: Counter[str] = Counter()
    for c in per_second:
        total.update(c)
    guesses = sum(total.values())
    answered = sum(n for k, n in total.items() if k not in ("429", "503", "no answer"))
    # The sustained rate: answered guesses (a 429 tells nothing) per second over the second half.
    half = per_second[int(window) // 2 : int(window)]
    sustained = sum(sum(n for k, n in c.items() if k not in ("429", "503", "no answer")) for c in half) / max(
        1, len(half)
    )
    chance = chance_in_a_day(sustained, LIVE_ROOMS, space)
    expected = sustained * 86_400 * LIVE_ROOMS / space
    return Row(
        "guessing",
        attempts=guesses,
        wrongly_accepted=len(found),
        notes=(
            f"{len(codes)} live rooms (made in {create_s:.0f} s from {len(ctx.setup.used)} addresses); "
            f"{guesses:,} guesses in {elapsed:.0f} s from 1 address ({guesses / elapsed:,.0f}/s), found "
            f"{len(found)}, 429 {total['429']:,}, 503 {total['503']:,}; sustained {sustained:,.1f} "
            f"answered/s → P(find one of {LIVE_ROOMS:,} rooms in a day) = {chance:.3g} "
            f"({len(alphabet)}^{length} codes; {expected:,.3g} finds a day expected); server CPU "
            f"{cpu * 100:.0f}% of a core"
        ),
        figures={"live_rooms": len(codes), "guesses": guesses, "answered": answered, "found": len(found),
                 "status": dict(total), "guesses_per_s": guesses / elapsed, "sustained_per_s": sustained,
                 "code_space": space, "chance_per_day": chance, "finds_per_day": expected, "cpu_share": cpu},
    )  # fmt: skip


# ---- 3. slow clients ---------------------------------------------------------------------------------------


async def attack_slowloris(ctx: Ctx) -> Row:
    """N slow connections kept up for the whole window: each sends a header line every 5 s and is
    opened again 0.5 s after the server closes it (as a slowloris tool does)."""
    hold = ctx.win(40.0)
    n = ctx.args.slow_conns
    every = 5.0
    addresses = [attacker(4, i) for i in range(max(1, math.ceil(n / 100)))]
    host, port = "127.0.0.1", ctx.server.port
    opens = 0
    lifetimes: list[float] = []  # of the connections the server closed
    alive: dict[int, float] = {}  # slot → when its connection opened
    outcomes: Counter[str] = Counter()
    stop = asyncio.Event()
    gate = asyncio.Semaphore(100)
    lines_before = ctx.server.log_size()[1]

    async def slot(i: int) -> None:
        nonlocal opens
        while not stop.is_set():
            async with gate:
                try:
                    reader, writer = await asyncio.wait_for(
                        asyncio.open_connection(host, port, local_addr=(addresses[i % len(addresses)], 0)), 5
                    )
                    writer.write(f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\n".encode())
                    await writer.drain()
                except (OSError, TimeoutError):
                    outcomes["connect failed"] += 1
                    await asyncio.sleep(0.5)
                    continue
            opens += 1
            t0 = alive[i] = time.monotonic()
            k = 0
            try:
                while not stop.is_set():
                    try:
                        data = await asyncio.wait_for(reader.read(4096), every)
                    except TimeoutError:
                        k += 1
                        writer.write(f"X-Slow-{k}: {k}\r\n".encode())
                        await asyncio.wait_for(writer.drain(), 5)
                        continue
                    outcomes["answered" if data else "closed"] += 1
                    lifetimes.append(time.monotonic() - t0)
                    break
            except (OSError, TimeoutError):
                outcomes["reset"] += 1
                lifetimes.append(time.monotonic() - t0)
            finally:
                alive.pop(i, None)
                writer.close()
            await asyncio.sleep(0.5)

    fresh: Counter[str] = Counter()

    async def fresh_requests() -> None:
        # New clients arriving while the slow ones are held: a page load and a spectator socket.
        while not stop.is_set():
            try:
                async with httpx.AsyncClient(timeout=3) as http:
                    r = await http.get(f"{ctx.url}/healthz")
                fresh["http ok" if r.status_code == 200 else "http failed"] += 1
            except httpx.HTTPError:
                fresh["http failed"] += 1
            ws, _, _ = await open_socket(ctx.url, ctx.probe.code if ctx.probe else "XXXXX", timeout=3)
            if ws is not None:
                fresh["ws ok"] += 1
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(ws.close(), 2)
            else:
                fresh["ws failed"] += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 1.0)

    start = time.monotonic()
    ramp = min(5.0, hold / 4)
    tasks = [asyncio.ensure_future(slot(i)) for i in range(n)]
    async with ctx.measuring():
        await asyncio.sleep(ramp)
        monitor = spawn(fresh_requests())
        await asyncio.sleep(max(1.0, hold - (time.monotonic() - start)))
    now = time.monotonic()
    held = len(alive)
    whole = sum(1 for t0 in alive.values() if t0 - start <= ramp)  # opened in the ramp, never closed
    stop.set()
    await monitor
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    lines = ctx.server.log_size()[1] - lines_before
    failed = fresh["http failed"] + fresh["ws failed"]
    tried = failed + fresh["http ok"] + fresh["ws ok"]
    closed = outcomes["closed"] + outcomes["answered"] + outcomes["reset"]
    return Row(
        "slowloris",
        attempts=opens,
        wrongly_accepted=whole,
        notes=(
            f"{n:,} slow connections kept up for {now - start:.0f} s from {len(addresses)} addresses (server "
            f"soft limit 1,024 files): {opens:,} opened, {held:,} open at the end, {whole:,} of them since "
            f"the ramp; the server closed {closed:,} (lifetime p50 {fmt(pct(lifetimes, 0.5), 1)} s, max "
            f"{fmt(max(lifetimes, default=math.nan), 1)} s); new requests meanwhile failed {failed}/{tried} "
            f"(HTTP {fresh['http failed']}, WebSocket {fresh['ws failed']}); server log +{lines} lines"
        ),
        figures={"opens": opens, "held": held, "held_whole": whole, "outcomes": dict(outcomes),
                 "lifetime_p50_s": pct(lifetimes, 0.5), "fresh": dict(fresh), "log_lines": lines},
    )  # fmt: skip


# ---- 4. spectators -----------------------------------------------------------------------------------------


async def attack_spectators(ctx: Ctx) -> Row:
    """A listed room filled with spectators, then a player's dropped socket: is it admitted back?"""
    grace = 3.0
    t = await ctx.table(humans=2, settings={"public": True, "grace_seconds": grace})
    await start_table(ctx.pool, t)
    players = [ctx.player(t.code, tok, local=t.homes[i], think=0.5) for i, tok in enumerate(t.tokens)]
    for p in players:
        await asyncio.wait_for(p.got_state.wait(), 30)
    addrs = [attacker(5, i) for i in range(8)]
    r = await ctx.pool.request("GET", "/api/rooms", addrs[0])
    listed = r is not None and r.status_code == 200 and t.code in r.text
    admitted = refused = tried = 0
    refusals: Counter[Any] = Counter()
    async with ctx.measuring():
        while refused < 5 and tried < ctx.args.max_spectators:
            batch = await asyncio.gather(
                *(open_socket(ctx.url, t.code, local=addrs[(tried + k) % len(addrs)]) for k in range(20))
            )
            for ws, status, _ in batch:
                tried += 1
                if ws is not None:
                    admitted += 1
                    ctx.sockets.append(ws)
                    spawn(drain(ws, ctx.tally))
                else:
                    refused += 1
                    refusals[status] += 1
        log(f"  spectators: {admitted} spectators admitted before {refused} refusals ({dict(refusals)})")
        # The second player's socket drops; an attacker's spectator reaches for the freed slot.
        dropped = players[1]
        await dropped.stop()
        await asyncio.sleep(0.3)
        took = 0
        for k in range(3):
            ws, status, _ = await open_socket(ctx.url, t.code, local=addrs[k])
            if ws is not None:
                took += 1
                ctx.sockets.append(ws)
                spawn(drain(ws, ctx.tally))
        outcomes: list[Any] = []
        back: ClientConnection | None = None
        for _ in range(5):
            ws, status, _ = await open_socket(ctx.url, t.code, token=t.tokens[1], local=t.homes[1])
            outcomes.append(status)
            if ws is not None:
                back = ws
                break
            await asyncio.sleep(1.0)
        await asyncio.sleep(max(0.0, grace + 1.0 - len(outcomes)))
        r = await ctx.pool.request("GET", f"/api/rooms/{t.code}", addrs[0])
        afk = bool(r is not None and r.status_code == 200 and r.json()["seats"][1].get("afk"))
        if back is not None:
            ctx.sockets.append(back)
    admitted_back = sum(1 for s in outcomes if s == 101)
    return Row(
        "spectators",
        attempts=tried + 3,
        wrongly_accepted=took,
        notes=(
            f"public room {'found in' if listed else 'not in'} GET /api/rooms; {admitted} spectator sockets "
            f"admitted, then refused {dict(refusals)}; a player's socket dropped: spectators took {took}/3 "
            f"freed slots; the player's reconnects: {', '.join(map(str, outcomes))} "
            f"({'admitted' if admitted_back else 'never admitted'}); a bot took the seat: "
            f"{'yes' if afk else 'no'}"
        ),
        figures={"admitted": admitted, "refusals": {str(k): v for k, v in refusals.items()}, "took": took,
                 "reconnects": [str(s) for s in outcomes], "bot_took_seat": afk, "listed": listed},
    )  # fmt: skip


async def attack_sync_flood(ctx: Ctx) -> Row:
    """200 spectator sockets from one address asking for the state again and again."""
    window = ctx.win(10.0)
    n = ctx.args.sync_sockets
    addr = attacker(6, 0)
    # A playing room that does not move (the host's turn, never connected, no clocks): every state a
    # spectator receives answers one of its syncs.
    settings = {"public": True, "timers": False, "grace_seconds": 3600}
    sockets: list[ClientConnection] = []
    rooms = 0
    refusals: Counter[Any] = Counter()
    while len(sockets) < n and rooms < 5:
        t = await ctx.table(bots=1, level="random", settings=settings, options={"first_player": 0})
        await start_table(ctx.pool, t)
        rooms += 1
        while len(sockets) < n:
            batch = await asyncio.gather(
                *(open_socket(ctx.url, t.code, local=addr) for _ in range(min(20, n - len(sockets))))
            )
            ok = [ws for ws, _, _ in batch if ws is not None]
            for _, status, _ in batch:
                if status != 101:
                    refusals[status] += 1
            sockets.extend(ok)
            if len(ok) < len(batch):
                break
    ctx.sockets.extend(sockets)
    counts: Counter[str] = Counter()
    end = 0.0

    depth = ctx.args.sync_depth

    async def spam(ws: ClientConnection) -> None:
        # Up to `depth` syncs in flight on each socket: sent again as soon as an answer (or a
        # refusal) comes back; a socket without an answer for 1 s sends anyway.
        credits = asyncio.Semaphore(depth)

        async def read() -> None:
            async for raw in ws:
                head = (raw if isinstance(raw, str) else raw.decode())[:40]
                if '"type":"state"' in head or '"type":"lobby"' in head:
                    counts["answered"] += 1
                elif '"type":"error"' in head:
                    counts["refused"] += 1
                else:
                    counts["other"] += 1
                credits.release()

        try:
            await asyncio.wait_for(ws.recv(), 10)  # the state on connecting
        except (TimeoutError, ConnectionClosed):
            counts["no first state"] += 1
            return
        reader = asyncio.ensure_future(read())
        try:
            while time.monotonic() < end and not reader.done():
                try:
                    await asyncio.wait_for(credits.acquire(), 1.0)
                except TimeoutError:
                    counts["stalled"] += 1
                await ws.send('{"type":"sync"}')
                counts["sent"] += 1
            with contextlib.suppress(TimeoutError, ConnectionClosed):
                await asyncio.wait_for(asyncio.shield(reader), 1.0)  # the last answers
        except ConnectionClosed:
            pass
        finally:
            reader.cancel()
            with contextlib.suppress(BaseException):
                await reader
        if ws.protocol.close_rcvd is not None or ws.protocol.state.name == "CLOSED":
            counts["closed"] += 1
            if not ctx.tally.expect_drops and is_drop(ws.protocol.close_rcvd, None):
                ctx.tally.drops += 1

    log(f"  sync-flood: {len(sockets)} spectators in {rooms} room(s); flooding for {window:g} s")
    cpu0 = ctx.server.cpu()
    async with ctx.measuring():
        end = time.monotonic() + window
        await asyncio.gather(*(spam(ws) for ws in sockets))
    cpu = (ctx.server.cpu() - cpu0) / window
    allowance = 60 + 20 * window  # docs/protocol.md's per-socket limit, held per address
    over = max(0, counts["answered"] - int(allowance))
    return Row(
        "sync-flood",
        attempts=counts["sent"],
        wrongly_accepted=over,
        notes=(
            f"{len(sockets)} spectator sockets from 1 address in {rooms} room(s) (refused {dict(refusals)}); "
            f"{counts['sent']:,} syncs in {window:g} s ({depth} in flight per socket), answered "
            f"{counts['answered']:,}, refused {counts['refused']:,}, sockets closed {counts['closed']}; "
            f"wrongly accepted: answers beyond 20/s + 60 for the address; server CPU {cpu * 100:.0f}%"
        ),
        figures={"sockets": len(sockets), "rooms": rooms, **counts, "cpu_share": cpu},
    )


# ---- 5. room floods and the room list ----------------------------------------------------------------------


async def attack_room_flood(ctx: Ctx) -> Row:
    window = ctx.win(60.0)
    fetch_window = ctx.win(10.0)
    addr = attacker(7, 0)
    statuses: Counter[str] = Counter()
    end = time.monotonic() + window

    async def creator() -> None:
        while time.monotonic() < end:
            r = await ctx.pool.request(
                "POST",
                "/api/rooms",
                addr,
                json={"game": "capitol", "name": "Flood", "settings": {"public": True}},
            )
            statuses[str(r.status_code) if r is not None else "no answer"] += 1
            if r is not None and r.status_code == 201:
                ctx.tokens.add(r.json()["token"])
            else:
                await asyncio.sleep(0.05)

    async with ctx.measuring():
        await asyncio.gather(*(creator() for _ in range(4)))
    created = statuses["201"]
    log(f"  room-flood: {created} rooms created in {window:g} s from one address")
    sizes, times, listed = [], [], 0
    for _ in range(3):
        t0 = time.perf_counter()
        r = await ctx.pool.request("GET", "/api/rooms", attacker(7, 1))
        times.append((time.perf_counter() - t0) * 1000)
        if r is not None:
            sizes.append(len(r.content) / 1024)
            with contextlib.suppress(ValueError, KeyError):
                listed = len(r.json()["rooms"])
    stop = asyncio.Event()
    healthz: list[float] = []
    fetches = Counter[str]()

    async def fetcher(i: int) -> None:
        while not stop.is_set():
            r = await ctx.pool.request("GET", "/api/rooms", attacker(7, 2 + i))
            fetches[str(r.status_code) if r is not None else "no answer"] += 1

    async with ctx.measuring():
        sampler = spawn(ctx.healthz(stop, 0.2, healthz))
        tasks = [spawn(fetcher(i)) for i in range(16)]
        await asyncio.sleep(fetch_window)
        stop.set()
        await asyncio.gather(sampler, *tasks, return_exceptions=True)
    return Row(
        "room-flood",
        attempts=sum(statuses.values()),
        notes=(
            f"one address created {created:,} rooms in {window:g} s (429: {statuses['429']:,}); GET "
            f"/api/rooms: {fmt(statistics.median(sizes) if sizes else math.nan)} KB, {listed:,} rooms, "
            f"{fmt(statistics.median(times))} ms; 16 clients fetching it: {sum(fetches.values()):,} "
            f"fetches in {fetch_window:g} s, /healthz p50 {fmt(pct(healthz, 0.5))} ms, p99 "
            f"{fmt(pct(healthz, 0.99))} ms"
        ),
        figures={"created": created, "status": dict(statuses), "listed": listed,
                 "list_kb": statistics.median(sizes) if sizes else None, "list_ms": statistics.median(times),
                 "fetches": dict(fetches),
                 "healthz_p50_ms": pct(healthz, 0.5), "healthz_p99_ms": pct(healthz, 0.99)},
    )  # fmt: skip


# ---- 6. kill -9 --------------------------------------------------------------------------------------------


@dataclass
class Kill9Result:
    """Over ``kills`` kill -9s of a server with ``rooms`` rooms playing: each room checked after
    each restart against every state its players had seen."""

    kills: int
    rooms: int
    room_checks: int = 0
    lost_seen_moves: int = 0  # seen seqs the room no longer reaches (summed over checks)
    rooms_with_lost_moves: int = 0  # checks where a seen move was lost or replaced
    divergent_rooms: int = 0  # checks where a different move took the place of a seen one
    moves: int = 0  # moves the scripted players made
    restart_seconds: list[float] = field(default_factory=list)
    details: list[str] = field(default_factory=list)


def _lost(seen_seq: int, seen_log: list[Any], now_seq: int, now_log: list[Any]) -> tuple[int, bool]:
    """(seen moves lost, whether a different move took a seen one's place). A seen move is lost
    when the room's seq is now below the one seen, or the log seen is not a prefix of the log now;
    it was replaced when the two logs differ where both have entries."""
    divergent = any(a != b for a, b in zip(seen_log, now_log, strict=False))
    lost = max(0, seen_seq - now_seq)
    if lost == 0 and now_log[: len(seen_log)] != seen_log:
        lost = 1  # the seq caught up, but not with the moves seen
    return lost, divergent


async def _check_room(
    url: str, pool: HttpPool, table: Table, seen: list[dict[Any, tuple[int, int, list[Any]]]]
) -> tuple[int, bool, str]:
    """Compare what the room's players saw before the kill with the room now (its host's first
    message on a new socket), or with the archived game when the game seen is no longer the
    room's current one."""
    now: dict[str, Any] | None = None
    ws, status, _ = await open_socket(url, table.code, token=table.tokens[0], local=table.homes[15])
    if ws is None:
        return 0, False, f"{table.code}: host refused ({status})"
    try:
        now = json.loads(await asyncio.wait_for(ws.recv(), 10))
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(ws.close(), 2)
    now_game = (now.get("room") or {}).get("game_id")
    lost, divergent, notes = 0, False, []
    for per_seat in seen:
        for game_id, (first, seq, entries) in per_seat.items():
            if game_id is None:
                continue
            if now.get("type") == "state" and game_id == now_game:
                n, d = _lost(seq, entries, int(now["seq"]), list(now["view"].get("log") or []))
            else:
                # A private room's finished game is read with one of its players' tokens.
                r = await pool.request(
                    "GET", f"/api/games/{game_id}", table.addrs[0], token=table.tokens[0]
                )
                if r is None or r.status_code != 200:
                    n, d = seq - first + 1, False  # the game seen is gone, with every move seen of it
                    notes.append(f"GET /api/games/{str(game_id)[:8]}: {r.status_code if r else 'no answer'}")
                else:
                    record = r.json()
                    last = max((a["seq"] for a in record.get("actions", [])), default=-1)
                    if record.get("status") != "over":
                        last = seq  # a live replay has no seq: only the log is compared
                    n, d = _lost(seq, entries, last, list(record.get("log") or []))
            note = f"{table.code} game {str(game_id)[:8]}: seen seq {seq}, lost {n}, replaced {d}"
            if (n or d) and note not in notes:
                notes.append(note)
            lost = max(lost, n)
            divergent = divergent or d
    return lost, divergent, "; ".join(notes)


async def kill9_rounds(
    server: ServerProc,
    pool: HttpPool,
    tally: Tally,
    kills: int,
    rooms: int,
    rng: random.Random,
    play_seconds: tuple[float, float] = (0.5, 2.5),
    tokens: set[str] | None = None,
    expect_drops: Callable[[bool], Awaitable[None]] | None = None,
) -> Kill9Result:
    creator = Creator(pool, SETUP_ADDRESSES)
    result = Kill9Result(kills=kills, rooms=rooms)
    tables: list[Table] = []
    players: list[list[Player]] = []
    try:
        delay = 0.05
        for _ in range(rooms):
            # Fast bots and fast players, so a kill lands among many moves in flight (a server that
            # sets a floor to a room's bot delay gets its floor).
            try:
                t = await make_table(
                    pool, creator, humans=2, bots=2, level="random", settings={"bot_delay": delay}
                )
            except AttackError as exc:
                if "bot_delay" not in str(exc) or delay == 0.2:
                    raise
                delay = 0.2
                t = await make_table(
                    pool, creator, humans=2, bots=2, level="random", settings={"bot_delay": delay}
                )
            await start_table(pool, t)
            if tokens is not None:
                tokens.update(t.tokens)
            tables.append(t)
            players.append([
                Player(server.url, t.code, tok, tally, local=t.homes[i], think=0.03, seed=rng.getrandbits(32),
                       record_seen=True, on_over=auto_rematch(pool, t) if i == 0 else None).start()
                for i, tok in enumerate(t.tokens)
            ])  # fmt: skip
        for p in (p for ps in players for p in ps):
            await asyncio.wait_for(p.got_state.wait(), 30)
        for k in range(kills):
            await asyncio.sleep(rng.uniform(*play_seconds))
            tally.expect_drops = True
            if expect_drops is not None:
                await expect_drops(True)
            server.kill9()
            # The kernel closes every socket of the dead process; what the clients read until then
            # was seen.
            every = [p for ps in players for p in ps]
            deadline = time.monotonic() + 5
            while any(p.open for p in every) and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            for p in every:
                p.paused = True
            seen = [[dict(p.seen) for p in ps] for ps in players]
            for p in every:
                p.seen.clear()
            result.restart_seconds.append(await server.start())
            for t, s in zip(tables, seen, strict=True):
                lost, divergent, note = await _check_room(server.url, pool, t, s)
                result.room_checks += 1
                result.lost_seen_moves += lost
                result.rooms_with_lost_moves += bool(lost or divergent)
                result.divergent_rooms += divergent
                if note:
                    result.details.append(f"kill {k + 1}: {note}")
            tally.expect_drops = False
            if expect_drops is not None:
                await expect_drops(False)
            for p in every:
                p.resume()
            log(f"  kill9: kill {k + 1}/{kills}: {result.rooms_with_lost_moves} checks lost a move so far")
    finally:
        result.moves = sum(p.sent for ps in players for p in ps)
        for ps in players:
            for p in ps:
                await p.stop()
    return result


def kill9(
    kills: int = 3,
    rooms: int = 8,
    *,
    server_src: str | None = None,
    serve_args: Sequence[str] = (),
    seed: int = 0,
    redis: bool = False,
    play_seconds: tuple[float, float] = (0.5, 2.5),
) -> Kill9Result:
    """The kill -9 attack on a server of its own (``server_src``: a ``src`` directory to run the
    server from; default: where this interpreter finds ``conflictology``, so a test measures the
    code it imports). For a test: ``assert kill9(kills=5).lost_seen_moves == 0``."""
    if server_src is None:
        spec = importlib.util.find_spec("conflictology")  # found, not imported: the tool stays outside
        if spec is not None and spec.origin is not None:
            server_src = str(Path(spec.origin).resolve().parent.parent)

    async def main() -> Kill9Result:
        workdir = Path(tempfile.mkdtemp(prefix="cfy-kill9-"))
        redis_proc = RedisProc(workdir) if redis else None
        server = ServerProc(workdir, server_src, serve_args, redis_proc.url if redis_proc else None)
        tally = Tally()
        pool = HttpPool(server.url, tally)
        try:
            if redis_proc is not None:
                await redis_proc.start()
            await server.start()
            return await kill9_rounds(server, pool, tally, kills, rooms, random.Random(seed), play_seconds)
        finally:
            await pool.aclose()
            await server.stop()
            if redis_proc is not None:
                redis_proc.stop()
            shutil.rmtree(workdir, ignore_errors=True)

    return asyncio.run(main())


async def attack_kill9(ctx: Ctx) -> Row:
    async with ctx.measuring():
        result = await kill9_rounds(
            ctx.server,
            ctx.pool,
            ctx.tally,
            ctx.args.kills,
            ctx.args.kill_rooms,
            ctx.rng,
            tokens=ctx.tokens,
            expect_drops=ctx.probe.expect_drops if ctx.probe is not None else None,
        )
    restart = statistics.median(result.restart_seconds) if result.restart_seconds else math.nan
    return Row(
        "kill9",
        attempts=result.kills,
        lost_moves=result.lost_seen_moves,
        notes=(
            f"{result.rooms} rooms × {result.kills} kill -9s: {result.room_checks} room checks, "
            f"{result.rooms_with_lost_moves} with a seen move lost, {result.divergent_rooms} of them with a "
            f"different move in its place; {result.moves:,} player moves; restart {restart:.1f} s"
        ),
        figures=asdict(result),
    )


# ---- 7. Redis outage ---------------------------------------------------------------------------------------


async def attack_redis_outage(ctx: Ctx) -> Row:
    redis = ctx.redis
    if redis is None:
        raise AttackError("needs --redis")
    outage = ctx.args.outage
    tables = []
    players: list[list[Player]] = []
    for _ in range(ctx.args.outage_rooms):
        t = await ctx.table(humans=2, bots=2, level="random", settings={"bot_delay": 0.2})
        await start_table(ctx.pool, t)
        tables.append(t)
        players.append(
            [ctx.player(t.code, tok, local=t.homes[i], think=0.2) for i, tok in enumerate(t.tokens)]
        )
    for p in (p for ps in players for p in ps):
        await asyncio.wait_for(p.got_state.wait(), 30)
    await asyncio.sleep(3.0)
    every = [p for ps in players for p in ps]
    errors0 = sum(sum(p.errors.values()) - p.errors["stale"] for p in every)
    drops0 = ctx.tally.drops
    five0 = ctx.tally.server_errors
    outcomes: Counter[str] = Counter()
    stop = asyncio.Event()
    healthz: list[float] = []

    def note(r: Any, what: str) -> None:
        if r is None:
            outcomes[f"{what}: no answer"] += 1
        elif isinstance(r, httpx.Response):
            retry = " +Retry-After" if r.headers.get("retry-after") else ""
            outcomes[f"{what}: {r.status_code}{retry}"] += 1

    async def hammer() -> None:
        i = 0
        while not stop.is_set():
            t = tables[i % len(tables)]
            addr = attacker(8, i % 50)
            note(await ctx.pool.request("GET", f"/api/rooms/{t.code}", addr), "GET room")
            note(
                await ctx.pool.request("POST", "/api/rooms", addr, json={"game": "capitol", "name": "X"}),
                "create",
            )
            note(
                await ctx.pool.request("POST", f"/api/rooms/{t.code}/join", addr, json={"name": "Y"}), "join"
            )
            ws, status, headers = await open_socket(ctx.url, t.code, local=addr, timeout=3)
            if ws is not None:
                outcomes["WebSocket: 101"] += 1
                ctx.sockets.append(ws)
            else:
                if isinstance(status, int):
                    ctx.tally.http(status, headers, "WebSocket handshake")
                retry = " +Retry-After" if headers is not None and headers.get("retry-after") else ""
                outcomes[f"WebSocket: {status}{retry}"] += 1
            i += 1
            await asyncio.sleep(0.1)

    log(f"  redis-outage: {len(tables)} rooms playing; Redis stops for {outage:g} s")
    async with ctx.measuring():
        redis.kill9()
        t_down = time.monotonic()
        bodies_task = spawn(ctx.healthz(stop, 0.5, healthz))
        hammer_task = spawn(hammer())
        await asyncio.sleep(outage)
        stop.set()
        await asyncio.gather(hammer_task, return_exceptions=True)
        bodies = await bodies_task
        errors = sum(sum(p.errors.values()) - p.errors["stale"] for p in every) - errors0
        drops = ctx.tally.drops - drops0
        await redis.start()
        t_back = time.monotonic()
        at_back = [max(p.last_seq for p in ps) for ps in players]
        moved_after: list[float | None] = [None] * len(tables)
        while time.monotonic() - t_back < 8.0 and any(m is None for m in moved_after):
            for i, ps in enumerate(players):
                if moved_after[i] is None and max(p.last_seq for p in ps) > at_back[i]:
                    moved_after[i] = time.monotonic() - t_back
            await asyncio.sleep(0.05)
    fives = ctx.tally.server_errors - five0
    stuck = sum(1 for m in moved_after if m is None)
    all_moved = max((m for m in moved_after if m is not None), default=math.nan) if not stuck else math.nan
    refusals = sum(n for k, n in outcomes.items() if "503 +Retry-After" in k)
    return Row(
        "redis-outage",
        attempts=sum(outcomes.values()),
        notes=(
            f"Redis down {t_back - t_down:.1f} s with {len(tables)} rooms "
            f"playing: HTTP/handshake 5xx (not 503+Retry-After) {fives}, 503+Retry-After {refusals}; moves "
            f"answered with an error {errors}, sockets dropped without a message {drops}; /healthz during: "
            f"{'; '.join(f'{k} ×{n}' for k, n in bodies.most_common(3))}; every room moving again after "
            f"{fmt(all_moved, 1)} s, rooms not moving 8 s later: {stuck}/{len(tables)}"
        ),
        figures={"outcomes": dict(outcomes), "server_errors": fives, "move_errors": errors, "drops": drops,
                 "healthz": dict(bodies), "moved_after_s": moved_after, "stuck": stuck},
    )  # fmt: skip


# ---- 8. log floods -----------------------------------------------------------------------------------------


def _masked_frame(opcode: int, payload: bytes) -> bytes:
    mask = os.urandom(4)
    n = len(payload)
    head = bytes([0x80 | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + n.to_bytes(2, "big")
    else:
        head += bytes([0x80 | 127]) + n.to_bytes(8, "big")
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


async def _read_frames(reader: asyncio.StreamReader, timeout: float) -> tuple[str, int | None]:
    """Read server frames until a close frame, an error message, EOF or the timeout."""
    end = time.monotonic() + timeout
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return "open", None
        try:
            head = await asyncio.wait_for(reader.readexactly(2), left)
            n = head[1] & 0x7F
            if n == 126:
                n = int.from_bytes(await reader.readexactly(2), "big")
            elif n == 127:
                n = int.from_bytes(await reader.readexactly(8), "big")
            payload = await reader.readexactly(n)
        except TimeoutError:
            return "open", None
        except (OSError, asyncio.IncompleteReadError):
            return "eof", None
        opcode = head[0] & 0x0F
        if opcode == 8:
            return "close", int.from_bytes(payload[:2], "big") if len(payload) >= 2 else None
        if opcode == 1 and b'"type":"error"' in payload[:40]:
            return "error", None


async def attack_log_flood(ctx: Ctx) -> Row:
    frames = ctx.args.bad_frames
    t = await ctx.table(settings={"public": True})
    host, port = "127.0.0.1", ctx.server.port
    size0, lines0 = ctx.server.log_size()
    tb0 = ctx.server.logs().count(TRACEBACK)
    reactions: Counter[str] = Counter()
    sent = 0
    gate = asyncio.Semaphore(8)

    async def one(i: int) -> None:
        nonlocal sent
        async with gate:
            try:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(host, port, local_addr=(attacker(9, i % 4), 0)), 5
                )
            except (OSError, TimeoutError):
                reactions["connect failed"] += 1
                return
            try:
                key = base64.b64encode(os.urandom(16)).decode()
                writer.write(
                    f"GET /ws/{t.code} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                    f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                    "Sec-WebSocket-Version: 13\r\n\r\n".encode()
                )
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
                status = int(head.split()[1])
                if status != 101:
                    reactions[f"handshake {status}"] += 1
                    return
                # An invalid UTF-8 sequence in a text frame (0xC3 must be followed by 0x80–0xBF).
                writer.write(_masked_frame(1, b'{"type":"ping","x":"\xc3\x28"}'))
                sent += 1
                kind, code = await _read_frames(reader, 2.0)
                reactions[f"{kind} {code}" if code is not None else kind] += 1
            except (OSError, TimeoutError, ValueError, IndexError, asyncio.IncompleteReadError):
                reactions["handshake failed"] += 1
            finally:
                writer.close()

    async with ctx.measuring():
        await asyncio.gather(*(one(i) for i in range(frames)))
    await asyncio.sleep(0.5)
    size1, lines1 = ctx.server.log_size()
    text = ctx.server.logs()
    tracebacks = text.count(TRACEBACK) - tb0
    err_tail = ctx.server.err.read_text(errors="replace").splitlines()[lines0:]
    errors = sum(1 for line in err_tail if line.startswith(("ERROR", "CRITICAL")))
    per = max(1, sent)
    return Row(
        "log-flood",
        attempts=sent,
        notes=(
            f"{sent:,} invalid UTF-8 frames (one per socket): server stderr +{lines1 - lines0:,} lines, "
            f"+{(size1 - size0) / 1024:,.0f} KB ({(lines1 - lines0) / per:.1f} lines, "
            f"{(size1 - size0) / per:,.0f} bytes per frame), ERROR lines {errors:,}, tracebacks "
            f"{tracebacks:,}; answers: "
            f"{', '.join(f'{k} ×{n}' for k, n in reactions.most_common())}"
        ),
        figures={"frames": sent, "stderr_lines": lines1 - lines0, "stderr_bytes": size1 - size0,
                 "error_lines": errors, "tracebacks": tracebacks, "reactions": dict(reactions)},
    )  # fmt: skip


# ---- 9. missing defences -----------------------------------------------------------------------------------


def _header_checks(headers: httpx.Headers) -> list[str]:
    """The defences a response lacks."""
    csp = headers.get("content-security-policy", "")
    missing = []
    if not re.search(r"script-src[^;]*'self'", csp) and not (
        "script-src" not in csp and re.search(r"default-src[^;]*'self'", csp)
    ):
        missing.append("CSP script-src 'self'")
    if headers.get("x-content-type-options", "").lower() != "nosniff":
        missing.append("nosniff")
    if "frame-ancestors" not in csp and not headers.get("x-frame-options"):
        missing.append("frame-ancestors")
    if not headers.get("referrer-policy"):
        missing.append("Referrer-Policy")
    return missing


async def attack_defences(ctx: Ctx) -> Row:
    pool = ctx.pool
    addrs = [attacker(10, i) for i in range(20)]
    creator = Creator(pool, addrs)
    checks = accepted = 0
    notes = []
    missing_by_path = {}
    for path in ("/", "/api/info", "/api/no-such-thing"):
        r = await pool.request("GET", path, addrs[0])
        checks += 1
        missing_by_path[path] = _header_checks(r.headers) if r is not None else ["no answer"]
    every = sorted({m for ms in missing_by_path.values() for m in ms})
    notes.append(
        "missing: "
        + (", ".join(f"{m} ({sum(m in ms for ms in missing_by_path.values())}/3)" for m in every) or "none")
    )
    # DNS rebinding: a page of evil.example, resolved to this server, sends its own Host and Origin.
    evil = f"evil.example:{ctx.server.port}"
    r = await pool.request(
        "POST", "/api/rooms", addrs[1], json={"game": "capitol", "name": "Rebind"},
        headers={"Host": evil, "Origin": f"http://{evil}"},
    )  # fmt: skip
    checks += 1
    rebinding = r is not None and r.status_code == 201
    accepted += rebinding
    g = await pool.request("GET", "/api/info", addrs[1], headers={"Host": evil})
    notes.append(
        f"rebinding create {'accepted' if rebinding else f'refused ({r.status_code if r else None})'}, "
        f"GET with that Host {g.status_code if g else None}"
    )
    names = {"NUL": "Ada\x00", "U+202E": "\u202egnp.exe", "ESC": "\x1b[31mRed", "newline": "Bo\nb",
             "U+200B": "Z\u200bW", "U+2066": "\u2066Iso\u2069"}  # fmt: skip
    as_is = []
    for label, name in names.items():
        made = await creator.create({"game": "capitol", "name": name})
        checks += 1
        if made is None:
            continue
        ctx.tokens.add(made[1])
        info = await pool.request("GET", f"/api/rooms/{made[0]}", addrs[2])
        if info is not None and info.status_code == 200 and info.json()["seats"][0]["name"] == name:
            as_is.append(label)
    accepted += len(as_is)
    notes.append(f"names kept as sent: {len(as_is)}/{len(names)} ({', '.join(as_is) or 'none'})")
    made = await creator.create({"game": "capitol", "name": "Ada"})
    checks += 1
    told_apart = True
    if made is not None:
        j = await pool.request("POST", f"/api/rooms/{made[0]}/join", addrs[3], json={"name": "Ada"})
        if j is not None and j.status_code == 201:
            info = await pool.request("GET", f"/api/rooms/{made[0]}", addrs[3])
            if info is not None and info.status_code == 200:
                seat_names = [s["name"] for s in info.json()["seats"]]
                told_apart = len(set(seat_names)) == len(seat_names)
    accepted += not told_apart
    notes.append(f"two seats named Ada {'told apart' if told_apart else 'not told apart'}")
    return Row(
        "defences",
        attempts=checks,
        wrongly_accepted=accepted,
        notes="; ".join(notes),
        figures={"missing": missing_by_path, "rebinding_accepted": rebinding, "names_as_is": as_is,
                 "duplicate_told_apart": told_apart},
    )  # fmt: skip


# ---- the run -----------------------------------------------------------------------------------------------


@dataclass
class Attack:
    name: str
    fn: Callable[[Ctx], Awaitable[Row]]
    about: str
    budget: Callable[[argparse.Namespace], float]  # seconds; the attack is cut off after this
    nofile: int | None = None
    needs_redis: bool = False


def _d(args: argparse.Namespace, default: float) -> float:
    return float(args.duration) if args.duration else default


ATTACKS = [
    Attack("bots", attack_bots, "unbounded bot levels; a room of random bots; SIGTERM; restart",
           lambda a: 3 * _d(a, 15) + 150),
    Attack("bots-hard", attack_bots_hard, "50 rooms of hard bots", lambda a: _d(a, 20) + 180),
    Attack("guessing", attack_guessing, "random GET /api/rooms/{code} with many live rooms",
           lambda a: a.create_budget + _d(a, 15) + 120),
    Attack("slowloris", attack_slowloris, "slow headers with a 1,024 open-file limit",
           lambda a: _d(a, 40) + 120, nofile=1024),
    Attack("spectators", attack_spectators, "a room filled with spectators; a player's reconnects",
           lambda a: 180),
    Attack("sync-flood", attack_sync_flood, "spectator sockets spamming sync", lambda a: _d(a, 10) + 120),
    Attack("room-flood", attack_room_flood, "one address creating rooms; the room list",
           lambda a: _d(a, 60) + _d(a, 10) + 120),
    Attack("kill9", attack_kill9, "kill -9 at random moments; seen moves after the restart",
           lambda a: a.kills * 40 + 120),
    Attack("redis-outage", attack_redis_outage, "Redis stopped and restarted (with --redis)",
           lambda a: a.outage + 150, needs_redis=True),
    Attack("log-flood", attack_log_flood, "invalid UTF-8 WebSocket frames", lambda a: 120 + a.bad_frames / 5),
    Attack("defences", attack_defences, "headers, DNS rebinding, names", lambda a: 60),
]  # fmt: skip


def _token_leaks(text: str, tokens: set[str]) -> int:
    """Tokens of the attack's seats that appear in the server's logs."""
    if not tokens:
        return 0
    return sum(1 for word in set(re.findall(r"[A-Za-z0-9_-]{32}", text)) if word in tokens)


async def run_attack(attack: Attack, args: argparse.Namespace, base: Path) -> Row:
    workdir = base / attack.name
    workdir.mkdir(parents=True, exist_ok=True)
    redis = RedisProc(workdir) if args.redis else None
    server = ServerProc(
        workdir, args.server_src, args.serve_args.split(), redis.url if redis else None, attack.nofile
    )
    probe: Probe | None = None
    ctx: Ctx | None = None
    row = Row(attack.name)
    probe_stats: dict[str, Any] = {}
    log(f"{attack.name}: {attack.about}")
    try:
        if redis is not None:
            await redis.start()
        await server.start()
        probe = Probe(server.url, workdir, args.probe_think, args.seed)
        await probe.start()
        ctx = Ctx(args, server, redis, probe)
        ctx.tally.expect_drops = False
        began = time.time()
        try:
            row = await asyncio.wait_for(attack.fn(ctx), attack.budget(args))
        except (Exception, TimeoutError) as exc:
            row = Row(attack.name, failed=f"{type(exc).__name__}: {exc}"[:300])
            row.notes = f"FAILED: {row.failed}"
            log(f"  {attack.name} failed: {row.failed}")
        if not ctx.windows:
            ctx.windows.append((began, time.time()))  # the whole attack, when it named no window
        if ctx.probe_stats is not None:
            probe_stats = ctx.probe_stats
        elif ctx.windows:
            probe_stats = await probe.stats(ctx.windows)
    finally:
        if probe is not None:
            probe.stop()
        if ctx is not None:
            ctx.tally.expect_drops = True
            await ctx.close()
        died_before_stop = server.deaths
        server._check_death()
        await server.stop()
        if redis is not None:
            redis.stop()
    tally = ctx.tally if ctx is not None else Tally()
    text = server.logs()
    detail = {
        "5xx": tally.server_errors + int(probe_stats.get("server_errors", 0)),
        "drops": tally.drops + int(probe_stats.get("drops", 0)),
        "deaths": max(server.deaths, died_before_stop),
        "tracebacks": text.count(TRACEBACK),
    }
    row.crash_detail = detail
    row.crashes = sum(detail.values())
    row.leaks += (
        tally.leaks + int(probe_stats.get("leaks", 0)) + _token_leaks(text, ctx.tokens if ctx else set())
    )
    row.probe_p50_ms = float(probe_stats.get("p50_ms", math.nan))
    row.probe_p99_ms = float(probe_stats.get("p99_ms", math.nan))
    row.probe_moves = probe_stats.get("moves")
    row.figures["probe"] = probe_stats
    row.figures["tally_samples"] = tally.samples
    row.figures["refusals_503"] = tally.refusals_503
    row.figures["loadavg_1m"] = os.getloadavg()[0]
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return row


def _crash_cell(row: Row) -> str:
    parts = [f"{k} {v}" for k, v in row.crash_detail.items() if v]
    return f"{row.crashes} ({', '.join(parts)})" if parts else str(row.crashes)


def _cells(row: Row) -> list[str]:
    def n(x: int | None) -> str:
        return "–" if x is None else f"{x:,}"

    probe = row.probe_moves
    return [
        row.attack,
        n(row.attempts),
        n(row.wrongly_accepted),
        _crash_cell(row),
        n(row.leaks),
        n(row.lost_moves),
        fmt(row.probe_p50_ms, 1),
        fmt(row.probe_p99_ms, 1),
        "–" if probe is None else f"{probe:,}",
        row.notes,
    ]


HEADERS = ["attack", "attempts", "wrongly accepted", "crashes", "leaks", "lost moves", "probe p50 ms",
           "probe p99 ms", "probe moves", "notes"]  # fmt: skip


def print_table(rows: list[Row], markdown: bool) -> None:
    cells = [_cells(r) for r in rows]
    if markdown:
        print("| " + " | ".join(HEADERS) + " |")
        print("|" + "|".join("---" if i in (0, 9) else "---:" for i in range(len(HEADERS))) + "|")
        for c in cells:
            print("| " + " | ".join(x.replace("|", "\\|") for x in c) + " |")
        return
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(HEADERS[:-1])]
    print(
        "  ".join(
            h.ljust(w) if i == 0 else h.rjust(w)
            for i, (h, w) in enumerate(zip(HEADERS, widths, strict=False))
        )
        + "  notes"
    )
    for c in cells:
        head = "  ".join(
            x.ljust(w) if i == 0 else x.rjust(w) for i, (x, w) in enumerate(zip(c, widths, strict=False))
        )
        print(f"{head}  {c[-1]}")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    names = ", ".join(a.name for a in ATTACKS)
    ap.add_argument("--only", help=f"comma-separated attacks ({names})")
    ap.add_argument(
        "--duration", type=float, help="every attack's main window in seconds (default: each its own)"
    )
    ap.add_argument(
        "--redis", action="store_true", help="run the server on a private redis-server (adds redis-outage)"
    )
    ap.add_argument("--json", action="store_true", help="also print one JSON line per attack")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--server-src", help="run the server from this src directory (default: PYTHONPATH as is)")
    ap.add_argument("--serve-args", default="", help="more flags for `serve`")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--keep", action="store_true", help="keep the attacks' directories (server logs) and say where"
    )
    ap.add_argument(
        "--probe-think", type=float, default=0.05, help="the probe players' pause before a move (s)"
    )
    ap.add_argument("--hard-rooms", type=int, default=50)
    ap.add_argument("--guess-rooms", type=int, default=1500, help="live rooms made before guessing")
    ap.add_argument("--create-budget", type=float, default=90.0, help="seconds allowed to make them")
    ap.add_argument("--guess-connections", type=int, default=32)
    ap.add_argument("--slow-conns", type=int, default=1500)
    ap.add_argument("--max-spectators", type=int, default=1000, help="spectator sockets tried at most")
    ap.add_argument("--sync-sockets", type=int, default=200)
    ap.add_argument("--sync-depth", type=int, default=8, help="syncs in flight per spamming socket")
    ap.add_argument("--kills", type=int, default=3, help="kill -9s (the issue asks for >= 100)")
    ap.add_argument("--kill-rooms", type=int, default=10)
    ap.add_argument("--outage", type=float, default=4.0, help="seconds Redis stays down")
    ap.add_argument("--outage-rooms", type=int, default=8)
    ap.add_argument("--bad-frames", type=int, default=300)
    ap.add_argument("--probe-child", metavar="URL", help=argparse.SUPPRESS)
    return ap.parse_args(argv)


async def main_async(args: argparse.Namespace) -> list[Row]:
    raise_own_file_limit()
    wanted = [a for a in ATTACKS if not a.needs_redis or args.redis]
    if args.only:
        names = {n.strip() for n in args.only.split(",") if n.strip()}
        unknown = names - {a.name for a in ATTACKS}
        if unknown:
            raise SystemExit(f"unknown attack(s): {', '.join(sorted(unknown))}")
        wanted = [a for a in ATTACKS if a.name in names]
        if any(a.needs_redis for a in wanted) and not args.redis:
            raise SystemExit("redis-outage needs --redis")
    base = Path(tempfile.mkdtemp(prefix="cfy-attacks-"))
    rows = []
    t0 = time.monotonic()
    try:
        for attack in wanted:
            rows.append(await run_attack(attack, args, base))
    finally:
        if args.keep:
            log(f"logs kept in {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    log(f"done in {time.monotonic() - t0:.0f} s")
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    if args.probe_child:
        asyncio.run(probe_child(args.probe_child, args.probe_think, args.seed))
        return
    rows = asyncio.run(main_async(args))
    src = args.server_src or os.environ.get("PYTHONPATH", "(installed package)")
    print(f"\nserver from {src}{' with --redis' if args.redis else ''}; {os.cpu_count()} cores; "
          f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    print_table(rows, args.markdown)
    if args.json:
        for row in rows:
            print(json.dumps(asdict(row), default=str))


if __name__ == "__main__":
    main()
