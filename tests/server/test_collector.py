"""When Python's cycle collector runs in a server (server/collector.py): ``paced`` takes a full pass
only once the objects grew enough, frees the cycles then, gives the collector back as it found it,
and every pass's pause is in /metrics; ``serve --gc`` takes nothing else."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

from conflictology.server import metrics
from conflictology.server.collector import PacedCollector, growth_needed
from server_helpers import free_port, thread_server


def test_a_full_pass_is_due_at_a_quarter_of_growth_and_never_below_the_minimum() -> None:
    assert growth_needed(100_000, growth_min=100_000) == 100_000  # a quarter would be 25,000
    assert growth_needed(1_000_000, growth_min=100_000) == 250_000
    assert growth_needed(0) == 100_000  # the default minimum


class Node:
    loop: Node | None = None


def test_paced_frees_cycles_once_the_objects_grew_and_gives_the_collector_back() -> None:
    was = gc.isenabled()
    collector = PacedCollector(growth_min=5_000, share=0.0)
    collector.start()
    try:
        assert not gc.isenabled() and collector.passes == 1
        assert not collector.check()  # nothing grew since the first pass
        node = Node()
        node.loop = node
        probe = weakref.ref(node)
        del node
        assert not collector.check() and probe() is not None  # one cycle: not worth a pass
        grown = [[i] for i in range(10_000)]
        assert collector.check() and probe() is None and collector.passes == 2
        assert not collector.check()  # and not again until it grows again
        del grown
    finally:
        collector.stop()
    assert gc.isenabled() == was and gc.get_freeze_count() == 0


def test_a_paced_server_stops_the_collector_while_it_runs_and_shows_its_pauses(tmp_path: Path) -> None:
    was = gc.isenabled()
    with thread_server(tmp_path, gc="paced") as server:
        assert not gc.isenabled()
        with server.http() as http:
            text = http.get("/metrics").text
        counts = [
            s.value
            for family in metrics.text_string_to_metric_families(text)
            for s in family.samples
            if s.name == "conflictology_gc_pause_seconds_count"
        ]
        assert counts and counts[0] >= 1  # the pass it started with
    assert gc.isenabled() == was


def test_serve_takes_only_the_two_policies() -> None:
    from typer.testing import CliRunner

    from conflictology.cli import app

    result = CliRunner().invoke(app, ["serve", "--port", str(free_port()), "--gc", "never"])
    assert result.exit_code == 2 and "--gc is paced or python" in result.output
