"""Issue 25 item 1: games that never end, and the replay of a long one requested in a flood.

``long-game``: two seats claim the Reporter, let each other's claim pass and keep their hands, turn
after turn (every move inside every limit). The stalemate rule ends the game (40 quiet turns by
default); before it, nothing did. Figures: the decisions until the end, the largest message.

``replay-flood``: six seats loop Police investigations with the most quiet turns the option allows
(200: the longest game the rules let anyone play, ~1,600 decisions), then one address asks for its
replay five times at once and then twice a second, while the probe plays in another room. Figures:
the replay's size, the requests' times, the server's RSS (before, peak, after) and its child
processes' (the fork server and a replay's build: ``--replay-workers``), the probe's p99.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from typing import Any

from websockets.asyncio.client import ClientConnection

from benchmarks.attacks.clients import Player, start_table
from benchmarks.attacks.common import AttackError, attacker, spawn
from benchmarks.attacks.context import Ctx, Row

LOOP = ("reporter", "police_investigate", "pass", "let_keep")
MOVES_MAX = 2_500  # the attack's own bound: far past the rules' hard cap of 2,000 decisions


class Looper(Player):
    """A seat that never makes the game progress: the first of ``prefer`` among its legal actions,
    a kept hand as it was; it records the largest message it received."""

    prefer: tuple[str, ...] = LOOP
    largest = 0
    over: asyncio.Event

    def _on(self, ws: ClientConnection, msg: dict[str, Any]) -> None:
        self.largest = max(self.largest, len(json.dumps(msg)))
        if msg.get("type") == "state" and msg.get("winners") is not None:
            self.over.set()
        super()._on(ws, msg)

    def _act(self, ws: ClientConnection) -> None:
        self._timer = None
        msg = self.last
        if self.paused or self._stop or ws is not self._ws or msg is None or not msg.get("legal"):
            return
        if msg["seq"] <= self._answered or self.sent >= MOVES_MAX:
            return
        legal = msg["legal"]
        action = next((a for kind in self.prefer for a in legal if a["type"] == kind), legal[0])
        self._answered = msg["seq"]
        self.pending = (msg["seq"], time.perf_counter(), time.time())
        self.sent += 1
        spawn(ws.send(json.dumps({"type": "act", "action": action, "seq": msg["seq"]})))


async def _loop_game(ctx: Ctx, seats: int, options: dict[str, Any], prefer: tuple[str, ...],
                     window: float) -> tuple[list[Looper], str | None, float]:  # fmt: skip
    """Seat ``seats`` loopers in a public room and let them play until the game ends or ``window``."""
    try:
        t = await ctx.table(humans=seats, settings={"public": True}, options=options)
    except AttackError:
        t = await ctx.table(humans=seats, settings={"public": True})  # a server without the option
    over = asyncio.Event()
    loopers: list[Looper] = []
    for i in range(seats):
        p = Looper(ctx.url, t.code, t.tokens[i], ctx.tally, local=attacker(11, i), seed=i)
        p.prefer = prefer
        p.over = over
        loopers.append(p)
        ctx.players.append(p.start())
    began = time.monotonic()
    await start_table(ctx.pool, t)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(over.wait(), window)
    game_id = None
    for p in loopers:
        if p.last is not None:
            game_id = (p.last.get("room") or {}).get("game_id") or game_id
    return loopers, game_id if over.is_set() else None, time.monotonic() - began


async def attack_long_game(ctx: Ctx) -> Row:
    async with ctx.measuring():
        loopers, game_id, took = await _loop_game(ctx, 2, {}, ("reporter", "pass"), ctx.win(60))
    moves = sum(p.moves for p in loopers)  # the actions answered by a new state: the decisions played
    largest = max(p.largest for p in loopers)
    ended = "ended by the stalemate rule" if game_id else "NOT ended"
    return Row(
        "endless-game",
        attempts=moves,
        notes=f"two seats looping Reporter claims: {ended} after {moves:,} decisions in {took:.1f} s; "
              f"largest message {largest / 1024:,.1f} KB",
        figures={"decisions": moves, "ended": bool(game_id), "seconds": took, "largest_message": largest},
    )  # fmt: skip


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _descendants(pid: int) -> list[int]:
    """The server's processes below it (the fork server, a replay's build, bot workers)."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        children: list[int] = []
        # Each thread's own children (the fork server is started from a thread of the server).
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{parent}/task"):
                with contextlib.suppress(OSError), open(f"/proc/{parent}/task/{task}/children") as f:
                    children += [int(c) for c in f.read().split()]
        found += children
        todo += children
    return found


