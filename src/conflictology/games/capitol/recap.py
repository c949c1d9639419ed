"""The story of a finished Capitol game, for the recap cards at its end (docs/web.md, "The recap").

Read from the archived game once it is over, every card face up by then: the hands revealed (the
winner's first), the decisive moment, the biggest money swing and each player's bluffs and
challenges. Nothing here is ever computed for a game still being played.

The decisive moment needs each step's chances of winning, which the game does not judge: the caller
passes a ``chance`` (the bots' position value, ``bots.capitol_value.win_shares``). Without one the
recap has no decisive moment.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from conflictology.engine import Action
from conflictology.games.capitol.replay import claim_marks
from conflictology.games.capitol.state import CapitolState
from conflictology.games.capitol.views import render_view

Chance = Callable[[CapitolState], list[float]]


def _leading(shares: list[float], winners: list[int]) -> bool:
    """The winners' best chance is above every other player's."""
    best = max(shares[w] for w in winners)
    return all(shares[i] < best for i in range(len(shares)) if i not in winners)


def recap(
    state: CapitolState, actions: Iterable[tuple[int, Action]], chance: Chance | None = None
) -> dict[str, Any]:
    """``state``, the deal, is played through ``actions`` (seat, action) to the end (it is changed).

    - ``reveal``: every seat's cards, ``hidden`` (still face down) and ``revealed`` (lost), the
      winners first, then the others from the last one out to the first;
    - ``decisive``: the step (the k-th action) after which the winners led for good, the winners'
      best chance of winning reading above everyone else's from then to the end and not just before;
      where they led from the deal, the step that raised their chance most. With the seat that made
      it, its log entries (``log``: ``[from, to)``, and ``entries``, as the table's log says them) and
      the winners' chance before and after, in percent;
    - ``chances``: the winners' best chance after each step (step 0: the deal), in percent;
    - ``swing``: the action that moved one player's money most (the first of equals), its seat, the
      amount (+ gained, − lost), who acted (``by``) and its log entries (as the decisive's); None
      when no money moved;
    - ``per_seat``: per seat, claims made, bluffs told and caught, challenges made, won and lost.
    """
    steps: list[tuple[int, Action, int, int]] = []  # seat, action, log from, log to
    shares = [chance(state)] if chance is not None else []
    swing: dict[str, Any] | None = None
    out_order: list[int] = []
    for seat, action in actions:
        before, logged = list(state.money), len(state.log)
        alive = list(state.alive)
        state.apply(seat, action)
        steps.append((seat, action, logged, len(state.log)))
        for i, (was, now) in enumerate(zip(before, state.money, strict=True)):
            if now != was and (swing is None or abs(now - was) > abs(swing["amount"])):
                swing = {"step": len(steps), "seat": i, "amount": now - was, "by": seat,
                         "log": [logged, len(state.log)]}  # fmt: skip
        out_order += [i for i in range(state.n) if alive[i] and not state.alive[i]]
        if chance is not None:
            shares.append(chance(state))
    if not state.is_over():
        raise ValueError("a recap is of a finished game")
    winners = state.winners()
    losers = [i for i in reversed(out_order) if i not in winners]
    losers += [i for i in range(state.n) if i not in winners and i not in losers]
    reveal = [{"seat": i, "hidden": list(state.hidden[i]), "revealed": list(state.revealed[i])}
              for i in [*winners, *losers]]  # fmt: skip
    log = render_view(state, None)["log"]
    if swing is not None:
        swing["entries"] = log[swing["log"][0] : swing["log"][1]]
    counted = ("claims", "bluffs", "bluffs_caught", "challenges", "challenges_won", "challenges_lost")
    players = [dict.fromkeys(counted, 0) for _ in range(state.n)]
    for claim in claim_marks(log, state.honesty, state.n):
        mine = players[claim["seat"]]
        mine["claims"] += 1
        mine["bluffs"] += not claim["honest"]
        mine["bluffs_caught"] += claim["caught"]
        if claim["challenged"]:
            theirs = players[claim["challenger"]]
            theirs["challenges"] += 1
            theirs["challenges_won" if claim["won"] else "challenges_lost"] += 1
    story: dict[str, Any] = {
        "winners": winners,
        "steps": len(steps),
        "reveal": reveal,
        "swing": swing,
        "per_seat": players,
        "decisive": None,
        "chances": [],
    }
    if chance is not None and winners and steps:
        best = [max(s[w] for w in winners) for s in shares]
        story["chances"] = [round(100 * b) for b in best]
        lead = [_leading(s, winners) for s in shares]
        k = len(lead)
        while k > 0 and lead[k - 1]:
            k -= 1
        k = min(k, len(lead) - 1)  # a tie at the turn limit: nobody leads at the end
        if k == 0:  # led from the deal: the step that raised their chance most
            k = max(range(1, len(best)), key=lambda j: (best[j] - best[j - 1], -j))
        seat, action, start, end = steps[k - 1]
        story["decisive"] = {
            "step": k,
            "seat": seat,
            "action": dict(action),
            "log": [start, end],
            "before": round(100 * best[k - 1]),
            "after": round(100 * best[k]),
            "entries": log[start:end],
        }
    return story
