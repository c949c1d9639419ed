"""Item 1: bot levels with no real bound, a room of random bots, SIGTERM and a restart; and many rooms
of hard bots."""

from __future__ import annotations

import asyncio
import math
import time
from collections import Counter

from benchmarks.attacks.clients import Creator, Player, Table, auto_rematch, drain, open_socket, start_table
from benchmarks.attacks.common import EVIL_LEVEL, MONITOR_ADDRESS, attacker, fmt, log, pct, spawn
from benchmarks.attacks.context import Ctx, Row


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
