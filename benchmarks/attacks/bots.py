"""Item 1: bot levels with no real bound, a room of random bots, SIGTERM and a restart; and many rooms
of hard bots. Issue 25: one address's rooms of `hard` bots against another room's (bots-flood), and a
mystery bot's answer time by its level (mystery-timing)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from benchmarks.attacks.clients import Creator, Player, Table, auto_rematch, drain, open_socket, start_table
from benchmarks.attacks.common import EVIL_LEVEL, MONITOR_ADDRESS, AttackError, attacker, fmt, log, pct, spawn
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
    m0 = await _bot_metrics(ctx)
    states0, cpu0, t0 = counts["states"], ctx.server.cpu(), time.monotonic()
    async with ctx.measuring():
        await asyncio.sleep(window)
    elapsed = time.monotonic() - t0
    states = counts["states"] - states0
    cpu = (ctx.server.cpu() - cpu0) / elapsed
    m1 = await _bot_metrics(ctx)
    # Issue 28: the window's decisions asked of `hard`, by how they were played (full search, quick
    # search, fell back); a server before the counter shows none.
    hows = ("search", "quick", "fell_back")
    played = {
        how: m1.get(f'conflictology_bot_hard_decisions_total{{how="{how}"}}', 0.0)
        - m0.get(f'conflictology_bot_hard_decisions_total{{how="{how}"}}', 0.0)
        for how in hows
    }
    asked = sum(played.values())
    split = " / ".join(f"{how} {played[how] / asked:.0%}" for how in hows) if asked else ""
    shares = f"hard decisions {split} of {asked:.0f}; " if asked else ""
    # (Before the counter, what a server did with its searches: run in full, or played by `normal`.)
    sent, late = (
        m1.get(f"conflictology_bot_{name}_total", 0.0) - m0.get(f"conflictology_bot_{name}_total", 0.0)
        for name in ("searches", "late")
    )
    shares += f"searches run {sent:.0f}, played by the default level {late:.0f}; "
    fell = {
        name.split('"')[1]: m1[name] - m0.get(name, 0.0)
        for name in m1
        if name.startswith("conflictology_bot_fallbacks_total{") and m1[name] > m0.get(name, 0.0)
    }
    if fell:
        shares += "fallbacks " + ", ".join(f"{why} {count:.0f}" for why, count in sorted(fell.items())) + "; "
    await ctx.read_probe()
    await ctx.expect_drops(True)
    term_s, killed = await ctx.server.stop(timeout=20.0)
    term = f">{term_s:.0f} s, killed" if killed else f"{term_s:.1f} s"
    return Row(
        "bots-hard",
        attempts=rooms,
        notes=(
            f"{rooms} rooms of 3 '{level}' bots + a stand-in: {states / elapsed:.1f} moves/s; {shares}"
            f"server CPU {cpu * 100:.0f}% of a core; SIGTERM exit {term}"
        ),
        figures={"level": level, "moves_per_s": states / elapsed, "cpu_share": cpu,
                 "sigterm_seconds": term_s, "sigterm_killed": killed,
                 "searches": sent, "late": late, **{f"hard_{how}": played[how] for how in hows}},
    )  # fmt: skip


# ---- issue 25: one address's bots against the pool, and a mystery bot's answer time ---------------


@dataclass
class _Answers:
    """What a spectator socket saw of a room: each move's seat (the first new log entry's) and the
    seconds since the move before it."""

    moves: list[tuple[int | None, float]] = field(default_factory=list)
    over: bool = False


async def _watch(ws: ClientConnection, into: _Answers, until: float) -> None:
    """Read a room's state messages until ``until`` (monotonic) or the socket closes."""
    seen, last = 0, time.monotonic()
    with contextlib.suppress(ConnectionClosed, TimeoutError):
        while (left := until - time.monotonic()) > 0:
            raw = await asyncio.wait_for(ws.recv(), left)
            message = json.loads(raw)
            if message.get("type") != "state":
                continue
            now = time.monotonic()
            log_entries = message.get("view", {}).get("log", [])
            if len(log_entries) < seen:
                seen = 0  # a new game
            new = log_entries[seen:]
            if new and isinstance(new[0], dict):
                seat = new[0].get("seat")
                into.moves.append((seat if isinstance(seat, int) else None, now - last))
            seen, last = len(log_entries), now
            if message.get("winners") is not None:
                into.over = True
                return


