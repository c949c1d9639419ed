"""Item 2: guessing room codes with many live rooms, over raw HTTP connections."""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections import Counter

from benchmarks.attacks.common import CODE_ALPHABET, LIVE_ROOMS, AttackError, attacker, log
from benchmarks.attacks.context import Ctx, Row


class RawHttp:
    """A bare HTTP/1.1 keep-alive connection: an attacker's guesses cost it almost nothing."""

    def __init__(self, host: str, port: int, local: str) -> None:
        self.host, self.port, self.local = host, port, local
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def get(self, path: str, timeout: float = 10.0) -> tuple[int, dict[str, str], bytes]:
        if self.writer is None or self.reader is None:
            self.reader, self.writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, self.port, local_addr=(self.local, 0)), timeout
            )
        writer = self.writer
        assert writer is not None
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n\r\n".encode())
        try:
            return await asyncio.wait_for(self._response(), timeout)
        except BaseException:
            self.close()
            raise

    async def _response(self) -> tuple[int, dict[str, str], bytes]:
        assert self.reader is not None
        line = await self.reader.readline()
        if not line:
            raise ConnectionError("closed")
        status = int(line.split()[1])
        headers: dict[str, str] = {}
        while True:
            h = await self.reader.readline()
            if h in (b"\r\n", b"\n", b""):
                break
            k, _, v = h.decode("latin-1").partition(":")
            headers[k.strip().lower()] = v.strip()
        if "content-length" in headers:
            body = await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int((await self.reader.readline()).strip().split(b";")[0], 16)
                body += await self.reader.readexactly(size + 2)
                if size == 0:
                    break
        else:
            body = await self.reader.read()
            self.close()
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, headers, body

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


def chance_in_a_day(rate_per_second: float, live_rooms: int, space: int) -> float:
    """P(at least one hit) in a day of uniform random guesses at ``rate_per_second``, with
    ``live_rooms`` of ``space`` codes taken: 1 − (1 − rooms/space)^(rate·86,400)."""
    tries = rate_per_second * 86_400
    return -math.expm1(tries * math.log1p(-live_rooms / space)) if tries > 0 else 0.0


async def attack_guessing(ctx: Ctx) -> Row:
    window = ctx.win(15.0)
    wanted = ctx.args.guess_rooms
    t0 = time.monotonic()
    deadline = t0 + ctx.args.create_budget
    codes: list[str] = []
    gate = asyncio.Semaphore(16)

    async def one() -> None:
        async with gate:
            if time.monotonic() > deadline:
                return
            made = await ctx.setup.create({"game": "capitol", "name": "Host"}, deadline)
            if made is not None:
                codes.append(made[0])
                ctx.tokens.add(made[1])

    await asyncio.gather(*(one() for _ in range(wanted)))
    create_s = time.monotonic() - t0
    if not codes:
        raise AttackError("no room could be created")
    length = len(codes[0])
    alphabet = "".join(sorted(set(CODE_ALPHABET) | {c for code in codes for c in code}))
    space = len(alphabet) ** length
    log(f"  guessing: {len(codes)} live rooms in {create_s:.0f} s from {len(ctx.setup.used)} addresses; "
        f"guessing {length}-letter codes for {window:g} s")  # fmt: skip
    host, port = "127.0.0.1", ctx.server.port
    guesser = attacker(3, 0)
    per_second: list[Counter[str]] = [Counter() for _ in range(int(window) + 2)]
    found: set[str] = set()
    rng = random.Random(ctx.args.seed)
    start = time.monotonic()
    end = start + window

    async def worker() -> None:
        conn = RawHttp(host, port, guesser)
        while time.monotonic() < end:
            code = "".join(rng.choice(alphabet) for _ in range(length))
            slot = per_second[min(len(per_second) - 1, int(time.monotonic() - start))]
            try:
                status, headers, body = await conn.get(f"/api/rooms/{code}")
            except (OSError, TimeoutError, ValueError, IndexError, asyncio.IncompleteReadError):
                slot["no answer"] += 1
                ctx.tally.no_answer += 1
                await asyncio.sleep(0.05)
                continue
            slot[str(status)] += 1
            ctx.tally.http(status, headers, "GET /api/rooms/{code}")
            if status == 200:
                found.add(code)
                if b'"token"' in body:
                    ctx.tally.leaks += 1
            elif status in (429, 503):
                # The attacker waits as told only up to 1 s (and hammers otherwise).
                retry = headers.get("retry-after", "")
                await asyncio.sleep(min(1.0, float(retry)) if retry.replace(".", "", 1).isdigit() else 0.01)
        conn.close()

    cpu0 = ctx.server.cpu()
    async with ctx.measuring():
        await asyncio.gather(*(worker() for _ in range(ctx.args.guess_connections)))
    elapsed = time.monotonic() - start
    cpu = (ctx.server.cpu() - cpu0) / elapsed
    total: Counter[str] = Counter()
    for c in per_second:
        total.update(c)
    guesses = sum(total.values())
    answered = sum(n for k, n in total.items() if k not in ("429", "503", "no answer"))
    # The sustained rate: answered guesses (a 429 tells nothing) per second over the second half.
    half = per_second[int(window) // 2 : int(window)]
    sustained = sum(sum(n for k, n in c.items() if k not in ("429", "503", "no answer")) for c in half) / max(
        1, len(half)
    )
    chance = chance_in_a_day(sustained, LIVE_ROOMS, space)
    expected = sustained * 86_400 * LIVE_ROOMS / space
    return Row(
        "guessing",
        attempts=guesses,
        wrongly_accepted=len(found),
        notes=(
            f"{len(codes)} live rooms (made in {create_s:.0f} s from {len(ctx.setup.used)} addresses); "
            f"{guesses:,} guesses in {elapsed:.0f} s from 1 address ({guesses / elapsed:,.0f}/s), found "
            f"{len(found)}, 429 {total['429']:,}, 503 {total['503']:,}; sustained {sustained:,.1f} "
            f"answered/s → P(find one of {LIVE_ROOMS:,} rooms in a day) = {chance:.3g} "
            f"({len(alphabet)}^{length} codes; {expected:,.3g} finds a day expected); server CPU "
            f"{cpu * 100:.0f}% of a core"
        ),
        figures={"live_rooms": len(codes), "guesses": guesses, "answered": answered, "found": len(found),
                 "status": dict(total), "guesses_per_s": guesses / elapsed, "sustained_per_s": sustained,
                 "code_space": space, "chance_per_day": chance, "finds_per_day": expected, "cpu_share": cpu},
    )  # fmt: skip
