"""``GET /metrics``: the server's own view of how it keeps up, in the Prometheus text format, with
counts and timings only (no room code, name or card), and the helpers the load test reads it with."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from conflictology.server import metrics
from server_helpers import Player, Server, eventually, make_table, play_randomly, start, thread_server


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    with thread_server(tmp_path, bot_delay=0.0) as srv:
        yield srv


def scrape(server: Server) -> str:
    with server.http() as http:
        response = http.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return response.text


def sample(text: str, name: str, **labels: str) -> float:
    for family in metrics.text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return float(s.value)
    return 0.0


def test_moves_refusals_and_sockets_are_counted_and_nothing_private_is_shown(server: Server) -> None:
    before = scrape(server)
    assert sample(before, "conflictology_action_seconds_count") == 0
    table = make_table(server, "capitol", humans=2, bots=0, settings={"timers": False})
    players = [Player(server, table.code, table.tokens[i], i) for i in range(2)]
    start(table)
    sent = play_randomly(players, seed=4, stop_after=6)
    # A move quoting an old seq is refused and counted under its error code.
    players[0].send({"type": "act", "action": {"type": "income"}, "seq": 0})
    players[0].wait_for(lambda m: m["type"] == "error" and m["code"] == "stale")
    players[1].send({"type": "nonsense"})
    players[1].wait_for(lambda m: m["type"] == "error" and m["code"] == "bad_message")
    # The event-loop watcher samples every 0.1 s (when the loop gets to it): two samples waited for.
    text = eventually(
        lambda: scrape(server), lambda t: sample(t, "conflictology_event_loop_lag_seconds_count") >= 2
    )
    moves = sample(text, "conflictology_action_seconds_count")
    refused_stale = sample(text, "conflictology_refused_messages_total", code="stale")
    # Every applied move was timed; a move two seats sent for the same seq is refused as stale.
    assert 1 <= moves <= sent and moves + refused_stale >= sent
    assert refused_stale >= 1
    assert sample(text, "conflictology_refused_messages_total", code="bad_message") == 1
    assert sample(text, "conflictology_connections") == 2
    assert sample(text, "conflictology_rooms_connected") == 1
    assert sample(text, "conflictology_event_loop_lag_seconds_count") >= 2
    # Counts and timings only: nothing that names a room, a player or a card.
    for secret in (table.code, "Host", "Player 1", "banker", "income"):
        assert secret not in text
    for p in players:
        p.close()


def test_quantiles_are_read_back_from_histogram_buckets() -> None:
    text = "\n".join(
        [
            "# HELP t_seconds a timing",
            "# TYPE t_seconds histogram",
            't_seconds_bucket{le="0.01"} 50.0',
            't_seconds_bucket{le="0.1"} 90.0',
            't_seconds_bucket{le="1.0"} 100.0',
            't_seconds_bucket{le="+Inf"} 100.0',
            "t_seconds_count 100.0",
            "t_seconds_sum 5.0",
            "",
        ]
    )
    before = {0.01: 10.0, 0.1: 10.0, 1.0: 10.0, math.inf: 10.0}
    buckets = metrics.difference(metrics.histograms(text)["t_seconds"], before)
    assert buckets == {0.01: 40.0, 0.1: 80.0, 1.0: 90.0, math.inf: 90.0}
    # 45 of 90 observations are at or under 0.01 + half-way into the next bucket's 40.
    assert metrics.quantile(buckets, 0.5) == pytest.approx(0.01 + 0.09 * (5 / 40))
    assert metrics.quantile(buckets, 0.99) == pytest.approx(0.1 + 0.9 * (89.1 - 80) / 10)
    merged = metrics.merge([buckets, buckets])
    assert merged[math.inf] == 180.0
    assert metrics.quantile(merged, 0.5) == pytest.approx(metrics.quantile(buckets, 0.5))
    assert math.isnan(metrics.quantile({}, 0.5))
    # Beyond the last finite bound, the answer is that bound (the histogram knows no more).
    assert metrics.quantile({0.1: 0.0, math.inf: 5.0}, 0.99) == 0.1


def test_the_room_backend_counters_are_shown_as_counters() -> None:
    """With --redis, /metrics carries the backend's saves and round trips (their ratio is the group
    commit's batch size); with rooms in memory there are none."""
    counts = {"saves": 12, "save_round_trips": 3, "save_conflicts": 1}
    text = metrics.Metrics(lambda: 0, lambda: 0, lambda: dict(counts)).render().decode()
    assert "# TYPE conflictology_shared_saves_total counter" in text
    assert sample(text, "conflictology_shared_saves_total") == 12
    assert sample(text, "conflictology_shared_save_round_trips_total") == 3
    counts["saves"] = 20  # read afresh at each render
    text = metrics.Metrics(lambda: 0, lambda: 0, lambda: dict(counts)).render().decode()
    assert sample(text, "conflictology_shared_saves_total") == 20
    assert "conflictology_shared" not in metrics.Metrics(lambda: 0, lambda: 0).render().decode()


def test_serve_paces_the_collector_by_default_or_makes_its_passes_rare(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The collector's passes stopped the event loop for 50-490 ms at 1,000 rooms
    (benchmarks/server.md): `serve` paces it (server/collector.py) unless told `--gc python`, and
    makes Python's own passes rare before it starts the server either way."""
    import gc

    import uvicorn
    from typer.testing import CliRunner

    from conflictology.cli import app
    from conflictology.server.collector import GC_THRESHOLDS

    started: list[tuple[str, tuple[int, ...]]] = []
    monkeypatch.setattr(
        uvicorn, "run", lambda served, **k: started.append((served.state.config.gc, gc.get_threshold()))
    )
    before = gc.get_threshold()
    try:
        db = f"sqlite:///{tmp_path / 'x.sqlite3'}"
        for extra in ([], ["--gc", "python"]):
            result = CliRunner().invoke(app, ["serve", "--port", "0", "--db", db, *extra])
            assert result.exit_code == 0, result.output
        assert started == [("paced", GC_THRESHOLDS), ("python", GC_THRESHOLDS)]
        assert GC_THRESHOLDS[0] > before[0] and GC_THRESHOLDS[2] > before[2]
    finally:
        gc.set_threshold(*before)


def test_bot_fallbacks_are_counted_by_reason(server: Server) -> None:
    """Issue 25, item 4: every reason a bot decision was not played as asked has its own series,
    0 from the start, and moves with the pool's count."""
    text = scrape(server)
    reasons = ("queue_wait", "queue_full", "no_worker", "time_cap", "worker_lost", "expired", "failed")
    for reason in reasons:
        assert f'conflictology_bot_fallbacks_total{{reason="{reason}"}} 0.0' in text
    server.app.state.hub.bot_pool.counts.fell_back("time_cap")
    assert sample(scrape(server), "conflictology_bot_fallbacks_total", reason="time_cap") == 1
    with pytest.raises(ValueError, match="one of"):
        server.app.state.hub.bot_pool.counts.fell_back("bored")


def test_hard_decisions_are_counted_by_how_they_were_played(server: Server) -> None:
    """Issue 28: the decisions asked of a search (``hard``), by its full search, a quick one or not by
    it at all; every way 0 from the start."""
    text = scrape(server)
    for how in ("search", "quick", "fell_back"):
        assert f'conflictology_bot_hard_decisions_total{{how="{how}"}} 0.0' in text
    server.app.state.hub.bot_pool.counts.played("quick")
    assert sample(scrape(server), "conflictology_bot_hard_decisions_total", how="quick") == 1
    with pytest.raises(ValueError, match="one of"):
        server.app.state.hub.bot_pool.counts.played("lazily")
