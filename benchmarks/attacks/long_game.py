"""Issue 25, item 1: a Capitol game that never ends, watched. Two seats claim the Reporter, let each
other pass and keep their cards, as fast as their sockets' limits allow; spectators watch, half of
them with log deltas (``?v=2``) and half without; then the host toggles the pause. Counted: the
bytes and the largest message each kind of spectator received, and the bytes one pause toggle sends.
A v1 socket is sent what every socket was sent before deltas (tests/server/test_messages.py checks
the bytes), so the two halves are the before and the after in one run (``--server-src`` of main:
both halves are sent whole)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from benchmarks.attacks.clients import start_table
from benchmarks.attacks.common import AttackError, attacker, log, spawn, ws_base
from benchmarks.attacks.context import Ctx, Row

# Each seat acts at most this often: under the socket's 20 messages/s, so nothing is refused.
ACTS_PER_SECOND = 15.0
PAUSE_TOGGLES = 10
BLOCK = 11  # the spectators' attacker block (benchmarks/attacks/common.attacker)


def pick(legal: list[dict[str, Any]]) -> dict[str, Any]:
    for kind in ("reporter", "pass", "keep"):
        for action in legal:
            if action["type"] == kind:
                return action
    return legal[0]


class Watcher:
    """A spectator socket: bytes and messages received, the largest, the log it holds."""

    def __init__(self, ws: ClientConnection, deltas: bool) -> None:
        self.ws, self.deltas = ws, deltas
        self.bytes = self.messages = self.largest = 0
        self.log: list[Any] = []
        self.gaps = 0
        self.seq = -1

    async def read(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for raw in self.ws:
                text = raw if isinstance(raw, str) else raw.decode()
                size = len(text.encode())
                self.bytes += size
                self.messages += 1
                self.largest = max(self.largest, size)
                msg = json.loads(text)
                if msg.get("type") != "state":
                    continue
                start = msg.get("log_from", 0)
                if start > len(self.log):
                    self.gaps += 1
                    continue
                self.log = self.log[:start] + msg["view"]["log"]
                self.seq = msg["seq"]


async def attack_long_game(ctx: Ctx) -> Row:
    target = ctx.args.long_actions
    budget = ctx.win(90.0)
    settings = {"public": True, "timers": False}
    try:  # the stalemate rule at its longest (200 quiet turns: about 600 actions of this loop)
        t = await ctx.table(humans=2, settings=settings, options={"first_player": 0, "stalemate_turns": 200})
    except AttackError:  # a server from before the rule
        t = await ctx.table(humans=2, settings=settings, options={"first_player": 0})
    base = f"{ws_base(ctx.url)}/ws/{t.code}"
    watchers: list[Watcher] = []
    for i in range(ctx.args.long_spectators):
        deltas = i % 2 == 1
        url = base + ("?v=2" if deltas else "")
        ws = await connect(url, max_size=1 << 24, local_addr=(attacker(BLOCK, i), 0))
        ctx.sockets.append(ws)
        watchers.append(Watcher(ws, deltas))
        spawn(watchers[-1].read())
    await start_table(ctx.pool, t)
    actions = 0
    done = asyncio.Event()

    async def seat(i: int) -> None:
        nonlocal actions
        url = f"{base}?token={t.tokens[i]}&v=2"
        async with connect(url, max_size=1 << 24, local_addr=(t.homes[i], 0)) as ws:
            last = 0.0
            async for raw in ws:
                if done.is_set():
                    return
                msg = json.loads(raw)
                if msg.get("type") != "state" or not msg["legal"]:
                    continue
                await asyncio.sleep(max(0.0, last + 1 / ACTS_PER_SECOND - time.monotonic()))
                last = time.monotonic()
                await ws.send(json.dumps({"type": "act", "action": pick(msg["legal"]), "seq": msg["seq"]}))
                actions += 1
                if actions >= target:
                    done.set()
                    return

    t0 = time.monotonic()
    async with ctx.measuring():
        players = [spawn(seat(0)), spawn(seat(1))]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), budget)
        done.set()
        for p in players:
            p.cancel()
    played = time.monotonic() - t0
    await asyncio.sleep(1.0)  # the last states reach the spectators
    before = {w: w.bytes for w in watchers}
    for k in range(PAUSE_TOGGLES):
        path = f"/api/rooms/{t.code}/{'pause' if k % 2 == 0 else 'resume'}"
        await ctx.pool.request("POST", path, t.addrs[0], token=t.tokens[0])
    await asyncio.sleep(1.0)
    r = await ctx.pool.request("GET", f"/api/rooms/{t.code}", t.addrs[0])
    status = r.json()["status"] if r is not None and r.status_code == 200 else "?"

    def group(deltas: bool) -> dict[str, Any]:
        ws = [w for w in watchers if w.deltas == deltas]
        per_toggle = sum(w.bytes - before[w] for w in ws) / max(1, len(ws)) / PAUSE_TOGGLES
        return {
            "sockets": len(ws),
            "mb_received": round(sum(w.bytes for w in ws) / 1e6, 2),
            "largest_kb": round(max((w.largest for w in ws), default=0) / 1e3, 1),
            "kb_per_pause_toggle_per_socket": round(per_toggle / 1e3, 1),
            "gaps": sum(w.gaps for w in ws),
        }

    whole, delta = group(False), group(True)
    # What the delta spectators joined must be the log the whole ones were sent.
    logs = {json.dumps(w.log) for w in watchers if w.seq == max(x.seq for x in watchers)}
    same = len(logs) == 1
    log(f"  long-game: {actions} actions in {played:.0f} s ({status}); whole: {whole}; deltas: {delta}")
    return Row(
        "long-game",
        attempts=actions,
        leaks=0 if same else 1,
        notes=(
            f"{actions} actions in {played:.0f} s, the game {status}; {whole['sockets']} spectators "
            f"sent whole views got {whole['mb_received']} MB (largest {whole['largest_kb']} KB, "
            f"{whole['kb_per_pause_toggle_per_socket']} KB per pause toggle), {delta['sockets']} with log "
            f"deltas {delta['mb_received']} MB (largest {delta['largest_kb']} KB, "
            f"{delta['kb_per_pause_toggle_per_socket']} KB per toggle); joined logs equal: {same}"
        ),
        figures={"actions": actions, "seconds": round(played, 1), "whole": whole, "deltas": delta,
                 "logs_equal": same, "status": status},
    )  # fmt: skip
