"""The run: the list of attacks, each against its own server with the probe meanwhile, and the table."""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import benchmarks.attacks
from benchmarks.attacks.bots import attack_bots, attack_bots_flood, attack_bots_hard, attack_mystery_timing
from benchmarks.attacks.clients import Tally
from benchmarks.attacks.common import TRACEBACK, fmt, log, raise_own_file_limit
from benchmarks.attacks.context import Ctx, Row
from benchmarks.attacks.db_outage import attack_db_outage
from benchmarks.attacks.defences import attack_defences
from benchmarks.attacks.guessing import attack_guessing
from benchmarks.attacks.kill9 import attack_kill9
from benchmarks.attacks.log_flood import attack_log_flood
from benchmarks.attacks.long_game import attack_long_game
from benchmarks.attacks.long_games import attack_long_game as attack_endless_game
from benchmarks.attacks.long_games import attack_replay_flood
from benchmarks.attacks.proxies import SERVE as PROXY_SERVE
from benchmarks.attacks.proxies import attack_appending_proxy
from benchmarks.attacks.redis_outage import attack_redis_outage
from benchmarks.attacks.room_flood import attack_room_flood
from benchmarks.attacks.servers import Probe, RedisProc, ServerProc, probe_child
from benchmarks.attacks.slow_clients import attack_slowloris
from benchmarks.attacks.spectators import attack_spectators, attack_sync_flood
from benchmarks.attacks.tables import attack_abandoned_pause, attack_kick_race, attack_name_takeover


@dataclass
class Attack:
    name: str
    fn: Callable[[Ctx], Awaitable[Row]]
    about: str
    budget: Callable[[argparse.Namespace], float]  # seconds; the attack is cut off after this
    nofile: int | None = None
    needs_redis: bool = False
    serve: tuple[str, ...] = ()  # more flags for its server


def _d(args: argparse.Namespace, default: float) -> float:
    return float(args.duration) if args.duration else default


ATTACKS = [
    Attack("bots", attack_bots, "unbounded bot levels; a room of random bots; SIGTERM; restart",
           lambda a: 3 * _d(a, 15) + 150),
    Attack("bots-hard", attack_bots_hard, "50 rooms of hard bots", lambda a: _d(a, 20) + 180),
    Attack("bots-flood", attack_bots_flood, "one address's 20 rooms of hard bots; another room's hard bots",
           lambda a: _d(a, 30) + 150),
    Attack("mystery-timing", attack_mystery_timing, "a mystery bot's answer time by its level",
           lambda a: _d(a, 60) + 120),
    Attack("guessing", attack_guessing, "random GET /api/rooms/{code} with many live rooms",
           lambda a: a.create_budget + _d(a, 15) + 120),
    Attack("slowloris", attack_slowloris, "slow headers with a 1,024 open-file limit",
           lambda a: _d(a, 40) + 120, nofile=1024),
    Attack("spectators", attack_spectators, "a room filled with spectators; a player's reconnects",
           lambda a: 180),
    Attack("sync-flood", attack_sync_flood, "spectator sockets spamming sync", lambda a: _d(a, 10) + 120),
    Attack("room-flood", attack_room_flood, "one address creating rooms; the room list",
           lambda a: _d(a, 60) + _d(a, 10) + 120),
    Attack("kill9", attack_kill9, "kill -9 at random moments; seen moves after the restart",
           lambda a: a.kills * 40 + 120),
    Attack("redis-outage", attack_redis_outage, "Redis stopped and restarted (with --redis)",
           lambda a: a.outage + 150, needs_redis=True),
    Attack("db-outage", attack_db_outage, "PostgreSQL (the archive) stopped and restarted mid-play",
           lambda a: a.outage + 120),
    Attack("log-flood", attack_log_flood, "invalid UTF-8 WebSocket frames", lambda a: 120 + a.bad_frames / 5),
    Attack("defences", attack_defences, "headers, DNS rebinding, names", lambda a: 60),
    Attack("appending-proxy", attack_appending_proxy, "forged X-Forwarded-For through nginx appending it",
           lambda a: 90, serve=PROXY_SERVE),
    Attack("name-takeover", attack_name_takeover, "a stranger under a standing table's name",
           lambda a: _d(a, 120) + 60),
    Attack("kick-race", attack_kick_race, "a kick by a seat number that shifted", lambda a: 60),
    Attack("abandoned-pause", attack_abandoned_pause, "the host pauses and walks away", lambda a: 60),
    Attack("long-game", attack_long_game, "a Capitol game that never ends, watched; pause toggles",
           lambda a: _d(a, 90) + 120),
    Attack("endless-game", attack_endless_game, "two seats looping Reporter claims (the stalemate rule)",
           lambda a: _d(a, 60) + 60),
    Attack("replay-flood", attack_replay_flood, "a long game's replay asked 5× at once, then at 2/s",
           lambda a: 400 + _d(a, 15) + 60),
]  # fmt: skip


