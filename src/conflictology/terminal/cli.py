"""``conflictology play``: a game against bots in the terminal (registered on the main CLI)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.console import Console


def register(app: typer.Typer) -> None:
    app.command()(play)


def default_bot(game_name: str) -> tuple[str, str | None]:
    """The bot to seat when none is named: the servers' default level if this game has it, else the
    heuristic, else the search bot ("hard"), else random — with a note saying why."""
    from conflictology import bots, games

    game = games.get(game_name)
    for spec in (bots.DEFAULT_LEVEL, "heuristic", "hard", "random"):
        try:
            bots.check(spec, game)
        except ValueError:
            continue
        if spec in (bots.DEFAULT_LEVEL, "heuristic"):
            return spec, None
        return spec, f"no heuristic bot for {game_name} yet: playing against {spec!r} bots"
    raise ValueError(f"no bot can play {game_name}")


def parse_options(items: list[str]) -> dict[str, Any]:
    """``key=value`` pairs; a value is read as JSON when it parses (``true``, ``3``, ``["mafia"]``)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise ValueError(f"bad --option {item!r}: expected key=value")
        try:
            out[key] = json.loads(text)
        except json.JSONDecodeError:
            out[key] = text
    return out


def play(
    game: Annotated[str, typer.Argument(help="capitol or conspiranoicos")],
    players: Annotated[
        int | None, typer.Option("--players", "-n", help="seats at the table (default: the game's minimum)")
    ] = None,
    bots_: Annotated[
        str | None,
        typer.Option("--bots", help="bot names or levels for the other seats, comma-separated (one for all)"),
    ] = None,
    seat: Annotated[int, typer.Option("--seat", help="your seat (0 is the first)")] = 0,
    seed: Annotated[int | None, typer.Option(help="seed for a reproducible game")] = None,
    option: Annotated[
        list[str] | None, typer.Option("--option", "-o", help="a rule option, key=value (repeatable)")
    ] = None,
    delay: Annotated[float, typer.Option("--delay", help="seconds before each bot decision")] = 0.4,
) -> None:
    """Play GAME in the terminal against bots: you see your own cards only, and choose by number."""
    from conflictology import games
    from conflictology.terminal.session import TerminalGame

    console = Console()
    try:
        g = games.get(game)
        n = g.min_players if players is None else players
        g.check_players(n)
        if bots_:
            specs = [b.strip() for b in bots_.split(",") if b.strip()]
        else:
            spec, note = default_bot(game)
            if note:
                console.print(f"[yellow]{note}[/yellow]")
            specs = [spec]
        if len(specs) == 1:
            specs = specs * (n - 1)
        if len(specs) != n - 1:
            raise ValueError(f"--bots names {len(specs)} bots for {n - 1} other seats")
        session = TerminalGame(
            g, n, specs, human_seat=seat, seed=seed, options=parse_options(option or []),
            console=console, bot_delay=delay,
        )
    except ValueError as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc
    winners = session.run()
    if winners is None:
        raise typer.Exit(1)
