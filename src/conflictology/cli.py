"""The ``conflictology`` command line."""

from __future__ import annotations

import importlib
import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(
    name="conflictology",
    help="An online table for games of bluffing and deduction.",
    no_args_is_help=True,
    add_completion=False,
)
console = Console()


@app.callback()
def _root() -> None:
    """Conflictology: Capitol and Conspiranoicos, for people and for bots."""

# Each area adds its own commands through a ``register(app)`` function, so the areas stay separate.
_COMMAND_MODULES: list[str] = ["conflictology.arena_cli", "conflictology.terminal.cli"]
# The clients' commands around the server's, in the order ``--help`` has always listed them.
_COMMAND_MODULES.append("conflictology.clients.loadtest")
_COMMAND_MODULES.append("conflictology.server.cli")
_COMMAND_MODULES.append("conflictology.clients.cli")
_COMMAND_MODULES.append("conflictology.extension.cli")
_COMMAND_MODULES.append("conflictology.corpus.cli")


@app.command()
def simulate(
    game: Annotated[str, typer.Argument(help="capitol or conspiranoicos")],
    players: Annotated[int, typer.Option("--players", "-n", help="seats at the table")] = 2,
    games_: Annotated[int, typer.Option("--games", "-k", help="games to play")] = 100,
    seed: Annotated[int | None, typer.Option(help="seed for a reproducible run")] = None,
    bots_: Annotated[
        str | None, typer.Option("--bots", help="bot names, one per seat, comma-separated")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
) -> None:
    """Play GAMES games between bots (seats rotated) and print the wins per bot."""
    from conflictology.simulate import simulate as run

    names = [b.strip() for b in bots_.split(",")] if bots_ else ["random"] * players
    if len(names) == 1 and players > 1:
        names = names * players
    try:
        result = run(game, players, games_, names, seed=seed)
    except ValueError as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc
    if as_json:
        print(json.dumps(result.to_json()))
        return
    table = Table(title=f"{game}: {games_} games, {players} players")
    table.add_column("bot")
    table.add_column("seats", justify="right")
    table.add_column("wins", justify="right")
    table.add_column("win share", justify="right")
    table.add_column("95 % CI", justify="right")
    table.add_column("ms/decision", justify="right")
    from conflictology.arena import wilson

    for name in dict.fromkeys(names):
        seats = names.count(name)
        wins = result.wins[name]
        lo, hi = wilson(wins, games_)
        asked = result.bot_decisions.get(name, 0)
        per = f"{1000 * result.bot_seconds[name] / asked:.2f}" if asked else "—"
        share = f"{wins / max(1, games_):.3f}"
        table.add_row(name, str(seats), f"{wins:g}", share, f"{lo:.2f}–{hi:.2f}", per)
    console.print(table)
    console.print(
        f"draws: {result.draws} (unfinished: {result.unfinished})   games/s: {result.games_per_second:.1f}   "
        f"decisions/s: {result.decisions / max(result.seconds, 1e-9):.0f}"
    )


for _module in _COMMAND_MODULES:
    importlib.import_module(_module).register(app)


def main() -> None:  # pragma: no cover - console entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
