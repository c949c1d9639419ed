"""Issue 25, items 3, 6 and 7: a stranger taking over a name of a standing table, a kick by a seat
number that has shifted, and a host who pauses and walks away."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from benchmarks.attacks.clients import Table, start_table
from benchmarks.attacks.common import AttackError, attacker, log
from benchmarks.attacks.context import Ctx, Row

STRANGER_GAMES = 5


async def _room(ctx: Ctx, t: Table) -> dict[str, Any]:
    r = await ctx.pool.request("GET", f"/api/rooms/{t.code}", t.addrs[0])
    if r is None or r.status_code != 200:
        raise AttackError(f"room: {r.status_code if r else 'no answer'}")
    return dict(r.json())


async def _play_to_the_end(ctx: Ctx, t: Table, tokens: list[str], deadline: float) -> None:
    await start_table(ctx.pool, t)
    players = [ctx.player(t.code, tok, seed=i) for i, tok in enumerate(tokens)]
    while (await _room(ctx, t))["status"] != "over":
        if time.monotonic() > deadline:
            raise AttackError("a game did not end in time")
        await asyncio.sleep(0.2)
    for p in players:
        await p.stop()
    r = await ctx.pool.request("POST", f"/api/rooms/{t.code}/rematch", t.addrs[0], token=t.tokens[0])
    if r is None or r.status_code != 200:
        raise AttackError("rematch refused")


async def attack_name_takeover(ctx: Ctx) -> Row:
    """Bob plays a game; a stranger joins as "BOB" from new devices and plays; Bob claims."""
    deadline = time.monotonic() + ctx.win(120.0)
    settings = {"standing": True, "timers": False}
    t = await ctx.table(humans=2, settings=settings, names=["Host", "Bob"])
    host, bob = t.tokens
    addr = attacker(31, 0)
    async with ctx.measuring():
        await _play_to_the_end(ctx, t, [host, bob], deadline)
        await ctx.pool.request("POST", f"/api/rooms/{t.code}/leave", t.addrs[1], token=bob)
        names, stranger = [], ""
        for _ in range(STRANGER_GAMES):
            # A new device each time (the stranger's old seat given up first).
            if stranger:
                await ctx.pool.request("POST", f"/api/rooms/{t.code}/leave", addr, token=stranger)
            r = await ctx.pool.request("POST", f"/api/rooms/{t.code}/join", addr, json={"name": "BOB"})
            if r is None or r.status_code != 201:
                raise AttackError(f"join: {r.status_code if r else 'no answer'}")
            stranger = r.json()["token"]
            ctx.tokens.add(stranger)
            names.append((await _room(ctx, t))["seats"][-1]["name"])
            await _play_to_the_end(ctx, t, [host, stranger], deadline)
        await ctx.pool.request("POST", f"/api/rooms/{t.code}/leave", addr, token=stranger)
        bob_claim = await ctx.pool.request(
            "POST", f"/api/rooms/{t.code}/claim", t.addrs[1], json={"token": bob}
        )
        r = await ctx.pool.request("GET", f"/api/rooms/{t.code}/standings", t.addrs[0])
    rows = {p["name"]: p for p in r.json()["players"]} if r is not None else {}
    bob_row = rows.get("Bob") or rows.get("BOB") or {}
    status = bob_claim.status_code if bob_claim is not None else 0
    seated = sorted(set(names))
    log(f"  name-takeover: seated as {seated}; Bob's entry has {bob_row.get('games')} games; claim {status}")
    merged = int(bob_row.get("games", 0) > 1)
    return Row(
        "name-takeover",
        attempts=STRANGER_GAMES,
        wrongly_accepted=merged + int(status != 201),
        notes=(
            f"a stranger joining as BOB {STRANGER_GAMES} times (new devices) was seated as "
            f"{', '.join(sorted(set(names)))}; Bob's entry: {bob_row.get('games')} games, "
            f"{bob_row.get('wins')} wins (1 game his own); Bob's claim afterwards: {status}"
        ),
        figures={"names": names, "bob": bob_row, "bob_claim": status, "rows": list(rows)},
    )


async def attack_kick_race(ctx: Ctx) -> Row:
    """Seats [Host, P1, Bot]; P1 leaves; the host kicks seat 1 as they saw it (P1)."""
    wrong = 0
    tries = 10
    answers: dict[str, int] = {}
    async with ctx.measuring():
        for _ in range(tries):
            t = await ctx.table(humans=2, bots=1, level="random")
            seen = (await _room(ctx, t))["seats"]
            await ctx.pool.request("POST", f"/api/rooms/{t.code}/leave", t.addrs[1], token=t.tokens[1])
            # What an old client sends (a number), and what the web client sends now (number and id).
            for body in ({"seat": 1}, {"seat": 1, "seat_id": seen[1].get("id", "")}):
                r = await ctx.pool.request("POST", f"/api/rooms/{t.code}/kick", t.addrs[0], token=t.tokens[0],
                                           json=body)  # fmt: skip
                key = f"{'+id' if 'seat_id' in body else 'number'} {r.status_code if r else 'no answer'}"
                answers[key] = answers.get(key, 0) + 1
                after = await _room(ctx, t)
                if not any(s["bot"] for s in after["seats"]):
                    wrong += 1
                    break
    log(f"  kick-race: the bot removed in {wrong} of {tries} rooms; answers {answers}")
    return Row(
        "kick-race",
        attempts=tries,
        wrongly_accepted=wrong,
        notes=f"P1 left, the host kicked seat 1 (meaning P1): the bot was removed in {wrong} of {tries} "
        f"rooms; answers {answers}",
        figures={"answers": answers, "wrong": wrong},
    )


async def attack_abandoned_pause(ctx: Ctx) -> Row:
    """The host pauses and goes; the other seated player tries to resume."""
    t = await ctx.table(humans=2)
    guest = ctx.player(t.code, t.tokens[1], act=False)
    async with ctx.measuring():
        await start_table(ctx.pool, t)
        r = await ctx.pool.request("POST", f"/api/rooms/{t.code}/pause", t.addrs[0], token=t.tokens[0])
        if r is None or r.status_code != 200:
            raise AttackError(f"pause: {r.status_code if r else 'no answer'}")
        until = r.json()["pause"]["until"]
        since = r.json()["pause"]["since"]
        await asyncio.sleep(1.0)
        r = await ctx.pool.request("POST", f"/api/rooms/{t.code}/resume", t.addrs[1], token=t.tokens[1])
    status = (
        r.json().get("code", r.status_code)
        if r is not None and r.status_code != 200
        else (r and r.status_code)
    )
    await guest.stop()
    bound = "none" if until is None else f"{until - since:g} s"
    log(f"  abandoned-pause: the guest's resume: {status}; the pause ends by itself after: {bound}")
    return Row(
        "abandoned-pause",
        attempts=1,
        wrongly_accepted=int(status != 200) + int(until is None),
        notes=f"the host paused with no socket open; the other player's resume: {status}; the pause's end "
        f"by itself: {bound}",
        figures={"resume": status, "until": until, "since": since},
    )
