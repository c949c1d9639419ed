"""``conflictology loadtest``: many rooms of network bots against one or several servers.

Each room is made over HTTP exactly as people make one (the host creates it, the others join), then
every seat plays over its own WebSocket with the public protocol. Rooms are spread over the given
servers round-robin (all seats of a room on the same server, as a load balancer hashing on the room
code would place them). A seat that loses its socket reconnects with its token to the next server
(counted as a reconnect) and carries on from the state it is sent.

Latency is *action → view*: from sending an action to receiving the first state message with a
higher ``seq`` on the same socket. Only the measuring window (after every room is seated and
started) counts; a finished game is followed by a rematch, so the load stays constant.

The servers' own side comes from their ``/metrics``, read when the window opens and when it closes:
how long a server took from a move's arrival to its views queued (*server p99*), and how late its
event loop ran (*loop lag p99*). On a machine the load generator shares, the gap between the client's
p99 and the server's says how much of the tail is the clients' own scheduling.
"""

from __future__ import annotations

import asyncio
import json
import math
import multiprocessing
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any
from urllib.parse import quote

import httpx
import msgspec
import typer
import websockets

from conflictology import bots, games
from conflictology.server import metrics


@dataclass
class Counters:
    """What one worker measured; summed over workers for the report."""

    rooms: int = 0
    actions: int = 0
    errors: int = 0
    reconnects: int = 0
    stale: int = 0
    games: int = 0
    latencies: list[float] = field(default_factory=list)
    error_samples: list[str] = field(default_factory=list)

    def add_error(self, what: str) -> None:
        self.errors += 1
        if len(self.error_samples) < 5:
            self.error_samples.append(what[:200])


@dataclass
class LoadResult:
    rooms: int
    players: int
    servers: int
    duration: float
    actions: int
    errors: int
    reconnects: int
    stale: int
    games: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    error_samples: list[str]
    # The servers' own side (their /metrics over the run, all servers together; NaN when a server
    # does not publish them): a move's handling time, and how late their event loops ran.
    server_p50_ms: float = math.nan
    server_p99_ms: float = math.nan
    loop_lag_p99_ms: float = math.nan

    @property
    def actions_per_second(self) -> float:
        return self.actions / self.duration if self.duration > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "actions_per_second": round(self.actions_per_second, 1)}


def _scrape(servers: list[str]) -> list[dict[str, metrics.Buckets]] | None:
    """Every server's histograms now, or None if one of them does not answer /metrics."""
    out = []
    try:
        with httpx.Client(timeout=10) as http:
            for server in servers:
                response = http.get(server.rstrip("/") + "/metrics")
                response.raise_for_status()
                out.append(metrics.histograms(response.text))
    except (httpx.HTTPError, ValueError):
        return None
    return out


def _server_quantiles(
    before: list[dict[str, metrics.Buckets]] | None, after: list[dict[str, metrics.Buckets]] | None
) -> dict[str, float]:
    if before is None or after is None:
        return {}

    def window(name: str) -> metrics.Buckets:
        return metrics.merge(
            metrics.difference(a.get(name, {}), b.get(name, {})) for a, b in zip(after, before, strict=True)
        )

    actions = window("conflictology_action_seconds")
    lag = window("conflictology_event_loop_lag_seconds")
    return {
        "server_p50_ms": metrics.quantile(actions, 0.50) * 1000,
        "server_p99_ms": metrics.quantile(actions, 0.99) * 1000,
        "loop_lag_p99_ms": metrics.quantile(lag, 0.99) * 1000,
    }


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    i = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[i]


def _ws_base(server: str) -> str:
    base = server.rstrip("/")
    if base.startswith("https://"):
        return "wss://" + base[8:]
    if base.startswith("http://"):
        return "ws://" + base[7:]
    return base


class _RoomPart(msgspec.Struct):
    game_id: str | None = None


class _Msg(msgspec.Struct):
    """The fields of a server message a network bot looks at (the view stays undecoded)."""

    type: str
    seq: int = -1
    legal: list[Any] = []
    winners: list[int] | None = None
    room: _RoomPart | None = None
    view: msgspec.Raw = msgspec.Raw(b"null")
    code: str | None = None
    message: str | None = None