async def _bot_room(
    ctx: Ctx, creator: Creator, game: str, bots: int, level: str, bot_delay: float, more: int = 0
) -> tuple[str, str, str] | None:
    """A started room of ``bots`` bots of ``level`` (and ``more`` of the default level after them)
    whose host left at once (so a stand-in plays seat 0)."""
    settings = {"timers": False, "grace_seconds": 0, "bot_delay": bot_delay}
    body = {"game": game, "name": "Host", "settings": settings}
    made = await creator.create(body, deadline=time.monotonic() + 5)
    if made is None:
        return None
    code, token, addr = made
    add = f"/api/rooms/{code}/bots"
    steps: list[tuple[str, dict[str, object]]] = [(add, {"count": bots, "level": level})]
    if more:
        steps.append((add, {"count": more}))
    steps += [(f"/api/rooms/{code}/start", {}), (f"/api/rooms/{code}/leave", {})]
    for path, json_body in steps:
        r = await ctx.pool.request("POST", path, addr, token=token, json=json_body)
        if r is None or r.status_code not in (200, 201):
            raise AttackError(f"{path}: {r.status_code if r else 'no answer'} {r.text[:200] if r else ''}")
    return code, token, addr


async def _bot_metrics(ctx: Ctx) -> dict[str, float]:
    r = await ctx.pool.request("GET", "/metrics", MONITOR_ADDRESS)
    out: dict[str, float] = {}
    if r is None or r.status_code != 200:
        return out
    for line in r.text.splitlines():
        if line.startswith("conflictology_bot_") and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            with contextlib.suppress(ValueError):
                out[name] = float(value)
    return out


# A `hard` search thinks 0.3 s; with bot_delay 0.2 (0.14-0.26 s) its move comes >= 0.44 s after the
# one before. Faster than this, a `hard` seat's move was played by the stand-in.
_FASTER_THAN_A_SEARCH = 0.40


