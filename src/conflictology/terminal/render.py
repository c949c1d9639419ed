"""Rich renderings of one seat's view: the table, the log and the labels of the legal choices.

Everything here reads a *view* dict (``state.view(seat)``), never a state, so the terminal can only
show what its seat may know. Games get their own table and action labels; an unknown game falls back
to a plain listing of its view.
"""

from __future__ import annotations

import importlib
import io
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from conflictology.engine import Action, View

Names = Sequence[str]


def seat_name(names: Names, seat: Any) -> str:
    if isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < len(names):
        return names[seat]
    return f"seat {seat}"


# -- game-specific renderers, registered by game name ------------------------------------------------

TableRenderer = Callable[[View, Names], RenderableType]
ActionLabeler = Callable[[Action, View, Names], str]
PendingDescriber = Callable[[View, Names], str]

_TABLES: dict[str, TableRenderer] = {}
_LABELS: dict[str, ActionLabeler] = {}
_PENDING: dict[str, PendingDescriber] = {}


def register(
    game: str,
    table: TableRenderer | None = None,
    label: ActionLabeler | None = None,
    pending: PendingDescriber | None = None,
) -> None:
    if table is not None:
        _TABLES[game] = table
    if label is not None:
        _LABELS[game] = label
    if pending is not None:
        _PENDING[game] = pending


_BUILTIN = {
    "capitol": "conflictology.terminal.capitol",
    "conspiranoicos": "conflictology.terminal.conspiranoicos",
}


def _load_builtin(game: Any) -> None:
    # The built-in games' renderers register themselves when their module is first imported.
    module = _BUILTIN.get(str(game))
    if module is not None:
        importlib.import_module(module)


def render_table(view: View, names: Names) -> RenderableType:
    """The table as this seat sees it (its own hidden cards face up, everyone else's face down)."""
    _load_builtin(view.get("game"))
    renderer = _TABLES.get(str(view.get("game")), _generic_table)
    return renderer(view, names)


def label_action(action: Action, view: View, names: Names) -> str:
    """A player's words for one legal action."""
    _load_builtin(view.get("game"))
    labeler = _LABELS.get(str(view.get("game")), generic_label)
    return labeler(action, view, names)


def describe_pending(view: View, names: Names) -> str:
    """What is being decided now, in words ("" when the game has nothing to say)."""
    _load_builtin(view.get("game"))
    describer = _PENDING.get(str(view.get("game")))
    return describer(view, names) if describer is not None else ""


def log_line(entry: Any, names: Names) -> str:
    """One public log entry in words: its ``text`` when the engine wrote one."""
    if isinstance(entry, Mapping):
        text = entry.get("text")
        if isinstance(text, str) and text:
            return text
        fields = ", ".join(f"{k}={v}" for k, v in entry.items() if k != "type")
        return f"{entry.get('type', 'event')}: {fields}" if fields else str(entry.get("type", "event"))
    return str(entry)


def render_log(entries: Sequence[Any], names: Names) -> RenderableType:
    text = Text()
    for i, entry in enumerate(entries):
        if i:
            text.append("\n")
        text.append("• ", style="dim")
        text.append(log_line(entry, names))
    return text


def render_text(view: View, names: Names, width: int = 100) -> str:
    """The table and the whole log as plain text (for logs, tests and ``render_mode="ansi"``)."""
    console = Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False)
    console.print(render_table(view, names))
    log = view.get("log") or []
    if log:
        console.print(Panel(render_log(log, names), title="log"))
    out = console.file
    assert isinstance(out, io.StringIO)
    return out.getvalue()


# -- fallbacks ---------------------------------------------------------------------------------------


def generic_label(action: Action, view: View, names: Names) -> str:
    kind = str(action.get("type", "?")).replace("_", " ")
    parts = []
    for key, value in action.items():
        if key == "type":
            continue
        if key in ("target", "to") and isinstance(value, int):
            parts.append(f"{key} {seat_name(names, value)}")
        elif isinstance(value, list):
            parts.append(f"{key} {', '.join(map(str, value))}")
        else:
            parts.append(f"{key} {value}")
    return kind + (": " + "; ".join(parts) if parts else "")


def _generic_table(view: View, names: Names) -> RenderableType:
    shown = {k: v for k, v in view.items() if k != "log"}
    return Panel(Text(json.dumps(shown, indent=1)), title=escape(str(view.get("game", "game"))))


def players_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> Table:
    table = Table(title=title, title_justify="left", expand=False)
    for col in columns:
        table.add_column(col)
    for row in rows:
        table.add_row(*row)
    return table


def group(*items: RenderableType | None) -> RenderableType:
    return Group(*[i for i in items if i is not None])