def _token_leaks(text: str, tokens: set[str]) -> int:
    """Tokens of the attack's seats that appear in the server's logs."""
    if not tokens:
        return 0
    return sum(1 for word in set(re.findall(r"[A-Za-z0-9_-]{32}", text)) if word in tokens)


async def run_attack(attack: Attack, args: argparse.Namespace, base: Path) -> Row:
    workdir = base / attack.name
    workdir.mkdir(parents=True, exist_ok=True)
    redis = RedisProc(workdir) if args.redis else None
    server = ServerProc(
        workdir,
        args.server_src,
        [*args.serve_args.split(), *attack.serve],
        redis.url if redis else None,
        attack.nofile,
    )
    probe: Probe | None = None
    ctx: Ctx | None = None
    row = Row(attack.name)
    probe_stats: dict[str, Any] = {}
    log(f"{attack.name}: {attack.about}")
    try:
        if redis is not None:
            await redis.start()
        await server.start()
        probe = Probe(server.url, workdir, args.probe_think, args.seed)
        await probe.start()
        ctx = Ctx(args, server, redis, probe)
        ctx.tally.expect_drops = False
        began = time.time()
        try:
            row = await asyncio.wait_for(attack.fn(ctx), attack.budget(args))
        except (Exception, TimeoutError) as exc:
            row = Row(attack.name, failed=f"{type(exc).__name__}: {exc}"[:300])
            row.notes = f"FAILED: {row.failed}"
            log(f"  {attack.name} failed: {row.failed}")
        if not ctx.windows:
            ctx.windows.append((began, time.time()))  # the whole attack, when it named no window
        if ctx.probe_stats is not None:
            probe_stats = ctx.probe_stats
        elif ctx.windows:
            probe_stats = await probe.stats(ctx.windows)
    finally:
        if probe is not None:
            probe.stop()
        if ctx is not None:
            ctx.tally.expect_drops = True
            await ctx.close()
        died_before_stop = server.deaths
        server._check_death()
        await server.stop()
        if redis is not None:
            redis.stop()
    tally = ctx.tally if ctx is not None else Tally()
    text = server.logs()
    detail = {
        "5xx": tally.server_errors + int(probe_stats.get("server_errors", 0)),
        "drops": tally.drops + int(probe_stats.get("drops", 0)),
        "deaths": max(server.deaths, died_before_stop),
        "tracebacks": text.count(TRACEBACK),
    }
    row.crash_detail = detail
    row.crashes = sum(detail.values())
    row.leaks += (
        tally.leaks + int(probe_stats.get("leaks", 0)) + _token_leaks(text, ctx.tokens if ctx else set())
    )
    row.probe_p50_ms = float(probe_stats.get("p50_ms", math.nan))
    row.probe_p99_ms = float(probe_stats.get("p99_ms", math.nan))
    row.probe_moves = probe_stats.get("moves")
    row.figures["probe"] = probe_stats
    row.figures["tally_samples"] = tally.samples
    row.figures["refusals_503"] = tally.refusals_503
    row.figures["loadavg_1m"] = os.getloadavg()[0]
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return row


def _crash_cell(row: Row) -> str:
    parts = [f"{k} {v}" for k, v in row.crash_detail.items() if v]
    return f"{row.crashes} ({', '.join(parts)})" if parts else str(row.crashes)


def _cells(row: Row) -> list[str]:
    def n(x: int | None) -> str:
        return "–" if x is None else f"{x:,}"

    probe = row.probe_moves
    return [
        row.attack,
        n(row.attempts),
        n(row.wrongly_accepted),
        _crash_cell(row),
        n(row.leaks),
        n(row.lost_moves),
        fmt(row.probe_p50_ms, 1),
        fmt(row.probe_p99_ms, 1),
        "–" if probe is None else f"{probe:,}",
        row.notes,
    ]


HEADERS = ["attack", "attempts", "wrongly accepted", "crashes", "leaks", "lost moves", "probe p50 ms",
           "probe p99 ms", "probe moves", "notes"]  # fmt: skip


