"""The server (and its Redis) as child processes, restarted and killed as an attack needs; and the
probe room, played by a child process of its own so the attacker's event loop does not delay it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import random
import shutil
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from benchmarks.attacks.clients import Creator, HttpPool, Player, Tally, auto_rematch, make_table, start_table
from benchmarks.attacks.common import (
    PROBE_ADDRESSES,
    REPO_ROOT,
    AttackError,
    child_setup,
    cpu_seconds,
    die_with_parent,
    free_port,
    pct,
)


class RedisProc:
    """A private redis-server on a free port, append-only with an fsync per write in its own
    directory: a kill -9 and a restart on the same port and directory is an outage, not a loss."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def _ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    async def start(self) -> None:
        exe = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.proc = subprocess.Popen(
            [exe, "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.workdir),
             "--save", "", "--appendonly", "yes", "--appendfsync", "always"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=child_setup(None),
        )  # fmt: skip
        deadline = time.monotonic() + 15
        while not self._ping():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AttackError("redis-server did not start")
            await asyncio.sleep(0.05)

    def kill9(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


class ServerProc:
    """``python -m conflictology.cli serve`` on 127.0.0.1, a free port and a SQLite file in the
    attack's directory, logs to files there; restarts keep the port and the database."""

    def __init__(
        self,
        workdir: Path,
        src: str | None = None,
        serve_args: Sequence[str] = (),
        redis_url: str | None = None,
        nofile: int | None = None,
    ) -> None:
        self.workdir = workdir
        self.src = src
        self.serve_args = list(serve_args)
        self.redis_url = redis_url
        self.redis_prefix = f"attacks{random.getrandbits(32):08x}:"
        self.nofile = nofile
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.out = workdir / "server.out"
        self.err = workdir / "server.err"
        self.proc: subprocess.Popen[bytes] | None = None
        self.deaths = 0  # exits the tool did not cause
        self.starts = 0

    def command(self) -> list[str]:
        cmd = [sys.executable, "-m", "conflictology.cli", "serve", "--host", "127.0.0.1",
               "--port", str(self.port), "--db", f"sqlite:///{self.workdir / 'server.sqlite3'}"]  # fmt: skip
        if self.redis_url:
            cmd += ["--redis", self.redis_url, "--redis-prefix", self.redis_prefix]
        return cmd + self.serve_args

    def _check_death(self) -> None:
        if (
            self.proc is not None
            and self.proc.poll() is not None
            and not getattr(self.proc, "expected", False)
        ):
            self.deaths += 1
            self.proc.expected = True  # type: ignore[attr-defined]  # counted once

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    async def start(self, timeout: float = 60.0) -> float:
        """Start (or restart) and wait until /healthz answers; returns the seconds it took."""
        self._check_death()
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        if self.src:
            env["PYTHONPATH"] = self.src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        t0 = time.monotonic()
        with open(self.out, "ab") as out, open(self.err, "ab") as err:
            self.proc = subprocess.Popen(
                self.command(), stdout=out, stderr=err, env=env, preexec_fn=child_setup(self.nofile)
            )
        self.starts += 1
        async with httpx.AsyncClient(timeout=2) as http:
            while time.monotonic() - t0 < timeout:
                if self.proc.poll() is not None:
                    raise AttackError(f"the server exited at start: {self.tail()}")
                with contextlib.suppress(httpx.HTTPError):
                    if (await http.get(f"{self.url}/healthz")).status_code == 200:
                        return time.monotonic() - t0
                await asyncio.sleep(0.1)
        raise AttackError("the server did not become healthy")

    async def stop(self, timeout: float = 20.0) -> tuple[float, bool]:
        """SIGTERM and wait; SIGKILL after ``timeout``. Returns (seconds, whether it had to be killed)."""
        self._check_death()
        if not self.running:
            return 0.0, False
        assert self.proc is not None
        self.proc.expected = True  # type: ignore[attr-defined]
        t0 = time.monotonic()
        self.proc.terminate()
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                return time.monotonic() - t0, False
            await asyncio.sleep(0.05)
        self.proc.kill()
        self.proc.wait(10)
        return time.monotonic() - t0, True

    def kill9(self) -> None:
        self._check_death()
        if self.running:
            assert self.proc is not None
            self.proc.expected = True  # type: ignore[attr-defined]
            self.proc.kill()
            self.proc.wait(10)

    def cpu(self) -> float:
        return cpu_seconds(self.proc.pid) if self.proc is not None else math.nan

    def logs(self) -> str:
        text = ""
        for path in (self.err, self.out):
            with contextlib.suppress(OSError):
                text += path.read_text(errors="replace")
        return text

    def tail(self, n: int = 600) -> str:
        with contextlib.suppress(OSError):
            return self.err.read_text(errors="replace")[-n:]
        return ""

    def log_size(self) -> tuple[int, int]:
        """(bytes, lines) of stderr so far."""
        try:
            data = self.err.read_bytes()
        except OSError:
            return 0, 0
        return len(data), data.count(b"\n")


class Probe:
    """The probe room, played by a child process (``python -m benchmarks.attacks --probe-child``)."""

    def __init__(self, url: str, workdir: Path, think: float, seed: int) -> None:
        self.url = url
        self.workdir = workdir
        self.think = think
        self.seed = seed
        self.proc: subprocess.Popen[str] | None = None
        self.code = ""

    async def start(self) -> None:
        cmd = [sys.executable, "-m", "benchmarks.attacks", "--probe-child", self.url,
               "--probe-think", str(self.think), "--seed", str(self.seed)]  # fmt: skip
        with open(self.workdir / "probe.err", "w") as err:
            # From the repository root, where ``-m benchmarks.attacks`` is found.
            self.proc = subprocess.Popen(
                cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
                preexec_fn=die_with_parent, cwd=REPO_ROOT,
            )  # fmt: skip
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(self.proc.stdout.readline), 90)
        if not line.startswith("ready "):
            raise AttackError(f"the probe did not start: {(self.workdir / 'probe.err').read_text()[-400:]}")
        self.code = line.split()[1]

    async def _ask(self, line: str) -> str:
        assert self.proc is not None and self.proc.stdin is not None and self.proc.stdout is not None
        if self.proc.poll() is not None:
            return ""
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return str(await asyncio.wait_for(asyncio.to_thread(self.proc.stdout.readline), 30))

    async def stats(self, windows: list[tuple[float, float]]) -> dict[str, Any]:
        line = await self._ask("stats " + json.dumps(windows))
        return dict(json.loads(line)) if line else {}

    async def expect_drops(self, expected: bool) -> None:
        """Before the tool stops or kills the server itself (answered once the child knows)."""
        await self._ask(f"expect {int(expected)}")

    def stop(self) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(Exception):
            assert self.proc.stdin is not None
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


def probe_figures(
    players: Sequence[Player], tally: Tally, windows: list[tuple[float, float]]
) -> dict[str, Any]:
    def inside(t: float) -> bool:
        return any(a <= t <= b for a, b in windows)

    answered = [lat for p in players for t, lat in p.latencies if inside(t)]
    waiting = [
        time.perf_counter() - p.pending[1] for p in players if p.pending is not None and inside(p.pending[2])
    ]
    every = answered + waiting
    errors: Counter[str] = Counter()
    for p in players:
        errors.update(p.errors)
    return {
        "moves": len(answered),
        "unanswered": len(waiting),
        "p50_ms": pct(every, 0.50) * 1000,
        "p99_ms": pct(every, 0.99) * 1000,
        "max_ms": max(every) * 1000 if every else math.nan,
        "errors": dict(errors),
        "drops": tally.drops,
        "server_errors": tally.server_errors,
        "leaks": tally.leaks,
        "reconnects": sum(max(0, p.sessions - 1) for p in players),
    }


async def probe_child(url: str, think: float, seed: int) -> None:
    tally = Tally()
    pool = HttpPool(url, tally)
    creator = Creator(pool, PROBE_ADDRESSES)
    table = await make_table(
        pool, creator, humans=2, settings={"timers": False}, names=["Probe A", "Probe B"]
    )
    await start_table(pool, table)
    players = [
        Player(url, table.code, token, tally, local=PROBE_ADDRESSES[i], think=think, seed=seed * 10 + i,
               on_over=auto_rematch(pool, table) if i == 0 else None).start()
        for i, token in enumerate(table.tokens)
    ]  # fmt: skip
    for p in players:
        await asyncio.wait_for(p.got_state.wait(), 30)
    print("ready", table.code, flush=True)
    while True:
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line or line.startswith("quit"):
            break
        if line.startswith("stats "):
            windows = [(float(a), float(b)) for a, b in json.loads(line[6:])]
            print(json.dumps(probe_figures(players, tally, windows)), flush=True)
        elif line.startswith("expect "):
            tally.expect_drops = line.split()[1] == "1"
            print("ok", flush=True)
    for p in players:
        await p.stop()
    await pool.aclose()
