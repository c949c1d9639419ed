"""Item 7: Redis stopped and restarted under a server with ``--redis``."""

from __future__ import annotations

import asyncio
import math
import time
from collections import Counter
from typing import Any

import httpx

from benchmarks.attacks.clients import Player, open_socket, start_table
from benchmarks.attacks.common import AttackError, attacker, fmt, log, spawn
from benchmarks.attacks.context import Ctx, Row


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
