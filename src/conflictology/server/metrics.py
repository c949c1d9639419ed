"""What a host's monitoring reads: ``GET /metrics``, in the Prometheus text format.

Counts and timings only — never a room code, a player name or a card — so the endpoint is as public
as ``/healthz``. The two timings answer "is this server keeping up?" from the server's own side:

- ``conflictology_action_seconds``: from a move arriving on a socket to the move applied, saved
  (in Redis, when rooms are shared) and every local player's new view queued for sending;
- ``conflictology_event_loop_lag_seconds``: how late a 100 ms timer fires. Everything a process does
  runs on one event loop, so this lag is added to every message it handles.

``conflictology_gc_pause_seconds`` says how much of that lag Python's cycle collector made: each of
its passes stops the loop (collector.py).

``conflictology loadtest`` reads both before and after its run and reports the server's own p99
next to the one its clients measured (benchmarks/server.md explains why both matter).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from conflictology.server.archive import ArchiveStats
    from conflictology.server.connections import ConnectionStats

__all__ = ["Metrics", "difference", "histograms", "merge", "quantile", "text_string_to_metric_families"]

CONTENT_TYPE = CONTENT_TYPE_LATEST

# Seconds. Fine at the low end, where a healthy server lives; coarse above 100 ms.
TIMING_BUCKETS = (
    0.0005,
    0.001,
    0.002,
    0.005,
    0.01,
    0.02,
    0.05,
    0.1,
    0.2,
    0.5,
    1.0,
    2.5,
    5.0,
)

LAG_INTERVAL = 0.1


class Metrics:
    """One server process's metrics, in a registry of its own (so several apps can share a process
    in tests without mixing their numbers)."""

    def __init__(
        self,
        connections: Callable[[], int],
        rooms: Callable[[], int],
        backend_stats: Callable[[], dict[str, int]] = dict,
        bot_stats: Callable[[], dict[str, int]] = dict,
        bot_totals: Callable[[], dict[str, int]] = dict,
        bot_fallbacks: Callable[[], dict[str, int]] = dict,
        bot_searched: Callable[[], dict[str, int]] = dict,
    ) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.action_seconds = Histogram(
            "conflictology_action_seconds",
            "From a move arriving on a socket to every local view of its result queued",
            buckets=TIMING_BUCKETS,
            registry=self.registry,
        )
        self.loop_lag_seconds = Histogram(
            "conflictology_event_loop_lag_seconds",
            f"How late a {LAG_INTERVAL:g} s timer fires on the server's event loop",
            buckets=TIMING_BUCKETS,
            registry=self.registry,
        )
        self.gc_pause_seconds = Histogram(
            "conflictology_gc_pause_seconds",
            "How long each pass of Python's cycle collector stopped the process (serve --gc)",
            buckets=TIMING_BUCKETS,
            registry=self.registry,
        )
        self.refused = Counter(
            "conflictology_refused_messages",
            "Socket messages answered with an error, by error code",
            ["code"],
            registry=self.registry,
        )
        self.refused_requests = Counter(
            "conflictology_refused_requests",
            "HTTP requests and WebSocket handshakes refused before reaching a room, by error code",
            ["code"],
            registry=self.registry,
        )
        gauge = Gauge("conflictology_connections", "Open WebSockets on this process", registry=self.registry)
        gauge.set_function(lambda: float(connections()))
        gauge = Gauge(
            "conflictology_rooms_connected",
            "Rooms with at least one WebSocket open on this process",
            registry=self.registry,
        )
        gauge.set_function(lambda: float(rooms()))
        self.registry.register(_BackendCollector(backend_stats))
        self.registry.register(_BotPoolCollector(bot_stats, bot_totals, bot_fallbacks, bot_searched))

    def count_connections(self, stats: Callable[[], ConnectionStats]) -> None:
        """Add the connection guard's numbers (server/connections.py): open TCP connections and
        the cap, refusals, evictions, timeouts and refused WebSocket frames."""
        self.registry.register(_ConnectionCollector(stats))

    def count_archive(self, stats: Callable[[], ArchiveStats]) -> None:
        """Add the finished games waiting for the database (archive.py, durability.py)."""
        self.registry.register(_ArchiveCollector(stats))

    def render(self) -> bytes:
        return generate_latest(self.registry)

    async def watch_event_loop(self) -> None:
        while True:
            start = time.perf_counter()
            await asyncio.sleep(LAG_INTERVAL)
            self.loop_lag_seconds.observe(max(0.0, time.perf_counter() - start - LAG_INTERVAL))


_BACKEND_HELP = {
    "saves": "Room changes saved to the shared backend",
    "save_round_trips": "Round trips that carried those saves (several per trip when they coincide)",
    "save_conflicts": "Saves refused by the version check (another process changed the room first)",
}


class _BackendCollector(Collector):
    """The room backend's own counters, read when ``/metrics`` is rendered: with ``--redis``, saves
    and the round trips that carried them (their ratio is the group commit's batch size), and the
    version checks that failed and were retried."""

    def __init__(self, stats: Callable[[], dict[str, int]]) -> None:
        self.stats = stats

    def collect(self) -> Iterator[Metric]:
        for name, value in self.stats().items():
            help_text = _BACKEND_HELP.get(name, name)
            yield CounterMetricFamily(f"conflictology_shared_{name}", help_text, value=value)

    def describe(self) -> Iterator[Metric]:
        return iter(())  # names depend on the backend: described when collected


class _ConnectionCollector(Collector):
    """Read from the connection guard when ``/metrics`` is rendered (it counts in plain ints on the
    event loop, where every connection opens and closes)."""

    def __init__(self, stats: Callable[[], ConnectionStats]) -> None:
        self.stats = stats

    def collect(self) -> Iterator[Metric]:
        s = self.stats()
        yield GaugeMetricFamily(
            "conflictology_open_connections", "TCP connections open (HTTP and WebSocket)", value=s.open
        )
        yield GaugeMetricFamily(
            "conflictology_waiting_connections",
            "Open connections waiting on their client's request (the ones evicted at the cap)",
            value=s.waiting,
        )
        yield GaugeMetricFamily(
            "conflictology_max_connections", "The cap on open connections", value=s.max_connections
        )
        refused = CounterMetricFamily(
            "conflictology_connections_refused",
            "Connections closed at once: address_cap (per client address) or server_cap (all)",
            labels=["reason"],
        )
        for reason, count in s.refused.items():
            refused.add_metric([reason], count)
        yield refused
        yield CounterMetricFamily(
            "conflictology_connections_evicted",
            "Connections waiting on their client, closed to admit a new one at the cap",
            value=s.evicted,
        )
        timed_out = CounterMetricFamily(
            "conflictology_connections_timed_out",
            "Connections dropped because a request's headers or body did not arrive in time, or a "
            "response stayed unread (part: headers, body, response)",
            labels=["part"],
        )
        for part, count in s.timed_out.items():
            timed_out.add_metric([part], count)
        yield timed_out
        frames = CounterMetricFamily(
            "conflictology_frames_refused",
            "WebSocket frames that closed their socket (invalid_utf8, protocol_error, too_big, other)",
            labels=["reason"],
        )
        for reason, count in s.frames_refused.items():
            frames.add_metric([reason], count)
        yield frames


class _ArchiveCollector(Collector):
    """Finished games the database has not taken yet: zero on a healthy server; growing while the
    database refuses (they are kept, and written once it answers)."""

    def __init__(self, stats: Callable[[], ArchiveStats]) -> None:
        self.stats = stats

    def collect(self) -> Iterator[Metric]:
        s = self.stats()
        yield GaugeMetricFamily(
            "conflictology_archive_waiting",
            "Finished games waiting to be written to the database (with --redis: the deployment's)",
            value=s.waiting,
        )
        yield GaugeMetricFamily(
            "conflictology_archive_oldest_seconds",
            "How long the oldest finished game has waited for the database (0 when none waits)",
            value=s.oldest_seconds,
        )


_BOT_GAUGES = {
    "workers": "Bot worker processes running",
    "busy": "Bot workers deciding now (searches under way at most this many)",
    "queued_quick": "Bot decisions (heuristics) waiting for a worker",
    "queued_search": "Bot searches waiting for a worker",
}
_BOT_COUNTERS = {
    "sent": "Bot decisions sent to a worker",
    "searches": "Bot searches sent to a worker (the rest of those sent are heuristics)",
    "late": "Searches that waited too long for a worker and were played by the default level",
    "over_cap": "Bot decisions cut at the time cap (worker killed; the seat took its timeout action)",
    "crashed": "Bot workers that died on their own (replaced)",
    "expired": "Bot decisions that found no worker in time (the seat took its timeout action)",
    "failed": "Bot decisions that raised (the seat took its timeout action)",
    "here": "Bot decisions made in the server process (a game or bot the workers do not know)",
    "started": "Bot worker processes started",
}


class _BotPoolCollector(Collector):
    """The bot pool (docs/bots.md, "On a server"): how busy it is now, and what it did."""

    def __init__(
        self,
        stats: Callable[[], dict[str, int]],
        totals: Callable[[], dict[str, int]],
        fallbacks: Callable[[], dict[str, int]] = dict,
        searched: Callable[[], dict[str, int]] = dict,
    ) -> None:
        self.stats = stats
        self.totals = totals
        self.fallbacks = fallbacks
        self.searched = searched

    def collect(self) -> Iterator[Metric]:
        for name, value in self.stats().items():
            yield GaugeMetricFamily(f"conflictology_bot_{name}", _BOT_GAUGES.get(name, name), value=value)
        for name, value in self.totals().items():
            yield CounterMetricFamily(f"conflictology_bot_{name}", _BOT_COUNTERS.get(name, name), value=value)
        yield from _by_label(
            "conflictology_bot_fallbacks",
            "Bot decisions not played as asked, by reason: queue_wait, queue_full, no_worker (a search "
            "played by the default level); time_cap, worker_lost, expired, failed (the timeout action)",
            "reason",
            self.fallbacks(),
        )
        yield from _by_label(
            "conflictology_bot_hard_decisions",
            "Bot decisions asked of a search (hard), by how they were played: search (on its own "
            "clock), quick (on a short clock: the workers were busy), fell_back (by the default "
            "level, or the timeout action)",
            "how",
            self.searched(),
        )

    def describe(self) -> Iterator[Metric]:
        return iter(())


def _by_label(name: str, help_text: str, label: str, counts: dict[str, int]) -> Iterator[Metric]:
    """One counter family with a sample per value of ``label`` (none at all without counts)."""
    if counts:
        family = CounterMetricFamily(name, help_text, labels=[label])
        for value, count in counts.items():
            family.add_metric([value], count)
        yield family


# ---- reading them back (the load test) ------------------------------------------------------------

Buckets = dict[float, float]  # upper bound -> cumulative count


def histograms(text: str) -> dict[str, Buckets]:
    """Every histogram in a ``/metrics`` text, by name: its cumulative bucket counts."""
    out: dict[str, Buckets] = {}
    for family in text_string_to_metric_families(text):
        if family.type != "histogram":
            continue
        buckets: Buckets = {}
        for sample in family.samples:
            if sample.name.endswith("_bucket"):
                le = sample.labels["le"]
                bound = math.inf if le in ("+Inf", "inf") else float(le)
                buckets[bound] = buckets.get(bound, 0.0) + sample.value
        out[family.name] = buckets
    return out


def merge(parts: Iterable[Buckets]) -> Buckets:
    total: Buckets = {}
    for part in parts:
        for bound, count in part.items():
            total[bound] = total.get(bound, 0.0) + count
    return total


def difference(after: Buckets, before: Buckets) -> Buckets:
    return {bound: count - before.get(bound, 0.0) for bound, count in after.items()}


def quantile(buckets: Buckets, q: float) -> float:
    """The q-quantile of a cumulative histogram, interpolated inside its bucket as Prometheus'
    ``histogram_quantile`` does (NaN when empty; the last finite bound when it falls in +Inf)."""
    bounds = sorted(buckets)
    if not bounds or buckets[bounds[-1]] <= 0:
        return math.nan
    rank = q * buckets[bounds[-1]]
    lower, below = 0.0, 0.0
    for bound in bounds:
        count = buckets[bound]
        if count >= rank:
            if math.isinf(bound):
                return lower
            inside = count - below
            return lower + (bound - lower) * ((rank - below) / inside if inside > 0 else 1.0)
        lower, below = bound, count
    return lower
