"""Conspiranoicos in the terminal: the table from one seat's view and the choices in a player's words.

The opponent's hand shows only its backs (rulebook "Evidence Cards": a back may always be looked at),
a submitted play only its back until both are in, and the opponent's row only its length until both
rows are complete — exactly what the view carries.
"""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from conflictology.engine import Action, View
from conflictology.games.conspiranoicos.cards import FACTION_NAMES
from conflictology.terminal.render import Names, generic_label, group, register, seat_name


def catalogue(view: View) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in view.get("cards", [])}


def card_text(view: View, cid: Any, long: bool = False) -> str:
    """``GA4 (4 · G A · back A)``; with ``long``, the challenge text too."""
    card = catalogue(view).get(str(cid))
    if card is None:
        return str(cid)
    front = " ".join(card["front"]) if card["front"] else "no symbol"
    name = card["name"] if card.get("special") else card["id"]
    text = f"{name} ({card['value']} · {front} · back {card['back']}"
    if long:
        text += f" · challenge: {card['challenge_text']}"
    return text + ")"


def short_text(view: View, cid: Any) -> str:
    """``GA4 [A]``: the card and its back (a default-deck id already reads its symbols and value)."""
    card = catalogue(view).get(str(cid))
    if card is None:
        return str(cid)
    name = f"{card['name']} ({card['value']})" if card.get("special") else card["id"]
    return f"{name} [{card['back']}]"


def cards_text(view: View, ids: Any, long: bool = False) -> str:
    if isinstance(ids, int):
        return f"{ids} card(s), face down" if ids else "—"
    if not ids:
        return "—"
    if long:
        return "\n".join(card_text(view, c) for c in ids)
    return ", ".join(short_text(view, c) for c in ids)


def backs_text(backs: list[Any]) -> str:
    return " ".join(f"[{b}]" for b in backs) if backs else "—"


def _slot(view: View, item: dict[str, Any] | None) -> str:
    if item is None:
        return "(empty)"
    back = f"[{item['back']}]"
    if item.get("face_up"):
        return f"{back} face up: {card_text(view, item['card'])}"
    if item.get("card"):  # the Abduction holder looking at the bottom row
        return f"{back} face down: {card_text(view, item['card'])} (you are looking)"
    seen = f" (it was {item['seen']})" if item.get("seen") else ""
    return f"{back} face down{seen}"


def table(view: View, names: Names) -> RenderableType:
    you = view.get("you")
    head = Text()
    rnd = view.get("round")
    head.append(f"Round {rnd} of 6" if view.get("phase") in ("play", "send", "keep") else "Sort Evidence"
                if view.get("phase") in ("abduct", "gnome", "build") else "Scoring", style="bold")
    challenge = view.get("challenge")
    if challenge:
        head.append(f"   challenge: {card_text(view, challenge, long=True)}")
    elif view.get("phase") == "play" and rnd == 6:
        head.append("   the Final Challenge (face down: closest to its value wins)")
    final = view.get("final_challenge")
    if final:
        head.append(f"   Final Challenge: {card_text(view, final)}")
    head.append(f"   challenge deck {view.get('challenge_deck', 0)}")

    pyramid = view.get("pyramid", [])
    pyr = Table(title="Pyramid", title_justify="left", show_header=False, expand=False)
    pyr.add_column("row")
    pyr.add_column("slots")
    rows = [("top", [5]), ("middle", [3, 4]), ("bottom", [0, 1, 2])]
    for label, slots in rows:
        cells = [f"{k + 1}: {_slot(view, pyramid[k] if k < len(pyramid) else None)}" for k in slots]
        pyr.add_row(label, "\n".join(cells))
    symbols = view.get("pyramid_symbols")
    sym = None
    if symbols:
        t = "-".join(symbols.get("T") or [])
        s = symbols.get("S")
        sym = Text(f"Pyramid symbols: T = {t}   S = {s} ({FACTION_NAMES.get(str(s), s)})", style="cyan")

    grid = Table(expand=False)
    for col in ("player", "hand", "zone", "draw", "row"):
        grid.add_column(col)
    for p in view.get("players", []):
        seat = p.get("seat")
        mine = seat == you
        if isinstance(p["hand"], int):  # another's hand while rows are built: only a count
            hand = f"{p['hand']} held" if p["hand"] else "—"
        else:
            hand = cards_text(view, p["hand"], long=True) if mine else backs_text(p["hand"])
        row = p.get("row")
        grid.add_row(
            Text(seat_name(names, seat), style="bold" if mine else ""),
            hand,
            cards_text(view, p.get("zone")),
            str(p.get("draw")),
            cards_text(view, row) if isinstance(row, list) else (f"{row} placed" if row else "—"),
        )
    plays = (view.get("table") or {}).get("plays") or [None, None]
    play_line = None
    if any(p is not None for p in plays):
        parts = []
        for seat, p in enumerate(plays):
            if p is None:
                shown = "not yet"
            elif len(str(p)) == 1:  # a back symbol: the play is still hidden
                shown = f"a card, back [{p}]"
            else:
                shown = card_text(view, p)
            parts.append(f"{seat_name(names, seat)}: {shown}")
        play_line = Text("Plays: " + "; ".join(parts))
    extra: list[RenderableType | None] = [play_line]
    if view.get("gained"):
        extra.append(Text("Gained by a swap (no effect): " + cards_text(view, view["gained"]), style="dim"))
    if view.get("scores"):
        extra.append(scores(view, names))
    return group(head, pyr, sym, grid, *extra)


