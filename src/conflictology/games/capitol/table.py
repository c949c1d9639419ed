"""Capitol's action table: every action a table can ever produce, numbered once (``engine.ActionTable``).

Up to six seats (the rulebook) the table has 83 actions; a big table (seven to ten) numbers the same
83 first and appends the targets of seats 6-9, so an action keeps its index whatever the table size.
"""

from __future__ import annotations

import functools
from itertools import combinations_with_replacement

from conflictology.engine import Action, ActionTable
from conflictology.games.capitol import data


def _canonical(action: Action) -> Action:
    cards = action.get("cards")
    if isinstance(cards, list):
        return {**action, "cards": sorted(cards)}
    return action


def _all_actions(max_players: int) -> list[Action]:
    """Every action a Capitol table of up to ``max_players`` seats can ever produce."""
    seats = range(max_players)
    out: list[Action] = []
    for kind in data.TURN_ACTIONS:
        if kind in data.TARGETED:
            out += [{"type": kind, "target": t} for t in seats]
        else:
            out.append({"type": kind})
    out += [{"type": "pass"}, {"type": "challenge"}]
    out += [{"type": "block", "card": r} for r in data.BLOCKING_ROLES]
    for kind in ("lose", "return", "show"):
        out += [{"type": kind, "card": r} for r in data.ROLES]
    # An exchange keeps as many cards as the hand held: one or two (never more than HAND_SIZE).
    for size in range(1, data.HAND_SIZE + 1):
        kept = combinations_with_replacement(sorted(data.ROLES), size)
        out += [{"type": "keep", "cards": list(c)} for c in kept]
    out += [{"type": "let_keep"}, {"type": "force_redraw"}]
    return out


def _big_table_actions() -> list[Action]:
    """The actions of a table of seven to ten: the rulebook's six-seat table, then the targets of the
    seats past six appended, so that every action keeps the index it has at 2-6 seats (an agent or a
    playthrough of a small table reads the same numbers) and the new seats only add indices."""
    out = _all_actions(data.RULEBOOK_MAX_PLAYERS)
    for kind in data.TURN_ACTIONS:
        if kind in data.TARGETED:
            out += [{"type": kind, "target": t} for t in range(data.RULEBOOK_MAX_PLAYERS, data.MAX_PLAYERS)]
    return out


def table_for(players: int) -> ActionTable:
    """The action table of a table of ``players``: 83 actions up to six seats, 99 at seven to ten."""
    return _table(players > data.RULEBOOK_MAX_PLAYERS)


@functools.cache
def _table(big: bool) -> ActionTable:
    actions = _big_table_actions() if big else _all_actions(data.RULEBOOK_MAX_PLAYERS)
    return ActionTable(actions, canonical=_canonical)
