"""One attack's context (its server, Redis, probe, clients and measuring windows) and its row."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import random
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection

from benchmarks.attacks.clients import Creator, HttpPool, Player, Table, Tally, close_all, make_table
from benchmarks.attacks.common import MONITOR_ADDRESS, SETUP_ADDRESSES
from benchmarks.attacks.servers import Probe, RedisProc, ServerProc


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
