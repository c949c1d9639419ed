"""Issue 25, item 2: a client behind a proxy that APPENDS to X-Forwarded-For (nginx's
``$proxy_add_x_forwarded_for``, what PaaS routers do), the server trusting the proxy with ``'*'``.
The client forges the header on every request: addresses to create rooms, junk to guess codes."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchmarks.attacks.clients import HttpPool
from benchmarks.attacks.common import AttackError, attacker, free_port, log
from benchmarks.attacks.context import Ctx, Row

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
TRIES = 60  # rooms asked for, and wrong codes tried (quota 20, guess budget 10 by default)
LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ"
SERVE = ("--proxy-headers", "--forwarded-allow-ips", "*")  # what the docs advised for a PaaS


def _nginx_conf(directory: Path, port: int, upstream: str) -> Path:
    temp = "".join(
        f"    {k}_temp_path {directory}/{k};\n" for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    conf = directory / "nginx.conf"
    conf.write_text(
        f"error_log stderr warn;\npid {directory}/nginx.pid;\nevents {{ worker_connections 256; }}\n"
        f"http {{\n    access_log off;\n{temp}    server {{\n        listen 127.0.0.1:{port};\n"
        f"        location / {{\n            proxy_pass {upstream};\n"
        "            proxy_set_header Host $host;\n"
        "            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n        }\n    }\n}\n"
    )
    return conf


async def attack_appending_proxy(ctx: Ctx) -> Row:
    if not Path(NGINX).exists():
        raise AttackError("needs nginx")
    directory = Path(tempfile.mkdtemp(prefix="cfy-nginx-"))
    port = free_port()
    nginx = subprocess.Popen(
        [NGINX, "-p", str(directory), "-c", str(_nginx_conf(directory, port, ctx.url)), "-g", "daemon off;"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    front = HttpPool(f"http://127.0.0.1:{port}", ctx.tally)
    addr = attacker(30, 0)
    created: Counter[str] = Counter()
    guessed: Counter[str] = Counter()
    try:
        deadline = time.monotonic() + 15
        while (r := await front.request("GET", "/healthz", attacker(30, 9))) is None or r.status_code != 200:
            if time.monotonic() > deadline or nginx.poll() is not None:
                raise AttackError("nginx did not start")
            await asyncio.sleep(0.1)
        async with ctx.measuring():
            for i in range(TRIES):
                forged = {"X-Forwarded-For": f"198.51.{i // 250}.{1 + i % 250}"}
                body = {"game": "capitol", "name": "Forger"}
                r = await front.request("POST", "/api/rooms", addr, json=body, headers=forged)
                created[str(r.status_code) if r is not None else "no answer"] += 1
                if r is not None and r.status_code == 201:
                    ctx.tokens.add(r.json()["token"])
            for i in range(TRIES):
                junk = {"X-Forwarded-For": f"junk{i}"}
                code = "ZZZ" + LETTERS[i // len(LETTERS)] + LETTERS[i % len(LETTERS)]
                r = await front.request("GET", f"/api/rooms/{code}", addr, headers=junk)
                guessed[str(r.status_code) if r is not None else "no answer"] += 1
    finally:
        await front.aclose()
        nginx.terminate()
        nginx.wait(10)
        shutil.rmtree(directory, ignore_errors=True)
    log(f"  appending-proxy: {created['201']} of {TRIES} rooms, {guessed['404']} of {TRIES} guesses answered")
    over = max(0, created["201"] - 20) + max(0, guessed["404"] - 10)
    return Row(
        "appending-proxy",
        attempts=2 * TRIES,
        wrongly_accepted=over,
        notes=(
            f"behind nginx appending X-Forwarded-For, server trusting '*': one client forging the header "
            f"made {created['201']} of {TRIES} rooms (quota 20) and had {guessed['404']} of {TRIES} "
            f"wrong codes answered (budget 10)"
        ),
        figures={"created": dict(created), "guessed": dict(guessed)},
    )
