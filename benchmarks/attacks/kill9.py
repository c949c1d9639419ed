"""Item 6: kill -9 at random moments. Every client records each state it receives; after each kill
and restart, a room's seq must not be below the last one seen, and the log seen must be a prefix of
the log now. :func:`kill9` runs it on a server of its own, for a test."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import math
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.attacks.clients import (
    Creator,
    HttpPool,
    Player,
    Table,
    Tally,
    auto_rematch,
    make_table,
    open_socket,
    start_table,
)
from benchmarks.attacks.common import SETUP_ADDRESSES, AttackError, log
from benchmarks.attacks.context import Ctx, Row
from benchmarks.attacks.servers import RedisProc, ServerProc


@dataclass
class Kill9Result:
    """Over ``kills`` kill -9s of a server with ``rooms`` rooms playing: each room checked after
    each restart against every state its players had seen."""

    kills: int
    rooms: int
    room_checks: int = 0
    lost_seen_moves: int = 0  # seen seqs the room no longer reaches (summed over checks)
    rooms_with_lost_moves: int = 0  # checks where a seen move was lost or replaced
    divergent_rooms: int = 0  # checks where a different move took the place of a seen one
    moves: int = 0  # moves the scripted players made
    restart_seconds: list[float] = field(default_factory=list)
    details: list[str] = field(default_factory=list)


def _lost(seen_seq: int, seen_log: list[Any], now_seq: int, now_log: list[Any]) -> tuple[int, bool]:
    """(seen moves lost, whether a different move took a seen one's place). A seen move is lost
    when the room's seq is now below the one seen, or the log seen is not a prefix of the log now;
    it was replaced when the two logs differ where both have entries."""
    divergent = any(a != b for a, b in zip(seen_log, now_log, strict=False))
    lost = max(0, seen_seq - now_seq)
    if lost == 0 and now_log[: len(seen_log)] != seen_log:
        lost = 1  # the seq caught up, but not with the moves seen
    return lost, divergent


async def _check_room(
    url: str, pool: HttpPool, table: Table, seen: list[dict[Any, tuple[int, int, list[Any]]]]
) -> tuple[int, bool, str]:
    """Compare what the room's players saw before the kill with the room now (its host's first
    message on a new socket), or with the archived game when the game seen is no longer the
    room's current one."""
    now: dict[str, Any] | None = None
    ws, status, _ = await open_socket(url, table.code, token=table.tokens[0], local=table.homes[15])
    if ws is None:
        return 0, False, f"{table.code}: host refused ({status})"
    try:
        now = json.loads(await asyncio.wait_for(ws.recv(), 10))
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(ws.close(), 2)
    now_game = (now.get("room") or {}).get("game_id")
    lost, divergent, notes = 0, False, []
    for per_seat in seen:
        for game_id, (first, seq, entries) in per_seat.items():
            if game_id is None:
                continue
            if now.get("type") == "state" and game_id == now_game:
                n, d = _lost(seq, entries, int(now["seq"]), list(now["view"].get("log") or []))
            else:
                # A private room's finished game is read with one of its players' tokens.
                r = await pool.request("GET", f"/api/games/{game_id}", table.addrs[0], token=table.tokens[0])
                if r is None or r.status_code != 200:
                    n, d = seq - first + 1, False  # the game seen is gone, with every move seen of it
                    notes.append(f"GET /api/games/{str(game_id)[:8]}: {r.status_code if r else 'no answer'}")
                else:
                    record = r.json()
                    last = max((a["seq"] for a in record.get("actions", [])), default=-1)
                    if record.get("status") != "over":
                        last = seq  # a live replay has no seq: only the log is compared
                    n, d = _lost(seq, entries, last, list(record.get("log") or []))
            note = f"{table.code} game {str(game_id)[:8]}: seen seq {seq}, lost {n}, replaced {d}"
            if (n or d) and note not in notes:
                notes.append(note)
            lost = max(lost, n)
            divergent = divergent or d
    return lost, divergent, "; ".join(notes)