def scores(view: View, names: Names) -> RenderableType:
    detail = view.get("score_detail") or {}
    grid = Table(title="Scoring", title_justify="left")
    grid.add_column("criterion")
    for seat in range(len(view.get("players", []))):
        grid.add_column(seat_name(names, seat))
    for c in detail.get("criteria", []):
        cells = []
        for seat, points in enumerate(c.get("points", [])):
            why = (c.get("why") or [""] * 2)[seat]
            cells.append(f"{points}" + (f"  {why}" if why else ""))
        grid.add_row(str(c.get("title", c.get("criterion"))), *cells)
    grid.add_row("total", *[str(s) for s in view.get("scores", [])], style="bold")
    return grid


def label(action: Action, view: View, names: Names) -> str:
    kind = action.get("type")
    card = action.get("card")
    if kind == "play":
        return f"Play {card_text(view, card, long=True)}"
    if kind == "send":
        where = "the Pyramid (face down)" if action.get("to") == "pyramid" else "your scoring zone"
        return f"Take {card_text(view, card)} → {where}"
    if kind == "keep":
        return f"Keep {card_text(view, card)} in your scoring zone"
    if kind == "abduct":
        slot = action.get("slot")
        return f"Abduction: swap it for the face-down card in slot {slot} ({_slot_card(view, slot)})"
    if kind == "reveal_gnome":
        slot = action.get("slot")
        return f"Gnome Revelation: swap it with slot {slot} ({_slot_card(view, slot)}); it counts as G"
    if kind == "pass":
        phase = view.get("phase")
        special = {"abduct": "the Abduction", "gnome": "the Gnome Revelation"}.get(str(phase), "it")
        return f"Pass: keep {special} in your hand"
    if kind == "place":
        return f"Place {card_text(view, card)} next in your row"
    return generic_label(action, view, names)


def _slot_card(view: View, slot: Any) -> str:
    pyramid = view.get("pyramid", [])
    if isinstance(slot, int) and 1 <= slot <= len(pyramid) and pyramid[slot - 1]:
        item = pyramid[slot - 1]
        return str(item.get("card") or item.get("seen") or f"back {item['back']}")
    return "empty"


def pending(view: View, names: Names) -> str:
    p = view.get("pending") or {}
    phase = p.get("phase")
    you = view.get("you")
    if phase == "play":
        if p.get("final_challenge"):
            return "Final Challenge: play a card; the closer to the face-down card's value wins."
        return f"Round {view.get('round')}: play a card from your hand."
    if phase == "send":
        how = (view.get("table") or {}).get("decided_by")
        return (
            f"You win the round ({how}): take one of the three cards and send it to the Pyramid or to "
            "your scoring zone; the last card goes where you did not send yours."
        )
    if phase == "keep":
        return "You lose the round: keep one of the remaining cards in your scoring zone."
    if phase == "abduct":
        return "You hold the Abduction: you may swap it for a face-down card of the bottom row."
    if phase == "gnome":
        return "You hold the Gnome Revelation: you may swap it with a face-up Pyramid card."
    if phase == "build":
        placed = (p.get("placed") or [0, 0])[you] if isinstance(you, int) else 0
        return f"Build your row, left to right: card {placed + 1} of 6."
    return ""


register("conspiranoicos", table=table, label=label, pending=pending)
