"""Item 4: a room filled with spectators, a player's reconnects, and spectator sockets spamming sync."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from benchmarks.attacks.clients import drain, is_drop, open_socket, start_table
from benchmarks.attacks.common import attacker, log, spawn
from benchmarks.attacks.context import Ctx, Row


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
