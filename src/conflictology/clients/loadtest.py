"""``conflictology loadtest``: many rooms of network bots against one or several servers.

The rooms are played by client processes (:mod:`conflictology.clients.loadworker`: how rooms are
made and spread over the servers, what a seat does when its socket drops, and what latency means);
this module starts them together, gathers what they measured, and reads the servers' side.

The servers' own side comes from their ``/metrics``, read when the window opens and when it closes:
how long a server took from a move's arrival to its views queued (*server p99*), and how late its
event loop ran (*loop lag p99*). On a machine the load generator shares, the gap between the client's
p99 and the server's says how much of the tail is the clients' own scheduling.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import httpx
import typer

from conflictology import bots, games
from conflictology.clients.loadworker import Counters, worker_main
from conflictology.server import metrics


@dataclass
class LoadResult:
    rooms: int
    players: int
    servers: int
    duration: float
    actions: int
    errors: int
    reconnects: int
    stale: int
    games: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    error_samples: list[str]
    # The servers' own side (their /metrics over the run, all servers together; NaN when a server
    # does not publish them): a move's handling time, and how late their event loops ran.
    server_p50_ms: float = math.nan
    server_p99_ms: float = math.nan
    loop_lag_p99_ms: float = math.nan
    # Messages the clients received in the window, and their bytes.
    messages: int = 0
    received_bytes: int = 0

    @property
    def actions_per_second(self) -> float:
        return self.actions / self.duration if self.duration > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "actions_per_second": round(self.actions_per_second, 1)}


def _scrape(servers: list[str]) -> list[dict[str, metrics.Buckets]] | None:
    """Every server's histograms now, or None if one of them does not answer /metrics."""
    out = []
    try:
        with httpx.Client(timeout=10) as http:
            for server in servers:
                response = http.get(server.rstrip("/") + "/metrics")
                response.raise_for_status()
                out.append(metrics.histograms(response.text))
    except (httpx.HTTPError, ValueError):
        return None
    return out


def _server_quantiles(
    before: list[dict[str, metrics.Buckets]] | None, after: list[dict[str, metrics.Buckets]] | None
) -> dict[str, float]:
    if before is None or after is None:
        return {}

    def window(name: str) -> metrics.Buckets:
        return metrics.merge(
            metrics.difference(a.get(name, {}), b.get(name, {})) for a, b in zip(after, before, strict=True)
        )

    actions = window("conflictology_action_seconds")
    lag = window("conflictology_event_loop_lag_seconds")
    return {
        "server_p50_ms": metrics.quantile(actions, 0.50) * 1000,
        "server_p99_ms": metrics.quantile(actions, 0.99) * 1000,
        "loop_lag_p99_ms": metrics.quantile(lag, 0.99) * 1000,
    }


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    i = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[i]


def run_loadtest(
    servers: list[str],
    rooms: int,
    players: int,
    duration: float,
    game: str = "capitol",
    level: str = "random",
    think: float = 1.0,
    workers: int = 1,
    seed: int = 0,
    progress: Callable[[str, float, int, int, int], None] | None = None,
) -> LoadResult:
    """Run the load test with ``workers`` client processes; ``progress(phase, fraction, actions,
    errors, reconnects)`` is called as it goes."""
    games.get(game).check_players(players)
    bots.check(level, games.get(game))
    workers = max(1, min(workers, rooms))
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    go = ctx.Event()
    measured = ctx.Event()
    procs = []
    for w in range(workers):
        args = {
            "worker": {
                "servers": servers,
                "room_ids": list(range(w, rooms, workers)),
                "players": players,
                "game": game,
                "level": level,
                "think": think,
                "seed": seed * 1000 + w,
            },
            "window": duration,
            "index": w,
        }
        p = ctx.Process(target=worker_main, args=(args, out, go, measured), daemon=True)
        p.start()
        procs.append(p)
    results: list[Counters] = []
    failures: list[str] = []
    ready = 0
    latest: dict[int, tuple[int, int, int]] = {}
    started = None
    scraped: list[dict[str, metrics.Buckets]] | None = None
    scraped_after: list[dict[str, metrics.Buckets]] | None = None
    closed = 0
    try:
        while len(results) + len(failures) < workers:
            try:
                kind, payload = out.get(timeout=1.0)
            except Exception:
                if not any(p.is_alive() for p in procs):
                    break
                kind, payload = "tick", None
            if kind == "ready":
                ready += 1
                if ready == workers:
                    scraped = _scrape(servers)
                    started = time.monotonic()
                    go.set()
            elif kind == "progress":
                latest[payload[0]] = payload[1:]
            elif kind == "closed":
                closed += 1
                if closed == workers:
                    # Every window is over and no socket has closed yet: the servers' side is read
                    # now, so the clients' goodbyes are not counted in it.
                    scraped_after = _scrape(servers)
                    if progress is not None:
                        acts = sum(v[0] for v in latest.values())
                        errs = sum(v[1] for v in latest.values())
                        progress("measured", 1.0, acts, errs, sum(v[2] for v in latest.values()))
                    measured.set()
            elif kind == "done":
                results.append(payload)
            elif kind == "failed":
                failures.append(payload)
                go.set()
                measured.set()
            if progress is not None and closed < workers:  # (after "measured", nothing more)
                if started is None:
                    progress("setup", ready / workers, 0, 0, 0)
                else:
                    frac = min(1.0, (time.monotonic() - started) / duration) if duration else 1.0
                    acts = sum(v[0] for v in latest.values())
                    progress(
                        "running",
                        frac,
                        acts,
                        sum(v[1] for v in latest.values()),
                        sum(v[2] for v in latest.values()),
                    )
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
    if failures:
        raise RuntimeError("; ".join(failures))
    server_side = _server_quantiles(scraped, scraped_after if scraped_after is not None else _scrape(servers))
    lat = sorted(x for c in results for x in c.latencies)
    samples = [s for c in results for s in c.error_samples][:5]
    return LoadResult(
        rooms=sum(c.rooms for c in results),
        players=players,
        servers=len(servers),
        duration=duration,
        actions=sum(c.actions for c in results),
        errors=sum(c.errors for c in results),
        reconnects=sum(c.reconnects for c in results),
        stale=sum(c.stale for c in results),
        games=sum(c.games for c in results),
        p50_ms=percentile(lat, 0.50) * 1000,
        p95_ms=percentile(lat, 0.95) * 1000,
        p99_ms=percentile(lat, 0.99) * 1000,
        max_ms=(lat[-1] * 1000) if lat else float("nan"),
        error_samples=samples,
        messages=sum(c.messages for c in results),
        received_bytes=sum(c.received_bytes for c in results),
        **server_side,
    )


