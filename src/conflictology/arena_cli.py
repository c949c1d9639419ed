"""``conflictology arena``: a rated round robin between bots (registered on the main CLI)."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table


def register(app: typer.Typer) -> None:
    app.command()(arena)


def arena(
    game: Annotated[str, typer.Argument(help="capitol or conspiranoicos")],
    bots_: Annotated[
        str, typer.Option("--bots", help="two or more bot names or specs, comma-separated")
    ] = "random,heuristic,ismcts",
    games_: Annotated[int, typer.Option("--games", "-k", help="games per table of the round robin")] = 20,
    players: Annotated[
        int | None, typer.Option("--players", "-n", help="seats per table (default: the game's minimum)")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="seed for a reproducible run")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
) -> None:
    """A round robin between bots (seats rotated) with an OpenSkill ratings table."""
    from conflictology.arena import run_arena, wilson

    console = Console(stderr=as_json)
    names = [b.strip() for b in bots_.split(",") if b.strip()]
    progress = Progress(
        TextColumn("[bold]arena[/bold] {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=as_json,
    )
    try:
        with progress:
            task = progress.add_task(game, total=None)

            def tick(done: int, total: int) -> None:
                progress.update(task, completed=done, total=total)

            result = run_arena(game, names, games_, players=players, seed=seed, on_game=tick)
    except ValueError as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc
    if as_json:
        print(json.dumps(result.to_json()))
        return
    table = Table(title=f"{game}: {result.games} games, {result.players} seats per table")
    table.add_column("#", justify="right")
    table.add_column("bot", no_wrap=True)
    for col in ("rating", "μ ± σ", "games", "win share (95 % CI)", "s/decision"):
        table.add_column(col, justify="right")
    for rank, s in enumerate(result.standings, 1):
        lo, hi = wilson(s.wins, s.games)
        per = s.seconds / s.decisions if s.decisions else 0.0
        table.add_row(
            str(rank), s.bot, f"{s.ordinal:.1f}", f"{s.mu:.1f} ± {s.sigma:.1f}", str(s.games),
            f"{s.win_share:.3f} ({lo:.2f}–{hi:.2f})", f"{per:.4f}",
        )
    console.print(table)
    if len(result.standings) > 2:
        order = [s.bot for s in result.standings]
        grid = Table(title="wins / games at the same table (row bot's wins; columns numbered as above)")
        grid.add_column("bot", no_wrap=True)
        for i in range(len(order)):
            grid.add_column(f"#{i + 1}", justify="right")
        for a in order:
            cells = [
                "—" if a == b else f"{result.pairwise[a][b]:g}/{result.meetings[a][b]}" for b in order
            ]
            grid.add_row(a, *cells)
        console.print(grid)
    console.print(f"{result.seconds:.1f} s")
