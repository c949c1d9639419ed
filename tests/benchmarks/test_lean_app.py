"""benchmarks/lean_app.py, the lean bound of server_floor: it plays real games to the load test's
bots (whose logs, joined from deltas, must never show a gap) and every move it counts is in its
SQLite file."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
from benchmarks.server_floor import moves_count
from tests.server_helpers import eventually, free_port, wait_healthy

from conflictology.clients.loadtest import run_loadtest


def test_the_lean_app_plays_whole_games_and_saves_every_move(tmp_path: Path) -> None:
    port = free_port()
    db = tmp_path / "lean.sqlite3"
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.server_floor", "--lean-port", str(port), "--lean-db", str(db),
         "--bare-bytes", "1500"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc=proc)
        # "normal" bots join each state's log to the ones before: a gap makes them ask for a sync,
        # which the lean app refuses (an error).
        result = run_loadtest([url], rooms=2, players=4, duration=2, level="normal", think=0.0)
        assert result.errors == 0, result.error_samples
        assert result.actions > 0
        assert result.games > 0  # games end, and the rematch starts the next one
        moves = moves_count(url)

        def saved() -> int:
            with sqlite3.connect(db) as conn:
                return int(conn.execute("SELECT count(*) FROM actions").fetchone()[0])

        eventually(saved, lambda n: n == moves)
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT count(*) FROM rooms WHERE state != ''").fetchone()[0] == 2
        assert httpx.get(f"{url}/healthz").json() == {"ok": True}
    finally:
        proc.terminate()
        proc.wait(timeout=30)
