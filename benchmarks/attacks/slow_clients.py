"""Item 3: slow clients (slowloris: headers sent a byte at a time) under a low open-file limit."""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import Counter

import httpx

from benchmarks.attacks.clients import open_socket
from benchmarks.attacks.common import attacker, fmt, pct, spawn
from benchmarks.attacks.context import Ctx, Row


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
