"""One client process of ``conflictology loadtest``: its rooms, a WebSocket per seat, what it measured.

Each room is made over HTTP exactly as people make one (the host creates it, the others join), then
every seat plays over its own WebSocket with the public protocol. Rooms are spread over the given
servers round-robin (all seats of a room on the same server, as a load balancer hashing on the room
code would place them). A seat that loses its socket reconnects with its token to the next server
(counted as a reconnect) and carries on from the state it is sent.

Each socket speaks protocol v2 (``?v=2``), as the web client and the network bot do: a state message
carries of the game's log only the entries that socket has not had (docs/protocol.md, "Log deltas").
Random bots never read the log; the others join it (``netbot.LogJoin``) before they decide.

Latency is *action → view*: from sending an action to receiving the first state message with a
higher ``seq`` on the same socket. Only the measuring window (after every room is seated and
started) counts; a finished game is followed by a rematch, so the load stays constant.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx
import msgspec
import websockets

from conflictology import bots, games
from conflictology.clients.netbot import Answer, LogJoin


@dataclass
class Counters:
    """What one worker measured; summed over workers for the report."""

    rooms: int = 0
    actions: int = 0
    errors: int = 0
    reconnects: int = 0
    stale: int = 0
    games: int = 0
    # Messages received in the window and their size (what a move costs to send, per client).
    messages: int = 0
    received_bytes: int = 0
    latencies: list[float] = field(default_factory=list)
    error_samples: list[str] = field(default_factory=list)

    def add_error(self, what: str) -> None:
        self.errors += 1
        if len(self.error_samples) < 5:
            self.error_samples.append(what[:200])


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
    log_from: int = 0
    decision_since: int | None = None  # (None: a server that does not send it)
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
            url = f"{base}/ws/{quote(self.room.code)}?token={quote(self.token)}&v=2"
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
        self.answer = Answer()
        self.latest: _Msg | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.pending = None  # an action lost with the previous socket is not timed
        logs = LogJoin()  # each socket has its own log (its first state is whole)
        self.view: dict[str, Any] | None = None
        try:
            async for raw in ws:
                msg = _decoder.decode(raw)
                if run.measuring:
                    counters.messages += 1
                    counters.received_bytes += len(raw)
                if msg.type == "error":
                    if run.measuring:
                        if msg.code == "stale":
                            # Someone else answered the same window first: a normal race, not a fault.
                            counters.stale += 1
                        else:
                            counters.add_error(f"{msg.code}: {msg.message}")
                    self.answer.refused()
                    self._answer_latest(loop, ws)
                    continue
                if msg.type != "state":
                    continue
                if run.level != "random":
                    joined = logs.join({"view": json.loads(bytes(msg.view)), "log_from": msg.log_from})
                    if joined is None:  # a gap: never on one socket, but the protocol says what to do
                        run.spawn(ws.send('{"type": "sync"}'))
                        continue
                    self.view = joined["view"]
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
                self._answer_latest(loop, ws)
        finally:
            if self.timer is not None:
                self.timer.cancel()

    def _answer_latest(self, loop: asyncio.AbstractEventLoop, ws: Any) -> None:
        msg = self.latest
        if msg is None or self.timer is not None:
            return
        if not self.answer.wanted(msg.seq, msg.legal, msg.decision_since):
            return
        delay = self.run.think * self.run.rng.uniform(0.5, 1.5) if self.run.think > 0 else 0.0
        self.timer = loop.call_later(delay, self._act, ws)

    def _act(self, ws: Any) -> None:
        # Act on the newest state received (a window may have moved on while this bot thought).
        self.timer = None
        msg = self.latest
        if msg is None or not msg.legal or msg.seq <= self.answer.seq:
            return
        if self.run.level == "random":
            action = self.run.rng.choice(msg.legal)
        else:
            view = self.view
            assert view is not None  # joined from every state message before this one
            if self.bot is None or view.get("you") != self.seat:
                self.seat = view["you"]
                self.bot = bots.make(self.run.level, self.room.game, self.seat, self.run.rng.getrandbits(32))
            action = self.bot.act(view, msg.legal)
        self.answer.sent(msg.seq)
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
        self,
        path: str,
        body: dict[str, Any] | None,
        token: str | None,
        server_index: int,
        done_if: str | None = None,
    ) -> Any:
        """``done_if``: the error code that, after a request lost with its process, says that the
        lost request took effect (a start that answers ``not_in_lobby`` when tried again)."""
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
            if last is not None and done_if is not None and r.status_code == 409:
                with contextlib.suppress(ValueError):
                    if r.json().get("code") == done_if:
                        return None
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

    async def start(self, server_index: int | None = None) -> None:
        index = self.server_index if server_index is None else server_index
        await self._post(f"/api/rooms/{self.code}/start", None, self.tokens[0], index, "not_in_lobby")

    async def rematch(self, server_index: int) -> None:
        try:
            path = f"/api/rooms/{self.code}/rematch"
            await self._post(path, None, self.tokens[0], server_index, "not_over")
            await self.start(server_index)
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


def worker_main(args: dict[str, Any], out: Any, go: Any, measured: Any) -> None:
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