async def kill9_rounds(
    server: ServerProc,
    pool: HttpPool,
    tally: Tally,
    kills: int,
    rooms: int,
    rng: random.Random,
    play_seconds: tuple[float, float] = (0.5, 2.5),
    tokens: set[str] | None = None,
    expect_drops: Callable[[bool], Awaitable[None]] | None = None,
) -> Kill9Result:
    creator = Creator(pool, SETUP_ADDRESSES)
    result = Kill9Result(kills=kills, rooms=rooms)
    tables: list[Table] = []
    players: list[list[Player]] = []
    try:
        delay = 0.05
        for _ in range(rooms):
            # Fast bots and fast players, so a kill lands among many moves in flight (a server that
            # sets a floor to a room's bot delay gets its floor).
            try:
                t = await make_table(
                    pool, creator, humans=2, bots=2, level="random", settings={"bot_delay": delay}
                )
            except AttackError as exc:
                if "bot_delay" not in str(exc) or delay == 0.2:
                    raise
                delay = 0.2
                t = await make_table(
                    pool, creator, humans=2, bots=2, level="random", settings={"bot_delay": delay}
                )
            await start_table(pool, t)
            if tokens is not None:
                tokens.update(t.tokens)
            tables.append(t)
            players.append([
                Player(server.url, t.code, tok, tally, local=t.homes[i], think=0.03, seed=rng.getrandbits(32),
                       record_seen=True, on_over=auto_rematch(pool, t) if i == 0 else None).start()
                for i, tok in enumerate(t.tokens)
            ])  # fmt: skip
        for p in (p for ps in players for p in ps):
            await asyncio.wait_for(p.got_state.wait(), 30)
        for k in range(kills):
            await asyncio.sleep(rng.uniform(*play_seconds))
            tally.expect_drops = True
            if expect_drops is not None:
                await expect_drops(True)
            server.kill9()
            # The kernel closes every socket of the dead process; what the clients read until then
            # was seen.
            every = [p for ps in players for p in ps]
            deadline = time.monotonic() + 5
            while any(p.open for p in every) and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            for p in every:
                p.paused = True
            seen = [[dict(p.seen) for p in ps] for ps in players]
            for p in every:
                p.seen.clear()
            result.restart_seconds.append(await server.start())
            for t, s in zip(tables, seen, strict=True):
                lost, divergent, note = await _check_room(server.url, pool, t, s)
                result.room_checks += 1
                result.lost_seen_moves += lost
                result.rooms_with_lost_moves += bool(lost or divergent)
                result.divergent_rooms += divergent
                if note:
                    result.details.append(f"kill {k + 1}: {note}")
            tally.expect_drops = False
            if expect_drops is not None:
                await expect_drops(False)
            for p in every:
                p.resume()
            log(f"  kill9: kill {k + 1}/{kills}: {result.rooms_with_lost_moves} checks lost a move so far")
    finally:
        result.moves = sum(p.sent for ps in players for p in ps)
        for ps in players:
            for p in ps:
                await p.stop()
    return result


def kill9(
    kills: int = 3,
    rooms: int = 8,
    *,
    server_src: str | None = None,
    serve_args: Sequence[str] = (),
    seed: int = 0,
    redis: bool = False,
    play_seconds: tuple[float, float] = (0.5, 2.5),
) -> Kill9Result:
    """The kill -9 attack on a server of its own (``server_src``: a ``src`` directory to run the
    server from; default: where this interpreter finds ``conflictology``, so a test measures the
    code it imports). For a test: ``assert kill9(kills=5).lost_seen_moves == 0``."""
    if server_src is None:
        spec = importlib.util.find_spec("conflictology")  # found, not imported: the tool stays outside
        if spec is not None and spec.origin is not None:
            server_src = str(Path(spec.origin).resolve().parent.parent)

    async def main() -> Kill9Result:
        workdir = Path(tempfile.mkdtemp(prefix="cfy-kill9-"))
        redis_proc = RedisProc(workdir) if redis else None
        server = ServerProc(workdir, server_src, serve_args, redis_proc.url if redis_proc else None)
        tally = Tally()
        pool = HttpPool(server.url, tally)
        try:
            if redis_proc is not None:
                await redis_proc.start()
            await server.start()
            return await kill9_rounds(server, pool, tally, kills, rooms, random.Random(seed), play_seconds)
        finally:
            await pool.aclose()
            await server.stop()
            if redis_proc is not None:
                redis_proc.stop()
            shutil.rmtree(workdir, ignore_errors=True)

    return asyncio.run(main())


async def attack_kill9(ctx: Ctx) -> Row:
    async with ctx.measuring():
        result = await kill9_rounds(
            ctx.server,
            ctx.pool,
            ctx.tally,
            ctx.args.kills,
            ctx.args.kill_rooms,
            ctx.rng,
            tokens=ctx.tokens,
            expect_drops=ctx.probe.expect_drops if ctx.probe is not None else None,
        )
    restart = statistics.median(result.restart_seconds) if result.restart_seconds else math.nan
    return Row(
        "kill9",
        attempts=result.kills,
        lost_moves=result.lost_seen_moves,
        notes=(
            f"{result.rooms} rooms × {result.kills} kill -9s: {result.room_checks} room checks, "
            f"{result.rooms_with_lost_moves} with a seen move lost, {result.divergent_rooms} of them with a "
            f"different move in its place; {result.moves:,} player moves; restart {restart:.1f} s"
        ),
        figures=asdict(result),
    )
