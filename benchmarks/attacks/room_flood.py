"""Item 5: one address creating rooms, and the room list meanwhile."""

from __future__ import annotations

import asyncio
import contextlib
import math
import statistics
import time
from collections import Counter

from benchmarks.attacks.common import attacker, fmt, log, pct, spawn
from benchmarks.attacks.context import Ctx, Row


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
