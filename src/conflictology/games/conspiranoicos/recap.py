"""The story of a finished Conspiranoicos game, for the recap cards at its end (docs/web.md, "The
recap"): the rows revealed (the winner's first), each round's outcome, the round that decided it,
the criteria each player won and the Final Challenge. Read from the archived game once it is over;
never computed for a game still being played.

"The round that decided it" is read from the evidence as it stood after each round: each player's
scoring zone then, laid out in the order of their final row (the cards they later swapped away at
its end), scored against the final Pyramid with the game's own scoring. The decisive round is the
first after which the winner's evidence outscored the other's to the end; where that happens only
in Sort Evidence (a swap, the layout) or at a tie-break, it says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from conflictology.engine import Action

from . import rules
from .pyramid import compute_score
from .state import COLLECT, ROUNDS, State


def _score_as_of(final: State, zones: list[list[int]], final_winner: int) -> list[int]:
    """Both players' points had their rows been ``zones``, in their final rows' order."""
    what_if = final.clone()
    rows: list[list[int]] = []
    for p in (0, 1):
        kept = [c for c in final.rows[p] if c in zones[p]]
        rows.append(kept + [c for c in zones[p] if c not in kept])
    what_if.rows = rows
    what_if.final_winner = final_winner
    return list(compute_score(what_if).totals)


def recap(state: State, actions: Iterable[tuple[int, Action]]) -> dict[str, Any]:
    """``state``, the deal, is played through ``actions`` (seat, action) to the end (it is changed).

    - ``reveal``: each player's final row (card ids), the winners first;
    - ``rounds``: per round, its challenge card, both plays, the round's winner (-1: a random
      placement), how it was decided, and ``score``, both players' points as their evidence stood
      after it (see the module docstring);
    - ``decisive``: ``{"round": r}`` (1–6), ``{"round": None, "at": "sort"}`` where the winner
      pulled ahead only in Sort Evidence, ``{"round": None, "at": <tie-break>}`` where the points
      were level; None for a shared win;
    - ``criteria``: per criterion (the game's order), both players' points; ``totals``,
      ``decided_by``;
    - ``final_challenge``: its card, both plays, and who won it (-1: nobody).
    """
    ids = state.deck.ids
    zones_after: list[list[list[int]]] = []
    rounds: list[dict[str, Any]] = []
    at_round = state.round
    for seat, action in actions:
        rules.apply(state, seat, action)
        if state.round != at_round or (state.phase not in COLLECT and len(zones_after) < ROUNDS):
            # The round just ended: its zones (after the last, Sort Evidence holds them in hand).
            held = state.zones if state.phase in COLLECT else state.hands
            zones_after.append([list(held[0]), list(held[1])])
            at_round = state.round
    if state.result is None:
        raise ValueError("a recap is of a finished game")
    for e in state.log:
        if e["type"] == "reveal":
            rounds.append({"round": e["round"], "challenge": e["challenge"], "plays": list(e["plays"]),
                           "winner": -1, "by": "random"})  # fmt: skip
        elif e["type"] == "round_winner":
            rounds[-1]["winner"], rounds[-1]["by"] = e["seat"], e["by"]
    result = state.result
    for r, zones in zip(rounds, zones_after, strict=False):
        r["score"] = _score_as_of(state, zones, state.final_winner if r["round"] == ROUNDS else -1)
    winners = list(result.winners)
    order = [*winners, *(p for p in (0, 1) if p not in winners)]
    criteria = result.detail()["criteria"]
    story: dict[str, Any] = {
        "winners": winners,
        "reveal": [{"seat": p, "row": [ids[c] for c in state.rows[p]]} for p in order],
        "rounds": rounds,
        "criteria": [{"criterion": c["criterion"], "points": list(c["points"])} for c in criteria],
        "totals": list(result.totals),
        "decided_by": result.decided_by,
        "final_challenge": {
            "card": ids[state.final],
            "plays": rounds[-1]["plays"] if rounds and rounds[-1]["round"] == ROUNDS else [],
            "winner": state.final_winner,
        },
        "decisive": None,
    }
    if len(winners) == 1:
        w = winners[0]
        totals = [r["score"] for r in rounds] + [list(result.totals)]
        ahead = [t[w] > t[1 - w] for t in totals]
        k = len(ahead)
        while k > 0 and ahead[k - 1]:
            k -= 1
        if k < len(rounds):
            story["decisive"] = {"round": rounds[k]["round"]}
        elif ahead[-1]:
            story["decisive"] = {"round": None, "at": "sort"}
        else:
            story["decisive"] = {"round": None, "at": result.decided_by}
    return story
