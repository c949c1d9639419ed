"""Item 8: log floods: invalid UTF-8 WebSocket frames, written by hand."""

from __future__ import annotations

import asyncio
import base64
import os
import time
from collections import Counter

from benchmarks.attacks.common import TRACEBACK, attacker
from benchmarks.attacks.context import Ctx, Row


def _masked_frame(opcode: int, payload: bytes) -> bytes:
    mask = os.urandom(4)
    n = len(payload)
    head = bytes([0x80 | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + n.to_bytes(2, "big")
    else:
        head += bytes([0x80 | 127]) + n.to_bytes(8, "big")
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


async def _read_frames(reader: asyncio.StreamReader, timeout: float) -> tuple[str, int | None]:
    """Read server frames until a close frame, an error message, EOF or the timeout."""
    end = time.monotonic() + timeout
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return "open", None
        try:
            head = await asyncio.wait_for(reader.readexactly(2), left)
            n = head[1] & 0x7F
            if n == 126:
                n = int.from_bytes(await reader.readexactly(2), "big")
            elif n == 127:
                n = int.from_bytes(await reader.readexactly(8), "big")
            payload = await reader.readexactly(n)
        except TimeoutError:
            return "open", None
        except (OSError, asyncio.IncompleteReadError):
            return "eof", None
        opcode = head[0] & 0x0F
        if opcode == 8:
            return "close", int.from_bytes(payload[:2], "big") if len(payload) >= 2 else None
        if opcode == 1 and b'"type":"error"' in payload[:40]:
            return "error", None


async def attack_log_flood(ctx: Ctx) -> Row:
    frames = ctx.args.bad_frames
    t = await ctx.table(settings={"public": True})
    host, port = "127.0.0.1", ctx.server.port
    size0, lines0 = ctx.server.log_size()
    tb0 = ctx.server.logs().count(TRACEBACK)
    reactions: Counter[str] = Counter()
    sent = 0
    gate = asyncio.Semaphore(8)

    async def one(i: int) -> None:
        nonlocal sent
        async with gate:
            try:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(host, port, local_addr=(attacker(9, i % 4), 0)), 5
                )
            except (OSError, TimeoutError):
                reactions["connect failed"] += 1
                return
            try:
                key = base64.b64encode(os.urandom(16)).decode()
                writer.write(
                    f"GET /ws/{t.code} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                    f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                    "Sec-WebSocket-Version: 13\r\n\r\n".encode()
                )
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
                status = int(head.split()[1])
                if status != 101:
                    reactions[f"handshake {status}"] += 1
                    return
                # An invalid UTF-8 sequence in a text frame (0xC3 must be followed by 0x80–0xBF).
                writer.write(_masked_frame(1, b'{"type":"ping","x":"\xc3\x28"}'))
                sent += 1
                kind, code = await _read_frames(reader, 2.0)
                reactions[f"{kind} {code}" if code is not None else kind] += 1
            except (OSError, TimeoutError, ValueError, IndexError, asyncio.IncompleteReadError):
                reactions["handshake failed"] += 1
            finally:
                writer.close()

    async with ctx.measuring():
        await asyncio.gather(*(one(i) for i in range(frames)))
    await asyncio.sleep(0.5)
    size1, lines1 = ctx.server.log_size()
    text = ctx.server.logs()
    tracebacks = text.count(TRACEBACK) - tb0
    err_tail = ctx.server.err.read_text(errors="replace").splitlines()[lines0:]
    errors = sum(1 for line in err_tail if line.startswith(("ERROR", "CRITICAL")))
    per = max(1, sent)
    return Row(
        "log-flood",
        attempts=sent,
        notes=(
            f"{sent:,} invalid UTF-8 frames (one per socket): server stderr +{lines1 - lines0:,} lines, "
            f"+{(size1 - size0) / 1024:,.0f} KB ({(lines1 - lines0) / per:.1f} lines, "
            f"{(size1 - size0) / per:,.0f} bytes per frame), ERROR lines {errors:,}, tracebacks "
            f"{tracebacks:,}; answers: "
            f"{', '.join(f'{k} ×{n}' for k, n in reactions.most_common())}"
        ),
        figures={"frames": sent, "stderr_lines": lines1 - lines0, "stderr_bytes": size1 - size0,
                 "error_lines": errors, "tracebacks": tracebacks, "reactions": dict(reactions)},
    )  # fmt: skip