def register(app: typer.Typer) -> None:
    @app.command()
    def loadtest(
        server: Annotated[
            list[str], typer.Option("--server", help="server URL (repeat to spread rooms over several)")
        ],
        rooms: Annotated[int, typer.Option("--rooms", help="rooms to open")] = 10,
        players: Annotated[int, typer.Option("--players", help="network bots per room")] = 4,
        duration: Annotated[float, typer.Option("--duration", help="seconds to measure")] = 30.0,
        game: Annotated[str, typer.Option("--game")] = "capitol",
        level: Annotated[str, typer.Option("--level", help="bot level of the network bots")] = "random",
        think: Annotated[
            float, typer.Option("--think", help="mean seconds a bot waits before acting (0: at once)")
        ] = 1.0,
        workers: Annotated[int, typer.Option("--workers", help="client processes")] = 1,
        seed: Annotated[int, typer.Option("--seed")] = 0,
        json_out: Annotated[bool, typer.Option("--json", help="print the result as JSON too")] = False,
    ) -> None:
        """Open ROOMS rooms of PLAYERS network bots over the given servers and measure them."""
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
        from rich.table import Table

        if rooms < 1 or duration <= 0:
            typer.echo("error: --rooms must be at least 1 and --duration positive", err=True)
            raise typer.Exit(2)
        try:
            games.get(game).check_players(players)
            bots.check(level, games.get(game))
        except ValueError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from exc
        console = Console(stderr=True)
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[stats]}"),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        ) as bar:
            task = bar.add_task("seating rooms", total=1.0, stats="")

            def progress(phase: str, frac: float, actions: int, errors: int, reconnects: int) -> None:
                if phase == "setup":
                    bar.update(task, description="seating rooms", completed=frac, stats="")
                else:
                    bar.update(
                        task,
                        description="playing",
                        completed=frac,
                        stats=f"{actions} actions, {errors} errors, {reconnects} reconnects",
                    )

            try:
                result = run_loadtest(
                    server, rooms, players, duration, game, level, think, workers, seed, progress
                )
            except RuntimeError as exc:
                typer.echo(f"error: {exc}", err=True)
                raise typer.Exit(1) from exc
        table = Table(title=f"{rooms} rooms × {players} players on {len(server)} server(s), {duration:g} s")
        for col in (
            "rooms",
            "actions/s",
            "p50 ms",
            "p95 ms",
            "p99 ms",
            "server p99 ms",
            "loop lag p99 ms",
            "errors",
            "reconnects",
            "stale",
            "games",
        ):
            table.add_column(col, justify="right")
        table.add_row(
            str(result.rooms),
            f"{result.actions_per_second:.1f}",
            f"{result.p50_ms:.1f}",
            f"{result.p95_ms:.1f}",
            f"{result.p99_ms:.1f}",
            f"{result.server_p99_ms:.1f}",
            f"{result.loop_lag_p99_ms:.1f}",
            str(result.errors),
            str(result.reconnects),
            str(result.stale),
            str(result.games),
        )
        Console(width=160).print(table)
        for sample in result.error_samples:
            typer.echo(f"  {sample}")
        if json_out:
            typer.echo(json.dumps(result.as_dict()))
        if result.errors:
            raise typer.Exit(1)
