"""The ``bot`` command: a network bot (:mod:`conflictology.clients.netbot`) in a room of a server."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def bot(
        server: Annotated[str, typer.Option("--server", help="server URL, e.g. http://127.0.0.1:8000")],
        room: Annotated[str, typer.Option("--room", help="room code")],
        level: Annotated[
            str | None, typer.Option("--level", help="bot level (default: a good opponent)")
        ] = None,
        name: Annotated[str | None, typer.Option("--name", help="the name shown at the table")] = None,
        token: Annotated[str | None, typer.Option("--token", help="resume a seat instead of joining")] = None,
        games_: Annotated[int, typer.Option("--games", help="games to play before leaving")] = 1,
    ) -> None:
        """A bot that joins a room over the network and plays."""
        from conflictology.clients.netbot import run_bot

        try:
            result = asyncio.run(run_bot(server, room, level, name, token, games_to_play=games_))
        except (ValueError, RuntimeError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from exc
        typer.echo(
            f"seat {result.seat}: {result.decisions} decisions, winners {result.winners}"
            f"{' (won)' if result.seat in result.winners else ''}"
        )
