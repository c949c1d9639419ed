"""The load test tool against real servers: one process, and two processes sharing Redis."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from conflictology.cli import app
from conflictology.clients.loadtest import LoadResult, percentile, run_loadtest
from conflictology.server.store import games_table
from redis_helpers import clear_prefix, new_prefix, redis_server
from server_helpers import ServerProcess, eventually, thread_server


def test_percentiles() -> None:
    values = [float(i) for i in range(1, 101)]
    assert percentile(values, 0.5) in (50.0, 51.0)
    assert percentile(values, 0.99) == 99.0
    assert percentile([3.0], 0.99) == 3.0
    assert math.isnan(percentile([], 0.5))


def test_loadtest_against_one_server(tmp_path: Path) -> None:
    with thread_server(tmp_path, address_limits=False) as server:
        seen: list[str] = []
        sockets_at_close: list[int] = []
        deltas: list[bool] = []

        def progress(phase: str, *_: object) -> None:
            seen.append(phase)
            if phase == "measured":
                conns = [c for cs in server.app.state.hub.connections.values() for c in cs]
                sockets_at_close.append(len(conns))
                deltas.extend(c.deltas for c in conns)

        result = run_loadtest(
            [server.url], rooms=3, players=4, duration=3.0, think=0.02, progress=progress
        )
        assert result.rooms == 3 and result.errors == 0 and result.reconnects == 0
        assert result.actions > 20
        # Every move is told to the room's four sockets: the messages, and their bytes, are counted.
        assert result.messages > 3 * result.actions and result.received_bytes > 200 * result.messages
        assert 0 < result.p50_ms <= result.p95_ms <= result.p99_ms <= result.max_ms
        # The server's own side, read from its /metrics over the window.
        assert 0 < result.server_p50_ms <= result.server_p99_ms
        assert 0 <= result.loop_lag_p99_ms < math.inf
        assert "running" in seen
        # The window closes (servers read, CPU taken) before any client says goodbye.
        assert seen.count("measured") == 1 and seen.index("measured") > seen.index("running")
        assert sockets_at_close == [12]
        # Every socket asked for log deltas (protocol v2), as the web client and the network bot do.
        assert deltas == [True] * 12
        # Every room was made on the server, and every game counted was archived there.
        hub = server.app.state.hub
        assert len(hub.backend._rooms) == 3
        # (counted in the table itself: the public listing leaves out private rooms' games)
        # (archives are written in batches, every few hundredths of a second: waited for)
        def archived() -> int:
            with hub.store.engine.connect() as conn:
                return int(conn.execute(select(func.count()).select_from(games_table)).scalar_one())

        eventually(archived, lambda count: count >= result.games)


def test_loadtest_command_prints_a_table(tmp_path: Path) -> None:
    with thread_server(tmp_path, address_limits=False) as server:
        result = CliRunner().invoke(
            app,
            ["loadtest", "--server", server.url, "--rooms", "2", "--players", "2", "--duration", "2",
             "--think", "0.02", "--game", "conspiranoicos", "--json"],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert "actions/s" in result.output and "p99 ms" in result.output and "server p99 ms" in result.output
        data = json.loads(result.output.strip().splitlines()[-1])
        assert data["rooms"] == 2 and data["errors"] == 0 and data["actions"] > 0


def test_loadtest_bots_that_read_the_log_join_its_deltas(tmp_path: Path) -> None:
    """A bot that reads the game's log (not ``random``) decides on the whole log, joined from the
    deltas of its socket: a game played to the end by heuristic bots, with no error."""
    # Two rooms of bots answering in 10 ms play faster than one socket may send on a quick machine
    # (20 messages a second: a challenge window asks three seats at once), and the refusals would
    # be errors; the limit is not what this test is about, so it is set out of reach.
    unlimited = {"ws_rate_per_second": 1000.0, "ws_rate_burst": 1000.0}
    with thread_server(tmp_path, address_limits=False, **unlimited) as server:
        result = run_loadtest(
            [server.url], rooms=2, players=4, duration=4.0, level="normal", think=0.01
        )
        assert result.errors == 0, result.error_samples
        assert result.actions > 20


def test_loadtest_refuses_bad_arguments() -> None:
    result = CliRunner().invoke(app, ["loadtest", "--server", "http://127.0.0.1:9", "--players", "11"])
    assert result.exit_code == 2 and "error" in result.output


@pytest.mark.redis
def test_loadtest_over_two_processes_sharing_redis(tmp_path: Path) -> None:
    with redis_server(tmp_path) as url:
        prefix = new_prefix()
        db = f"sqlite:///{tmp_path / 'shared.sqlite3'}"
        args = ("--redis", url, "--redis-prefix", prefix, "--no-address-limits")
        a = ServerProcess(db, None, *args)
        b = ServerProcess(db, None, *args)
        try:
            result = run_loadtest([a.url, b.url], rooms=4, players=4, duration=3.0, think=0.02, workers=2)
            assert result.rooms == 4 and result.servers == 2
            assert result.errors == 0 and result.reconnects == 0 and result.actions > 20
        finally:
            a.stop()
            b.stop()
            clear_prefix(url, prefix)


@pytest.mark.redis
def test_loadtest_survives_a_killed_process(tmp_path: Path) -> None:
    """Kill one of two processes while the bots play: the bots on it reconnect to the other one
    with their tokens and their games go on, with no error."""
    import threading

    with redis_server(tmp_path) as url:
        prefix = new_prefix()
        db = f"sqlite:///{tmp_path / 'shared.sqlite3'}"
        args = ("--redis", url, "--redis-prefix", prefix, "--no-address-limits", "--redis-lease", "2")
        a = ServerProcess(db, None, *args)
        b = ServerProcess(db, None, *args)
        playing = threading.Event()
        try:

            def progress(phase: str, _fraction: float, actions: int, *_: object) -> None:
                if phase == "running" and actions > 0:
                    playing.set()

            results: list[LoadResult] = []

            def load() -> None:
                servers = [a.url, b.url]
                results.append(run_loadtest(servers, 4, 4, 8.0, think=0.05, progress=progress))

            worker = threading.Thread(target=load)
            worker.start()
            # Killed once the bots play (not a time later: a loaded machine could be past the window).
            assert playing.wait(120)
            a.kill()
            worker.join(timeout=300)
            (result,) = results
            assert result.reconnects >= 8  # the 8 bots of A's rooms, at least once each
            assert result.errors == 0, result.error_samples
            assert result.actions > 20
        finally:
            a.kill()
            b.stop()
            clear_prefix(url, prefix)
