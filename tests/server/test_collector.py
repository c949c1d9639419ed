"""When Python's cycle collector runs in a server (server/collector.py): ``paced`` scans what was
made in slices and freezes what survives, takes a full pass only once the objects grew enough and
no sooner than its interval (unless they grew too much to wait), frees the cycles then, gives the
collector back as it found it, and every pass's pause is in /metrics; ``serve --gc`` takes nothing
else."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import Any

from conflictology.server import metrics
from conflictology.server.collector import YOUNG_OBJECTS, PacedCollector, growth_needed
from server_helpers import free_port, thread_server


def test_a_full_pass_is_due_at_a_quarter_of_growth_and_never_below_the_minimum() -> None:
    assert growth_needed(100_000, growth_min=100_000) == 100_000  # a quarter would be 25,000
    assert growth_needed(1_000_000, growth_min=100_000) == 250_000
    assert growth_needed(0) == 300_000  # the default minimum, in blocks


class Node:
    loop: Node | None = None


def cycle() -> weakref.ref[Node]:
    """A garbage cycle, kept alive only by the collector not having found it; a weak reference to it."""
    node = Node()
    node.loop = node
    return weakref.ref(node)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_paced_frees_cycles_once_grown_and_its_interval_passed_and_gives_the_collector_back() -> None:
    was, thresholds = gc.isenabled(), gc.get_threshold()
    clock = Clock()
    collector = PacedCollector(growth_min=5_000, share=0.0, full_every=60, growth_urgent=10**9, clock=clock)
    collector.start()
    try:
        assert gc.isenabled() and gc.get_threshold()[0] == YOUNG_OBJECTS and collector.passes == 1
        clock.now += 61
        assert not collector.check()  # nothing grew since the first pass
        probe = cycle()
        assert not collector.check() and probe() is not None  # one cycle: not worth a pass
        grown = [[i] for i in range(10_000)]
        clock.now -= 30  # grown enough, but the last full pass was too recent
        assert not collector.check() and probe() is not None
        clock.now += 30
        assert collector.check() and probe() is None and collector.passes == 2
        assert not collector.check()  # and not again until it grows again
        del grown
    finally:
        collector.stop()
    assert gc.isenabled() == was and gc.get_threshold() == thresholds and gc.get_freeze_count() == 0


def test_paced_takes_a_full_pass_at_once_when_the_objects_grew_too_much_to_wait() -> None:
    clock = Clock()
    collector = PacedCollector(growth_min=5_000, full_every=600, growth_urgent=20_000, clock=clock)
    collector.start()
    try:
        probe = cycle()
        assert not collector.check()  # frozen: only a full pass sees it now
        grown = [[i] for i in range(10_000)]
        assert not collector.check() and probe() is not None  # a quarter, but not urgent
        # Too much is the urgent growth, or as much as the last pass kept (this process's objects).
        grown += [[i] for i in range(max(20_000, collector.after_last) // 2)]  # 3 blocks each
        assert collector.check() and probe() is None and collector.passes == 2
        del grown
    finally:
        collector.stop()


def test_paced_scans_what_was_made_in_young_slices_and_freezes_what_survives() -> None:
    passes: list[int] = []

    def watch(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            passes.append(info["generation"])

    collector = PacedCollector(young_objects=1_000, clock=Clock())
    collector.start()
    gc.callbacks.append(watch)
    try:
        frozen = gc.get_freeze_count()
        probe = cycle()
        kept = [[i] for i in range(5_000)]  # made faster than any check: Python's count starts passes
        assert passes and max(passes) < 2 and probe() is None  # young passes, and they freed the cycle
        assert gc.get_freeze_count() >= frozen + 4_000  # what they left alive is frozen, not scanned again
        assert len(gc.get_objects()) < 1_000 + 100
        assert collector.passes == 1  # no full pass
        del kept
    finally:
        gc.callbacks.remove(watch)
        collector.stop()


def test_a_paced_server_runs_the_collector_in_slices_and_shows_its_pauses(tmp_path: Path) -> None:
    was, thresholds = gc.isenabled(), gc.get_threshold()
    with thread_server(tmp_path, gc="paced") as server:
        assert gc.get_threshold()[0] == YOUNG_OBJECTS and gc.get_freeze_count() > 0
        with server.http() as http:
            text = http.get("/metrics").text
        counts = [
            s.value
            for family in metrics.text_string_to_metric_families(text)
            for s in family.samples
            if s.name == "conflictology_gc_pause_seconds_count"
        ]
        assert counts and counts[0] >= 1  # the pass it started with
    assert gc.isenabled() == was and gc.get_threshold() == thresholds


def test_serve_takes_only_the_two_policies() -> None:
    from typer.testing import CliRunner

    from conflictology.cli import app

    result = CliRunner().invoke(app, ["serve", "--port", str(free_port()), "--gc", "never"])
    assert result.exit_code == 2 and "--gc is paced or python" in result.output
