"""Benchmark the server: one process (rooms in memory) or two processes sharing a private Redis.

    .venv/bin/python benchmarks/server_bench.py --mode one --rooms 1000 --duration 60 --think 2
    .venv/bin/python benchmarks/server_bench.py --mode two --rooms 100 --duration 20 --think 0

Starts the server(s) on free loopback ports with a throwaway SQLite file (and a private
redis-server for ``two``), runs ``conflictology loadtest``'s engine against them, and prints one
JSON line: the load test's numbers plus each server process's CPU seconds used while measuring
and its memory (RSS) before the rooms were made and after they were seated and started.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from conflictology.clients.loadtest import run_loadtest
from conflictology.server.metrics import text_string_to_metric_families

TICK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def shared_stats(urls: list[str]) -> dict[str, float]:
    """The Redis backend's counters summed over the servers (empty with rooms in memory)."""
    total: dict[str, float] = {}
    for url in urls:
        with contextlib.suppress(httpx.HTTPError):
            for family in text_string_to_metric_families(httpx.get(f"{url}/metrics", timeout=5).text):
                if family.name.startswith("conflictology_shared_"):
                    key = family.name.removeprefix("conflictology_shared_")
                    total[key] = total.get(key, 0.0) + sum(s.value for s in family.samples)
    return total


def wait_healthy(url: str) -> None:
    deadline = time.time() + 120  # a server starting on a loaded machine may take a minute
    while time.time() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise TimeoutError(url)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["one", "two"], default="one")
    ap.add_argument("--rooms", type=int, default=100)
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--duration", type=float, default=30)
    ap.add_argument("--think", type=float, default=2.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--game", default="capitol")
    ap.add_argument("--sample", type=float, default=30.0, help="seconds between memory samples")
    ap.add_argument("--profile", help="write the (first) server's cProfile here")
    ap.add_argument(
        "--server-priority",
        action="store_true",
        help="run the server(s) and Redis at nice -10 and the load generator at nice +5 (needs root): "
        "on a shared 2-core machine this stands in for giving the server its own machine",
    )
    ap.add_argument("--serve-args", default="", help="more flags for `serve`, e.g. '--no-ws-compression'")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="cfy-bench-"))
    procs: list[subprocess.Popen[bytes]] = []
    redis_proc = None

    def raise_priority() -> None:
        if args.server_priority:
            os.nice(-10)

    try:
        extra: list[str] = []
        if args.mode == "two":
            port = free_port()
            redis_proc = subprocess.Popen(
                [shutil.which("redis-server") or "redis-server", "--bind", "127.0.0.1", "--port", str(port),
                 "--save", "", "--appendonly", "no", "--dir", str(tmp)],
                stdout=subprocess.DEVNULL, preexec_fn=raise_priority,
            )  # fmt: skip
            time.sleep(0.5)
            extra = ["--redis", f"redis://127.0.0.1:{port}/0"]
        urls = []
        for i in range(1 if args.mode == "one" else 2):
            port = free_port()
            cmd = [sys.executable]
            if args.profile and i == 0:
                cmd += ["-m", "cProfile", "-o", args.profile]
            cmd += ["-m", "conflictology.cli", "serve", "--port", str(port), "--db",
                    f"sqlite:///{tmp / 'bench.sqlite3'}", "--no-address-limits", "--log-level", "warning",
                    "--max-connections-per-address", "0",
                    *extra, *args.serve_args.split()]  # fmt: skip
            procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, preexec_fn=raise_priority))
            urls.append(f"http://127.0.0.1:{port}")
        for url in urls:
            wait_healthy(url)
        if args.server_priority:
            os.nice(5)  # the load generator's worker processes inherit it
        idle = [rss_mb(p.pid) for p in procs]
        state: dict[str, float] = {}
        samples: list[list[float]] = []  # [seconds, rss of each server...] every --sample seconds
        stop_sampling = threading.Event()

        def sample() -> None:
            t0 = time.monotonic()
            while not stop_sampling.wait(args.sample):
                with contextlib.suppress(OSError):
                    samples.append([round(time.monotonic() - t0)] + [round(rss_mb(p.pid), 1) for p in procs])

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()

        def progress(phase: str, frac: float, *_: int) -> None:
            if phase == "running" and "cpu0" not in state:
                state["cpu0"] = sum(cpu_seconds(p.pid) for p in procs)
                state["t0"] = time.monotonic()
                state["rss_seated"] = sum(rss_mb(p.pid) for p in procs)
                if redis_proc is not None:
                    state["redis_cpu0"] = cpu_seconds(redis_proc.pid)
            elif phase == "measured" and "cpu1" not in state:
                # The window is over and the clients have not closed their sockets yet.
                state["cpu1"] = sum(cpu_seconds(p.pid) for p in procs)
                if redis_proc is not None:
                    state["redis_cpu1"] = cpu_seconds(redis_proc.pid)
                state["stats"] = shared_stats(urls)

        result = run_loadtest(
            urls, args.rooms, args.players, args.duration, game=args.game, think=args.think,
            workers=args.workers, progress=progress,
        )  # fmt: skip
        stop_sampling.set()
        cpu = state.get("cpu1", sum(cpu_seconds(p.pid) for p in procs)) - state.get("cpu0", 0.0)
        redis_cpu = state.get("redis_cpu1", 0.0) - state.get("redis_cpu0", 0.0)
        stats = state.get("stats", {})
        rss_end = [rss_mb(p.pid) for p in procs]
        out = {
            "mode": args.mode,
            "think": args.think,
            "workers": args.workers,
            "serve_args": args.serve_args,
            "server_priority": args.server_priority,
            "loadavg_1m": os.getloadavg()[0],
            **result.as_dict(),
            "server_cpu_seconds": round(cpu, 1),
            "server_cpu_share": round(cpu / args.duration, 2),
            "server_cpu_ms_per_action": round(cpu * 1000 / max(1, result.actions), 3),
            "redis_cpu_seconds": round(redis_cpu, 2),
            "saves_per_round_trip": (
                round(stats["saves"] / trips, 2) if (trips := stats.get("save_round_trips")) else None
            ),
            "rss_idle_mb": [round(x, 1) for x in idle],
            "rss_end_mb": [round(x, 1) for x in rss_end],
            "rss_samples": samples,
            "kb_per_room": round((state.get("rss_seated", sum(rss_end)) - sum(idle)) * 1024 / args.rooms, 1),
        }
        out.pop("error_samples")
        print(json.dumps(out))
    finally:
        for p in procs:
            p.send_signal(signal.SIGINT)
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        if redis_proc is not None:
            redis_proc.terminate()
            redis_proc.wait(timeout=10)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
