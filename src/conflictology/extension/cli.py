"""The ``conflictology extension`` command: build the Chrome extension for a server."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def extension(
        server: Annotated[str, typer.Option("--server", help="the server's URL, e.g. https://play.example.org")],
        out: Annotated[Path, typer.Option("--out", help="directory for the unpacked extension")],
        zip_: Annotated[
            bool, typer.Option("--zip/--no-zip", help="also write DIR.zip for the Chrome Web Store")
        ] = True,
    ) -> None:
        """Write an unpacked Manifest V3 extension (and a zip) whose popup plays on SERVER."""
        from conflictology.extension import build

        try:
            result = build(server, out, make_zip=zip_)
        except ValueError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from exc
        typer.echo(f"extension written to {out}")
        if zip_:
            typer.echo(f"store package: {result}")
        typer.echo("load it: chrome://extensions → Developer mode → Load unpacked → choose that directory")