def _children_rss_mb(pid: int) -> float:
    """What the processes below the server hold, in all (shared pages counted in each: a bound)."""
    total = 0.0
    for child in _descendants(pid):
        with contextlib.suppress(OSError, ValueError):
            total += _rss_mb(child)
    return total


async def attack_replay_flood(ctx: Ctx) -> Row:
    loopers, game_id, took = await _loop_game(
        ctx, 6, {"stalemate_turns": 200}, ("police_investigate", "pass", "let_keep"), 400
    )
    moves = sum(p.sent for p in loopers)
    if game_id is None:
        raise AttackError(f"the long game did not end ({moves:,} decisions in {took:.0f} s)")
    for p in loopers:
        await p.stop()
    assert ctx.server.proc is not None
    pid = ctx.server.proc.pid
    rss0, children0 = _rss_mb(pid), _children_rss_mb(pid)
    peak, children_peak = rss0, children0
    stop = asyncio.Event()

    async def watch() -> None:
        nonlocal peak, children_peak
        while not stop.is_set():
            peak = max(peak, _rss_mb(pid))
            children_peak = max(children_peak, _children_rss_mb(pid))
            await asyncio.sleep(0.05)

    path = f"/api/games/{game_id}/replay"
    times: list[float] = []
    sizes: set[int] = set()
    statuses: list[int] = []
    steps: list[int] = []

    async def ask() -> None:
        t0 = time.perf_counter()
        r = await ctx.pool.request("GET", path, attacker(11, 10))
        times.append(time.perf_counter() - t0)
        statuses.append(r.status_code if r is not None else 0)
        if r is not None and r.status_code == 200:
            sizes.add(len(r.content))
            if not steps:
                steps.append(len(r.json()["steps"]) - 1)  # the decisions the game really played

    watcher = asyncio.ensure_future(watch())
    async with ctx.measuring():
        await asyncio.gather(*(ask() for _ in range(5)))
        end = time.monotonic() + ctx.win(15)
        while time.monotonic() < end:
            await ask()
            await asyncio.sleep(0.5)
    stop.set()
    await watcher
    rss1, children1 = _rss_mb(pid), _children_rss_mb(pid)
    size = max(sizes) if sizes else 0
    ok = sum(1 for s in statuses if s == 200)
    played = steps[0] if steps else 0
    return Row(
        "replay-flood",
        attempts=len(statuses),
        notes=f"a {played:,}-decision game's replay ({size / 1e6:.1f} MB; {moves:,} actions sent) "
              f"asked 5× at once then at 2/s: "
              f"{ok}/{len(statuses)} answered 200, slowest {max(times):.2f} s, median "
              f"{sorted(times)[len(times) // 2]:.3f} s; "
              f"server RSS {rss0:.0f} → peak {peak:.0f} → {rss1:.0f} MB, "
              f"its child processes {children0:.0f} → peak {children_peak:.0f} → {children1:.0f} MB",
        figures={"decisions": played, "sent": moves, "replay_bytes": size, "requests": len(statuses),
                 "ok": ok,
                 "slowest_s": max(times), "rss_mb": [rss0, peak, rss1],
                 "children_rss_mb": [children0, children_peak, children1]},
    )  # fmt: skip