_decoder = msgspec.json.Decoder(_Msg)
_encoder = msgspec.json.Encoder()


class Seat:
    """One network bot at one table."""

    def __init__(self, run: Worker, room: RoomRun, index: int, token: str) -> None:
        self.run = run
        self.room = room
        self.index = index
        self.token = token
        self.server_index = room.server_index
        self.bot: bots.Bot | None = None
        self.seat = -1
        self.pending: tuple[int, float] | None = None  # (seq answered, time sent)

    async def play(self) -> None:
        counters = self.run.counters
        servers = self.run.servers
        while not self.run.stopping:
            base = _ws_base(servers[self.server_index])
            url = f"{base}/ws/{quote(self.room.code)}?token={quote(self.token)}"
            try:
                async with websockets.connect(url, max_size=1 << 22, open_timeout=20) as ws:
                    await self._session(ws)
                    return
            except (OSError, websockets.WebSocketException, TimeoutError) as exc:
                if self.run.stopping:
                    return
                # The server went away (or refused us): try the next one, as a browser would after a
                # load balancer moved it.
                counters.reconnects += 1
                if len(servers) > 1:
                    self.server_index = (self.server_index + 1) % len(servers)
                if counters.reconnects % 50 == 1:
                    counters.error_samples.append(f"reconnect: {type(exc).__name__}: {exc}"[:200])
                await asyncio.sleep(0.2 + random.random() * 0.3)

    async def _session(self, ws: Any) -> None:
        """Read every message (only the fields the bot needs are decoded); answer the newest state
        that awaits this seat after a thinking delay."""
        counters = self.run.counters
        run = self.run
        loop = asyncio.get_running_loop()
        self.answered = -1
        self.latest: _Msg | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.pending = None  # an action lost with the previous socket is not timed
        try:
            async for raw in ws:
                msg = _decoder.decode(raw)
                if msg.type == "error":
                    if run.measuring:
                        if msg.code == "stale":
                            # Someone else answered the same window first: a normal race, not a fault.
                            counters.stale += 1
                        else:
                            counters.add_error(f"{msg.code}: {msg.message}")
                    continue
                if msg.type != "state":
                    continue
                if self.pending is not None and msg.seq > self.pending[0]:
                    if run.measuring:
                        counters.latencies.append(time.perf_counter() - self.pending[1])
                        counters.actions += 1
                    self.pending = None
                self.latest = msg
                if msg.winners is not None and not msg.legal:
                    game_id = msg.room.game_id if msg.room is not None else None
                    if self.index == 0 and game_id != self.room.last_over:
                        self.room.last_over = game_id
                        if run.measuring:
                            counters.games += 1
                        run.spawn(self.room.rematch(self.server_index))
                    continue
                if msg.legal and msg.seq > self.answered and self.timer is None:
                    delay = run.think * run.rng.uniform(0.5, 1.5) if run.think > 0 else 0.0
                    self.timer = loop.call_later(delay, self._act, ws)
        finally:
            if self.timer is not None:
                self.timer.cancel()

    def _act(self, ws: Any) -> None:
        # Act on the newest state received (a window may have moved on while this bot thought).
        self.timer = None
        msg = self.latest
        if msg is None or not msg.legal or msg.seq <= self.answered:
            return
        if self.run.level == "random":
            action = self.run.rng.choice(msg.legal)
        else:
            view = json.loads(bytes(msg.view))
            if self.bot is None or view.get("you") != self.seat:
                self.seat = view["you"]
                self.bot = bots.make(self.run.level, self.room.game, self.seat, self.run.rng.getrandbits(32))
            action = self.bot.act(view, msg.legal)
        self.answered = msg.seq
        self.pending = (msg.seq, time.perf_counter())
        self.run.spawn(ws.send(_encoder.encode({"type": "act", "action": action, "seq": msg.seq}).decode()))


