"""The attacker's clients and what they saw: the tally of answers (5xx, drops, leaks), an HTTP pool,
rooms made and started as people make them, and scripted players over the WebSocket."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from benchmarks.attacks.common import AttackError, spawn, ws_base


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