async def attack_bots_flood(ctx: Ctx) -> Row:
    window = ctx.win(30.0)
    # The victims: 3 rooms, each of one `hard` bot (seat 1; one, so that it never waits for its own
    # room's searches), 4 `normal` ones and a stand-in, from the set-up addresses.
    sockets = []
    for _ in range(3):
        victim = await _bot_room(ctx, ctx.setup, "capitol", 1, "hard", 0.2, more=4)
        if victim is None:
            raise AttackError("a victim room could not be made")
        ws, _, _ = await open_socket(ctx.url, victim[0], local=MONITOR_ADDRESS)
        if ws is None:
            raise AttackError("no spectator socket for a victim room")
        ctx.sockets.append(ws)
        sockets.append(ws)

    async def watch(seconds: float) -> _Answers:
        seen = [_Answers() for _ in sockets]
        until = time.monotonic() + seconds
        await asyncio.gather(*(_watch(ws, into, until) for ws, into in zip(sockets, seen, strict=True)))
        return _Answers([move for answers in seen for move in answers.moves])

    before = await watch(min(10.0, window / 2))
    # The flood: one address, as many rooms of 5 `hard` bots as it may make (20 asked).
    flooder = Creator(ctx.pool, [attacker(9, 0)])
    rooms = 0
    for _ in range(20):
        if await _bot_room(ctx, flooder, "capitol", 5, "hard", 0.2) is None:
            break
        rooms += 1
    log(f"  bots-flood: {rooms} rooms of 5 'hard' bots from one address")
    await asyncio.sleep(2.0)
    m0, t0 = await _bot_metrics(ctx), time.monotonic()
    async with ctx.measuring():
        during = await watch(window)
    elapsed = time.monotonic() - t0
    m1 = await _bot_metrics(ctx)

    def delta(name: str) -> float:
        return m1.get(name, 0.0) - m0.get(name, 0.0)

    def hard(answers: _Answers) -> tuple[int, int, float]:
        gaps = [gap for seat, gap in answers.moves if seat == 1]
        median = 1000 * statistics.median(gaps) if gaps else math.nan
        return len(gaps), sum(1 for gap in gaps if gap < _FASTER_THAN_A_SEARCH), median

    n0, fast0, median0 = hard(before)
    n1, fast1, median1 = hard(during)
    searches = delta("conflictology_bot_searches_total") / elapsed
    late = delta("conflictology_bot_late_total")
    return Row(
        "bots-flood",
        attempts=rooms,
        notes=(
            f"{rooms} rooms x 5 'hard' bots from one address; 3 other rooms' 'hard' moves faster than a "
            f"search: {fast1}/{n1} during ({fast0}/{n0} before), their median {fmt(median1)} ms "
            f"({fmt(median0)} before); pool {searches:.2f} searches/s, "
            f"{late:.0f} searches played by the stand-in in {elapsed:.0f} s"
        ),
        figures={"rooms": rooms, "victim_hard_moves": n1, "victim_fast_moves": fast1,
                 "victim_hard_moves_before": n0, "victim_fast_moves_before": fast0,
                 "victim_median_ms": median1, "victim_median_ms_before": median0,
                 "searches_per_s": searches, "late": late},
    )  # fmt: skip


async def attack_mystery_timing(ctx: Ctx) -> Row:
    window = ctx.win(60.0)
    rooms = 8
    made = [await _bot_room(ctx, ctx.setup, "conspiranoicos", 1, "mystery", 0.2) for _ in range(rooms)]
    watched: list[tuple[str, str, str, _Answers]] = []
    until = time.monotonic() + window
    tasks = []
    for entry in made:
        if entry is None:
            continue
        ws, _, _ = await open_socket(ctx.url, entry[0], local=MONITOR_ADDRESS)
        if ws is None:
            continue
        ctx.sockets.append(ws)
        answers = _Answers()
        watched.append((*entry, answers))
        tasks.append(spawn(_watch(ws, answers, until)))
    log(f"  mystery-timing: {len(watched)} Conspiranoicos rooms with a mystery bot, up to {window:g} s")
    m0 = await _bot_metrics(ctx)
    async with ctx.measuring():
        await asyncio.gather(*tasks)
    m1 = await _bot_metrics(ctx)
    by_level: dict[str, list[float]] = {}
    for code, _token, addr, answers in watched:
        if not answers.over:
            continue
        r = await ctx.pool.request("GET", f"/api/rooms/{code}", addr)
        if r is None or r.status_code != 200:
            continue
        level = str(r.json()["seats"][1].get("level"))
        by_level.setdefault(level, []).extend(gap for seat, gap in answers.moves if seat == 1)
    medians = {lv: 1000 * statistics.median(g) for lv, g in sorted(by_level.items()) if g}
    spread = max(medians.values()) - min(medians.values()) if len(medians) > 1 else math.nan
    name = "conflictology_bot_searches_total"
    searches = m1.get(name, 0.0) - m0.get(name, 0.0)
    text = ", ".join(f"{lv} {ms:.0f} ms" for lv, ms in medians.items()) or "no game ended"
    return Row(
        "mystery-timing",
        attempts=len(watched),
        notes=(
            f"median answer time of the mystery seat by its level (revealed at the end): {text}; "
            f"spread {fmt(spread)} ms; conflictology_bot_searches_total +{searches:.0f} over the run"
        ),
        figures={"median_ms": medians, "spread_ms": spread, "searches": searches,
                 "games_over": sum(1 for *_, a in watched if a.over)},
    )  # fmt: skip