class RoomRun:
    def __init__(self, run: Worker, server_index: int, game_name: str) -> None:
        self.run = run
        self.server_index = server_index
        self.game_name = game_name
        self.game = games.get(game_name)
        self.code = ""
        self.tokens: list[str] = []
        self.last_over: str | None = None

    def _url(self, server_index: int) -> str:
        return self.run.servers[server_index].rstrip("/")

    async def _post(
        self, path: str, body: dict[str, Any] | None, token: str | None, server_index: int
    ) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        last: Exception | None = None
        for attempt in range(len(self.run.servers) * 3):
            idx = (server_index + attempt) % len(self.run.servers)
            try:
                r = await self.run.http.post(f"{self._url(idx)}{path}", json=body or {}, headers=headers)
            except httpx.HTTPError as exc:
                last = exc
                await asyncio.sleep(0.3)
                continue
            if r.status_code >= 400:
                raise RuntimeError(f"POST {path}: {r.status_code} {r.text[:200]}")
            return r.json()
        raise RuntimeError(f"POST {path}: {last}")

    async def setup(self, players: int) -> None:
        r = await self._post(
            "/api/rooms", {"game": self.game_name, "name": "Load 0"}, None, self.server_index
        )
        self.code = r["code"]
        self.tokens = [r["token"]]
        for i in range(1, players):
            j = await self._post(
                f"/api/rooms/{self.code}/join", {"name": f"Load {i}"}, None, self.server_index
            )
            self.tokens.append(j["token"])

    async def start(self) -> None:
        await self._post(f"/api/rooms/{self.code}/start", None, self.tokens[0], self.server_index)

    async def rematch(self, server_index: int) -> None:
        try:
            await self._post(f"/api/rooms/{self.code}/rematch", None, self.tokens[0], server_index)
            await self._post(f"/api/rooms/{self.code}/start", None, self.tokens[0], server_index)
        except RuntimeError as exc:
            if not self.run.stopping:
                self.run.counters.add_error(str(exc))


class Worker:
    """The rooms of one client process."""

    def __init__(
        self,
        servers: list[str],
        room_ids: list[int],
        players: int,
        game: str,
        level: str,
        think: float,
        seed: int,
    ) -> None:
        self.servers = servers
        self.room_ids = room_ids
        self.players = players
        self.game = game
        self.level = level
        self.think = think
        self.rng = random.Random(seed)
        self.counters = Counters()
        self.measuring = False
        self.stopping = False
        self.http = httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=64))
        self._background: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled():
            # A send on a socket that closed meanwhile fails: expected, and counted elsewhere (the
            # seat reconnects); read here so asyncio does not report it as never retrieved.
            task.exception()

    async def setup(self) -> list[RoomRun]:
        rooms = [RoomRun(self, i % len(self.servers), self.game) for i in self.room_ids]
        gate = asyncio.Semaphore(32)

        async def one(room: RoomRun) -> None:
            async with gate:
                await room.setup(self.players)

        await asyncio.gather(*(one(r) for r in rooms))
        return rooms

    async def run(
        self,
        ready: Callable[[], Any],
        report: Callable[[Counters], None],
        window: float,
        closed: Callable[[], Any] | None = None,
    ) -> None:
        rooms = await self.setup()
        seats = [Seat(self, room, i, token) for room in rooms for i, token in enumerate(room.tokens)]
        tasks = [asyncio.ensure_future(s.play()) for s in seats]
        await asyncio.sleep(0.5)  # let the sockets open before the games start
        gate = asyncio.Semaphore(32)

        async def start(room: RoomRun) -> None:
            async with gate:
                await room.start()

        await asyncio.gather(*(start(r) for r in rooms))
        self.counters.rooms = len(rooms)
        await ready()
        self.measuring = True
        end = time.monotonic() + window
        while time.monotonic() < end:
            await asyncio.sleep(min(0.5, max(0.0, end - time.monotonic())))
            report(self.counters)
        self.measuring = False
        report(self.counters)
        if closed is not None:
            await closed()  # before the sockets close: the servers' teardown is not part of the window
        self.stopping = True
        for t in tasks + list(self._background):
            t.cancel()
        await asyncio.gather(*tasks, *self._background, return_exceptions=True)
        await self.http.aclose()


