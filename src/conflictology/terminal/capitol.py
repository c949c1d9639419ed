"""Capitol in the terminal: the table from one seat's view and the legal choices in a player's words."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from conflictology.engine import Action, View
from conflictology.games.capitol import data
from conflictology.terminal.render import Names, generic_label, group, register, seat_name

ROLE = data.ROLE_NAME


def role(card: Any) -> str:
    return ROLE.get(str(card), str(card))


def roles(cards: list[Any]) -> str:
    return ", ".join(role(c) for c in cards) if cards else "—"


# Below this many columns the seats are drawn compact: the five boxed columns cut roles and names
# short at 40 columns ("Polic…", "bluff…"), a ten-seat table's worst case (issue 29).
WIDE = 64


class _Seats:
    """The seats, boxed in five columns on a wide terminal, compact on a narrow one (a phone's
    terminal, a split pane): chosen by the width the console gives it, so both stay legible."""

    def __init__(self, view: View, names: Names) -> None:
        self.view, self.names = view, names

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.wide() if options.max_width >= WIDE else self.compact()

    def rows(self) -> list[tuple[str, Text, str, Text, Text]]:
        view, out = self.view, []
        you, turn = view.get("you"), view.get("turn")
        for p in view.get("players", []):
            seat = p.get("seat")
            hidden = p.get("hidden")
            if isinstance(hidden, list):
                down = Text(roles(hidden), style="bold green")
            else:
                down = Text("▮ " * int(hidden or 0) if hidden else "—", style="dim")
                if hidden:
                    down.append(f"({hidden})", style="dim")
            mark = "▶" if seat == turn and not view.get("winners") else ""
            name = seat_name(self.names, seat)
            style = "bold" if seat == you else ""
            if not p.get("alive", True):
                name += " (out)"
                style = "dim strike"
            out.append(
                (
                    mark,
                    Text(name, style=style),
                    f"${p.get('money')}M",
                    down,
                    Text(roles(p.get("revealed", []))),
                )
            )
        return out

    def wide(self) -> Table:
        grid = Table(title=None, expand=False)
        for col in ("", "player", "money", "face down", "face up (lost)"):
            grid.add_column(col)
        for row in self.rows():
            grid.add_row(*row)
        return grid

    def compact(self) -> Table:
        """No box and one column of cards (face down, then the lost ones): each word whole, a long
        name or hand wrapping inside its own column."""
        grid = Table(box=None, padding=(0, 1), pad_edge=False, expand=False)
        grid.add_column("", no_wrap=True)
        grid.add_column("player", ratio=3)
        grid.add_column("$", no_wrap=True, justify="right")
        grid.add_column("cards (lost)", ratio=4)
        for mark, name, money, down, lost in self.rows():
            cards = down.copy()
            if lost.plain != "—":
                cards.append(" · lost ", style="dim")
                cards.append(lost)
            grid.add_row(mark, name, money, cards)
        return grid


class _Head:
    """The Treasury, the deck and whose turn: one line when it fits, else a line each."""

    def __init__(self, view: View, names: Names) -> None:
        self.view, self.names = view, names

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        view = self.view
        parts = [
            Text(f"Treasury ${view.get('treasury')}M", style="bold"),
            Text(f"deck {view.get('deck')} cards"),
        ]
        turn = view.get("turn")
        if view.get("winners"):
            parts.append(Text("game over", style="bold") + Text(_stalemate_note(view, self.names)))
        elif isinstance(turn, int):
            parts.append(Text(f"turn: {seat_name(self.names, turn)}"))
        line = Text("   ").join(parts)
        if line.cell_len <= options.max_width:
            yield line
        else:
            yield from parts


def table(view: View, names: Names) -> RenderableType:
    head, grid = _Head(view, names), _Seats(view, names)
    extra: list[RenderableType] = []
    for k in view.get("known") or []:
        who, card = seat_name(names, k.get("seat")), role(k.get("card"))
        extra.append(Text(f"You know {who} holds {card} (Police).", style="cyan"))
    pending = view.get("pending") or {}
    if pending.get("phase") == "exchange" and "drawn" in pending:
        extra.append(
            Text(
                f"Exchange: your hand {roles(pending.get('hand', []))}; drawn {roles(pending['drawn'])}; "
                f"keep {pending.get('keep')}.",
                style="cyan",
            )
        )
    if view.get("summary"):
        extra.append(claims_summary(view, names))
    return group(head, grid, *extra)


def claims_summary(view: View, names: Names) -> RenderableType:
    """The end of the game: each player's claims in order, ✓ held the role or ✗ a bluff (views.py);
    boxed on a wide terminal, box-less on a narrow one (every word whole at 40 columns)."""
    return _ByWidth(lambda: _claims(view, names, wide=True), lambda: _claims(view, names, wide=False))


class _ByWidth:
    """One of two renderings, by the width the console gives: boxed at WIDE columns or more."""

    def __init__(self, wide: Callable[[], RenderableType], narrow: Callable[[], RenderableType]) -> None:
        self.wide, self.narrow = wide, narrow

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.wide() if options.max_width >= WIDE else self.narrow()


def _claims(view: View, names: Names, wide: bool) -> Table:
    summary = view["summary"]
    title = "Claims and bluffs (✓ held the role, ✗ bluff, ⚑ challenged)"
    grid = (
        Table(title=title, title_justify="left")
        if wide
        else Table(title=title, title_justify="left", box=None, padding=(0, 1), pad_edge=False)
    )
    for col in ("player", "claims, in order", "bluffs", "caught"):
        grid.add_column(col, justify="left" if col in ("player", "claims, in order") else "right")
    bluffs, caught = summary.get("bluffs", []), summary.get("caught", [])
    for p in view.get("players", []):
        seat = p.get("seat")
        line = Text()
        for claim in (c for c in summary.get("claims", []) if c.get("seat") == seat):
            if line:
                line.append("  " if wide else "\n")  # narrow: a claim a line
            style = "green" if claim.get("honest") else "bold red" if claim.get("caught") else "yellow"
            line.append(("✓ " if claim.get("honest") else "✗ ") + role(claim.get("role")), style=style)
            if claim.get("block"):
                line.append(" (block)", style="dim")
            if claim.get("caught"):
                line.append(f" caught by {seat_name(names, claim.get('challenger'))}", style=style)
            elif claim.get("challenged"):
                line.append(f" ⚑ {seat_name(names, claim.get('challenger'))}", style="dim")
        grid.add_row(
            seat_name(names, seat),
            line if line else Text("no claims", style="dim"),
            str(bluffs[seat] if isinstance(seat, int) and seat < len(bluffs) else 0),
            str(caught[seat] if isinstance(seat, int) and seat < len(caught) else 0),
        )
    return grid


def _claim_note(view: View, claimed: str) -> str:
    """Whether the player holds the role they are about to claim (a bluff reminder)."""
    you = view.get("you")
    players = view.get("players", [])
    if not isinstance(you, int) or you >= len(players):
        return ""
    hidden = players[you].get("hidden")
    if not isinstance(hidden, list):
        return ""
    return "" if claimed in hidden else "  [bluff: you hold no " + role(claimed) + "]"


def label(action: Action, view: View, names: Names) -> str:
    kind = action.get("type")
    target = action.get("target")
    who = seat_name(names, target)
    pending = view.get("pending") or {}
    phase = pending.get("phase") or view.get("phase")
    if kind == "income":
        return f"Income: take ${data.INCOME}M (no claim, cannot be stopped)"
    if kind == "foreign_aid":
        return f"Foreign Aid: take ${data.FOREIGN_AID}M (a Banker may block)"
    if kind == "scandal":
        return f"Scandal against {who}: pay ${data.COST['scandal']}M, they lose an influence"
    if kind == "banker":
        return f"Banker: take ${data.BANKER_TAKE}M" + _claim_note(view, "banker")
    if kind == "mafia":
        return f"Mafia: steal up to ${data.MAFIA_STEAL}M from {who}" + _claim_note(view, "mafia")
    if kind == "hacker":
        return f"Hacker: pay ${data.COST['hacker']}M, {who} loses an influence" + _claim_note(view, "hacker")
    if kind == "reporter":
        return f"Reporter: draw {data.DRAW['reporter']} cards and exchange" + _claim_note(view, "reporter")
    if kind == "police_investigate":
        return f"Police: look at one of {who}'s face-down cards" + _claim_note(view, "police")
    if kind == "police_swap":
        return f"Police: draw {data.DRAW['police_swap']} card and swap" + _claim_note(view, "police")
    if kind == "pass":
        if phase == "block_challenge" and pending.get("actor") == view.get("you"):
            return "Accept the block"
        if phase == "block":
            return "Do not block"
        return "Pass (do not challenge)"
    if kind == "challenge":
        if phase == "block_challenge":
            blocker = seat_name(names, pending.get("blocker"))
            return f"Challenge {blocker}'s block (claimed {role(pending.get('block_claim'))})"
        actor = seat_name(names, pending.get("actor"))
        return f"Challenge {actor}'s claim of {role(pending.get('claim'))}"
    if kind == "block":
        card = str(action.get("card"))
        sealed = " (kept secret until everyone answered)" if phase == "challenge" else ""
        return f"Block, claiming {role(card)}{sealed}" + _claim_note(view, card)
    if kind == "lose":
        return f"Lose {role(action.get('card'))} (turn it face up)"
    if kind == "return":
        return f"Put {role(action.get('card'))} back into the deck and draw a new card"
    if kind == "show":
        return f"Show {role(action.get('card'))}"
    if kind == "keep":
        return "Keep " + " + ".join(role(c) for c in action.get("cards", []))
    if kind == "let_keep":
        return "Let them keep the card"
    if kind == "force_redraw":
        return "Force them to shuffle it into the deck and draw a new card"
    return generic_label(action, view, names)


def pending(view: View, names: Names) -> str:
    p = view.get("pending")
    you = view.get("you")
    if not p:
        if view.get("turn") == you:
            money = next((q.get("money") for q in view.get("players", []) if q.get("seat") == you), 0)
            forced = view.get("options", {}).get("forced_scandal", True)
            if forced and isinstance(money, int) and money >= data.FORCED_SCANDAL_AT:
                return f"Your turn. With ${money}M you must launch a Scandal (ruling 4)."
            return "Your turn: choose an action."
        return ""
    phase = p.get("phase")
    actor = seat_name(names, p.get("actor"))
    action = data.ACTION_NAME.get(str(p.get("action")), str(p.get("action")))
    target = p.get("target")
    on = f" against {seat_name(names, target)}" if isinstance(target, int) else ""
    if phase == "challenge":
        steal = view.get("options", {}).get("steal_blockers") or []
        if target == you and data.block_roles(str(p.get("action")), steal):
            # Ruling 6a: the target's one prompt; a block is not asked again.
            return (
                f"{actor} claims {role(p.get('claim'))} to play {action} against you. Challenge the "
                "claim, block it, or let it pass? You are not asked again, unless someone else's "
                "challenge fails."
            )
        return f"{actor} claims {role(p.get('claim'))}. Challenge the claim, or let it pass?"
    if phase == "block":
        return f"{actor} plays {action}{on}. Block it?"
    if phase == "block_challenge":
        blocker = seat_name(names, p.get("blocker"))
        return f"{blocker} blocks {actor}'s {action}, claiming {role(p.get('block_claim'))}."
    if phase == "lose":
        return "You lose an influence: choose the card to turn face up."
    if phase == "return":
        return "Your block stood: put a card back into the deck (you draw a new one)."
    if phase == "exchange":
        return f"Exchange: keep {p.get('keep')} of your cards."
    if phase == "show":
        return f"{actor} (Police) investigates you: choose a card to show them."
    if phase == "investigate":
        shown = p.get("shown")
        whom = seat_name(names, target)
        return f"{whom} shows you {role(shown)}: let them keep it, or force a redraw?"
    return str(phase)


register("capitol", table=table, label=label, pending=pending)


def _stalemate_note(view: View, names: Names) -> str:
    """A game the stalemate rule ended (docs/rules/capitol.md) says so, and names every winner."""
    log = view.get("log") or []
    end = log[-1] if log else None
    if not isinstance(end, dict) or end.get("type") != "stalemate":
        return ""
    winners = ", ".join(seat_name(names, w) for w in end.get("winners", []))
    why = "no influence lost" if end.get("reason") == "quiet" else "the decision cap"
    return f" by the stalemate rule ({why}): {winners}"
