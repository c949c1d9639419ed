"""``conflictology corpus run [PATH…]``: run the rules corpus and print a table of its scenarios."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from conflictology.corpus.runner import CORPUS, ScenarioError, load, run_all

corpus_app = typer.Typer(
    help="The rules corpus: language-neutral scenarios (docs/corpus.md).", no_args_is_help=True
)
NUMBERS = ("steps", "checks")


@corpus_app.command("run")
def run_command(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="scenario files or directories (default: the corpus/ directory)"),
    ] = None,
    failures_only: Annotated[
        bool, typer.Option("--failures", help="list the failing scenarios only")
    ] = False,
) -> None:
    """Run the scenarios; exit status 1 if any fails (the message names the step that differed)."""
    console = Console()
    targets = paths or [CORPUS]
    missing = [p for p in targets if not p.exists()]
    if missing:
        console.print(f"[red]error:[/red] no such file or directory: {', '.join(map(str, missing))}")
        raise typer.Exit(2)
    try:
        outcomes = run_all(load(targets))
    except ScenarioError as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc
    table = Table(title=f"rules corpus: {len(outcomes)} scenarios")
    for column in ("scenario", "where", "steps", "checks", "result"):
        table.add_column(column, justify="right" if column in NUMBERS else "left", overflow="fold")
    for o in outcomes:
        if failures_only and o.passed:
            continue
        result = "[green]pass[/green]" if o.passed else f"[red]FAIL[/red] {o.error}"
        table.add_row(o.scenario.id, o.scenario.source, str(o.steps), str(o.checks), result)
    console.print(table)
    failed = sum(not o.passed for o in outcomes)
    console.print(f"{len(outcomes) - failed} passed, {failed} failed")
    if failed or not outcomes:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(corpus_app, name="corpus")
