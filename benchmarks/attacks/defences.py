"""Item 9: missing defences: security headers, DNS rebinding, names."""

from __future__ import annotations

import re

import httpx

from benchmarks.attacks.clients import Creator
from benchmarks.attacks.common import attacker
from benchmarks.attacks.context import Ctx, Row


def _header_checks(headers: httpx.Headers) -> list[str]:
    """The defences a response lacks."""
    csp = headers.get("content-security-policy", "")
    missing = []
    if not re.search(r"script-src[^;]*'self'", csp) and not (
        "script-src" not in csp and re.search(r"default-src[^;]*'self'", csp)
    ):
        missing.append("CSP script-src 'self'")
    if headers.get("x-content-type-options", "").lower() != "nosniff":
        missing.append("nosniff")
    if "frame-ancestors" not in csp and not headers.get("x-frame-options"):
        missing.append("frame-ancestors")
    if not headers.get("referrer-policy"):
        missing.append("Referrer-Policy")
    return missing


async def attack_defences(ctx: Ctx) -> Row:
    pool = ctx.pool
    addrs = [attacker(10, i) for i in range(20)]
    creator = Creator(pool, addrs)
    checks = accepted = 0
    notes = []
    missing_by_path = {}
    for path in ("/", "/api/info", "/api/no-such-thing"):
        r = await pool.request("GET", path, addrs[0])
        checks += 1
        missing_by_path[path] = _header_checks(r.headers) if r is not None else ["no answer"]
    every = sorted({m for ms in missing_by_path.values() for m in ms})
    notes.append(
        "missing: "
        + (", ".join(f"{m} ({sum(m in ms for ms in missing_by_path.values())}/3)" for m in every) or "none")
    )
    # DNS rebinding: a page of evil.example, resolved to this server, sends its own Host and Origin.
    evil = f"evil.example:{ctx.server.port}"
    r = await pool.request(
        "POST", "/api/rooms", addrs[1], json={"game": "capitol", "name": "Rebind"},
        headers={"Host": evil, "Origin": f"http://{evil}"},
    )  # fmt: skip
    checks += 1
    rebinding = r is not None and r.status_code == 201
    accepted += rebinding
    g = await pool.request("GET", "/api/info", addrs[1], headers={"Host": evil})
    notes.append(
        f"rebinding create {'accepted' if rebinding else f'refused ({r.status_code if r else None})'}, "
        f"GET with that Host {g.status_code if g else None}"
    )
    names = {"NUL": "Ada\x00", "U+202E": "\u202egnp.exe", "ESC": "\x1b[31mRed", "newline": "Bo\nb",
             "U+200B": "Z\u200bW", "U+2066": "\u2066Iso\u2069"}  # fmt: skip
    as_is = []
    for label, name in names.items():
        made = await creator.create({"game": "capitol", "name": name})
        checks += 1
        if made is None:
            continue
        ctx.tokens.add(made[1])
        info = await pool.request("GET", f"/api/rooms/{made[0]}", addrs[2])
        if info is not None and info.status_code == 200 and info.json()["seats"][0]["name"] == name:
            as_is.append(label)
    accepted += len(as_is)
    notes.append(f"names kept as sent: {len(as_is)}/{len(names)} ({', '.join(as_is) or 'none'})")
    made = await creator.create({"game": "capitol", "name": "Ada"})
    checks += 1
    told_apart = True
    if made is not None:
        j = await pool.request("POST", f"/api/rooms/{made[0]}/join", addrs[3], json={"name": "Ada"})
        if j is not None and j.status_code == 201:
            info = await pool.request("GET", f"/api/rooms/{made[0]}", addrs[3])
            if info is not None and info.status_code == 200:
                seat_names = [s["name"] for s in info.json()["seats"]]
                told_apart = len(set(seat_names)) == len(seat_names)
    accepted += not told_apart
    notes.append(f"two seats named Ada {'told apart' if told_apart else 'not told apart'}")
    return Row(
        "defences",
        attempts=checks,
        wrongly_accepted=accepted,
        notes="; ".join(notes),
        figures={"missing": missing_by_path, "rebinding_accepted": rebinding, "names_as_is": as_is,
                 "duplicate_told_apart": told_apart},
    )  # fmt: skip