def print_table(rows: list[Row], markdown: bool) -> None:
    cells = [_cells(r) for r in rows]
    if markdown:
        print("| " + " | ".join(HEADERS) + " |")
        print("|" + "|".join("---" if i in (0, 9) else "---:" for i in range(len(HEADERS))) + "|")
        for c in cells:
            print("| " + " | ".join(x.replace("|", "\\|") for x in c) + " |")
        return
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(HEADERS[:-1])]
    print(
        "  ".join(
            h.ljust(w) if i == 0 else h.rjust(w)
            for i, (h, w) in enumerate(zip(HEADERS, widths, strict=False))
        )
        + "  notes"
    )
    for c in cells:
        head = "  ".join(
            x.ljust(w) if i == 0 else x.rjust(w) for i, (x, w) in enumerate(zip(c, widths, strict=False))
        )
        print(f"{head}  {c[-1]}")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.attacks",
        description=benchmarks.attacks.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    names = ", ".join(a.name for a in ATTACKS)
    ap.add_argument("--only", help=f"comma-separated attacks ({names})")
    ap.add_argument(
        "--duration", type=float, help="every attack's main window in seconds (default: each its own)"
    )
    ap.add_argument(
        "--redis", action="store_true", help="run the server on a private redis-server (adds redis-outage)"
    )
    ap.add_argument("--json", action="store_true", help="also print one JSON line per attack")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--server-src", help="run the server from this src directory (default: PYTHONPATH as is)")
    ap.add_argument("--serve-args", default="", help="more flags for `serve`")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--keep", action="store_true", help="keep the attacks' directories (server logs) and say where"
    )
    ap.add_argument(
        "--probe-think", type=float, default=0.05, help="the probe players' pause before a move (s)"
    )
    ap.add_argument("--hard-rooms", type=int, default=50)
    ap.add_argument("--guess-rooms", type=int, default=1500, help="live rooms made before guessing")
    ap.add_argument("--create-budget", type=float, default=90.0, help="seconds allowed to make them")
    ap.add_argument("--guess-connections", type=int, default=32)
    ap.add_argument("--slow-conns", type=int, default=1500)
    ap.add_argument("--max-spectators", type=int, default=1000, help="spectator sockets tried at most")
    ap.add_argument("--sync-sockets", type=int, default=200)
    ap.add_argument("--sync-depth", type=int, default=8, help="syncs in flight per spamming socket")
    ap.add_argument("--kills", type=int, default=3, help="kill -9s (the issue asks for >= 100)")
    ap.add_argument("--kill-rooms", type=int, default=10)
    ap.add_argument("--outage", type=float, default=4.0, help="seconds Redis (or PostgreSQL) stays down")
    ap.add_argument("--outage-rooms", type=int, default=8)
    ap.add_argument("--bad-frames", type=int, default=300)
    ap.add_argument("--long-actions", type=int, default=500, help="actions of the long game (<= ~600)")
    ap.add_argument("--long-spectators", type=int, default=10, help="its spectators (half with deltas)")
    ap.add_argument("--probe-child", metavar="URL", help=argparse.SUPPRESS)
    return ap.parse_args(argv)


async def main_async(args: argparse.Namespace) -> list[Row]:
    raise_own_file_limit()
    wanted = [a for a in ATTACKS if not a.needs_redis or args.redis]
    if args.only:
        names = {n.strip() for n in args.only.split(",") if n.strip()}
        unknown = names - {a.name for a in ATTACKS}
        if unknown:
            raise SystemExit(f"unknown attack(s): {', '.join(sorted(unknown))}")
        wanted = [a for a in ATTACKS if a.name in names]
        if any(a.needs_redis for a in wanted) and not args.redis:
            raise SystemExit("redis-outage needs --redis")
    base = Path(tempfile.mkdtemp(prefix="cfy-attacks-"))
    rows = []
    t0 = time.monotonic()
    try:
        for attack in wanted:
            rows.append(await run_attack(attack, args, base))
    finally:
        if args.keep:
            log(f"logs kept in {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    log(f"done in {time.monotonic() - t0:.0f} s")
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    if args.probe_child:
        asyncio.run(probe_child(args.probe_child, args.probe_think, args.seed))
        return
    rows = asyncio.run(main_async(args))
    src = args.server_src or os.environ.get("PYTHONPATH", "(installed package)")
    print(f"\nserver from {src}{' with --redis' if args.redis else ''}; {os.cpu_count()} cores; "
          f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    print_table(rows, args.markdown)
    if args.json:
        for row in rows:
            print(json.dumps(asdict(row), default=str))