def _worker_main(args: dict[str, Any], out: Any, go: Any, measured: Any) -> None:
    """A client process: sets its rooms up, says ready, waits for the common start, measures."""

    async def main() -> None:
        worker = Worker(**args["worker"])

        async def ready() -> None:
            out.put(("ready", None))
            await asyncio.to_thread(go.wait)

        last = [0.0]

        def report(c: Counters) -> None:
            now = time.monotonic()
            if now - last[0] >= 0.5:
                last[0] = now
                out.put(("progress", (args["index"], c.actions, c.errors, c.reconnects)))

        async def closed() -> None:
            out.put(("closed", args["index"]))
            await asyncio.to_thread(measured.wait, 60)  # the parent has read the servers

        try:
            await worker.run(ready, report, args["window"], closed)
        except Exception as exc:  # reported, not hidden: the parent prints it
            out.put(("failed", f"{type(exc).__name__}: {exc}"))
            return
        out.put(("done", worker.counters))

    asyncio.run(main())


def run_loadtest(
    servers: list[str],
    rooms: int,
    players: int,
    duration: float,
    game: str = "capitol",
    level: str = "random",
    think: float = 1.0,
    workers: int = 1,
    seed: int = 0,
    progress: Callable[[str, float, int, int, int], None] | None = None,
) -> LoadResult:
    """Run the load test with ``workers`` client processes; ``progress(phase, fraction, actions,
    errors, reconnects)`` is called as it goes."""
    games.get(game).check_players(players)
    bots.check(level, games.get(game))
    workers = max(1, min(workers, rooms))
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    go = ctx.Event()
    measured = ctx.Event()
    procs = []
    for w in range(workers):
        args = {
            "worker": {
                "servers": servers,
                "room_ids": list(range(w, rooms, workers)),
                "players": players,
                "game": game,
                "level": level,
                "think": think,
                "seed": seed * 1000 + w,
            },
            "window": duration,
            "index": w,
        }
        p = ctx.Process(target=_worker_main, args=(args, out, go, measured), daemon=True)
        p.start()
        procs.append(p)
    results: list[Counters] = []
    failures: list[str] = []
    ready = 0
    latest: dict[int, tuple[int, int, int]] = {}
    started = None
    scraped: list[dict[str, metrics.Buckets]] | None = None
    scraped_after: list[dict[str, metrics.Buckets]] | None = None
    closed = 0
    try:
        while len(results) + len(failures) < workers:
            try:
                kind, payload = out.get(timeout=1.0)
            except Exception:
                if not any(p.is_alive() for p in procs):
                    break
                kind, payload = "tick", None
            if kind == "ready":
                ready += 1
                if ready == workers:
                    scraped = _scrape(servers)
                    started = time.monotonic()
                    go.set()
            elif kind == "progress":
                latest[payload[0]] = payload[1:]
            elif kind == "closed":
                closed += 1
                if closed == workers:
                    # Every window is over and no socket has closed yet: the servers' side is read
                    # now, so the clients' goodbyes are not counted in it.
                    scraped_after = _scrape(servers)
                    if progress is not None:
                        acts = sum(v[0] for v in latest.values())
                        errs = sum(v[1] for v in latest.values())
                        progress("measured", 1.0, acts, errs, sum(v[2] for v in latest.values()))
                    measured.set()
            elif kind == "done":
                results.append(payload)
            elif kind == "failed":
                failures.append(payload)
                go.set()
                measured.set()
            if progress is not None and closed < workers:  # (after "measured", nothing more)
                if started is None:
                    progress("setup", ready / workers, 0, 0, 0)
                else:
                    frac = min(1.0, (time.monotonic() - started) / duration) if duration else 1.0
                    acts = sum(v[0] for v in latest.values())
                    progress(
                        "running",
                        frac,
                        acts,
                        sum(v[1] for v in latest.values()),
                        sum(v[2] for v in latest.values()),
                    )
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
    if failures:
        raise RuntimeError("; ".join(failures))
    server_side = _server_quantiles(scraped, scraped_after if scraped_after is not None else _scrape(servers))
    lat = sorted(x for c in results for x in c.latencies)
    samples = [s for c in results for s in c.error_samples][:5]
    return LoadResult(
        rooms=sum(c.rooms for c in results),
        players=players,
        servers=len(servers),
        duration=duration,
        actions=sum(c.actions for c in results),
        errors=sum(c.errors for c in results),
        reconnects=sum(c.reconnects for c in results),
        stale=sum(c.stale for c in results),
        games=sum(c.games for c in results),
        p50_ms=percentile(lat, 0.50) * 1000,
        p95_ms=percentile(lat, 0.95) * 1000,
        p99_ms=percentile(lat, 0.99) * 1000,
        max_ms=(lat[-1] * 1000) if lat else float("nan"),
        error_samples=samples,
        **server_side,
    )


def register(app: typer.Typer) -> None:
    @app.command()
    def loadtest(
        server: Annotated[
            list[str], typer.Option("--server", help="server URL (repeat to spread rooms over several)")
        ],
        rooms: Annotated[int, typer.Option("--rooms", help="rooms to open")] = 10,
        players: Annotated[int, typer.Option("--players", help="network bots per room")] = 4,
        duration: Annotated[float, typer.Option("--duration", help="seconds to measure")] = 30.0,
        game: Annotated[str, typer.Option("--game")] = "capitol",
        level: Annotated[str, typer.Option("--level", help="bot level of the network bots")] = "random",
        think: Annotated[
            float, typer.Option("--think", help="mean seconds a bot waits before acting (0: at once)")
        ] = 1.0,
        workers: Annotated[int, typer.Option("--workers", help="client processes")] = 1,
        seed: Annotated[int, typer.Option("--seed")] = 0,
        json_out: Annotated[bool, typer.Option("--json", help="print the result as JSON too")] = False,
    ) -> None:
        """Open ROOMS rooms of PLAYERS network bots over the given servers and measure them."""
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
        from rich.table import Table

        if rooms < 1 or duration <= 0:
            typer.echo("error: --rooms must be at least 1 and --duration positive", err=True)
            raise typer.Exit(2)
        try:
            games.get(game).check_players(players)
            bots.check(level, games.get(game))
        except ValueError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from exc
        console = Console(stderr=True)
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[stats]}"),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        ) as bar:
            task = bar.add_task("seating rooms", total=1.0, stats="")

            def progress(phase: str, frac: float, actions: int, errors: int, reconnects: int) -> None:
                if phase == "setup":
                    bar.update(task, description="seating rooms", completed=frac, stats="")
                else:
                    bar.update(
                        task,
                        description="playing",
                        completed=frac,
                        stats=f"{actions} actions, {errors} errors, {reconnects} reconnects",
                    )

            try:
                result = run_loadtest(
                    server, rooms, players, duration, game, level, think, workers, seed, progress
                )
            except RuntimeError as exc:
                typer.echo(f"error: {exc}", err=True)
                raise typer.Exit(1) from exc
        table = Table(title=f"{rooms} rooms × {players} players on {len(server)} server(s), {duration:g} s")
        for col in (
            "rooms",
            "actions/s",
            "p50 ms",
            "p95 ms",
            "p99 ms",
            "server p99 ms",
            "loop lag p99 ms",
            "errors",
            "reconnects",
            "stale",
            "games",
        ):
            table.add_column(col, justify="right")
        table.add_row(
            str(result.rooms),
            f"{result.actions_per_second:.1f}",
            f"{result.p50_ms:.1f}",
            f"{result.p95_ms:.1f}",
            f"{result.p99_ms:.1f}",
            f"{result.server_p99_ms:.1f}",
            f"{result.loop_lag_p99_ms:.1f}",
            str(result.errors),
            str(result.reconnects),
            str(result.stale),
            str(result.games),
        )
        Console(width=160).print(table)
        for sample in result.error_samples:
            typer.echo(f"  {sample}")
        if json_out:
            typer.echo(json.dumps(result.as_dict()))
        if result.errors:
            raise typer.Exit(1)
