"""A finished Capitol game seen whole: every card face up at any step, each claim marked true or
bluff and each challenge won or lost, and the figures a standing table adds up.

Nothing here is ever sent while a game goes on (the server serves replays of finished games only):
the marks come from the state's private record of claims (``honesty``, one bit per claim, written
as the claim is made) read against the public log, exactly as the end-of-game ``summary`` does.
"""

from __future__ import annotations

from typing import Any

from conflictology.engine import View
from conflictology.games.capitol.data import CLAIM
from conflictology.games.capitol.state import CapitolState
from conflictology.games.capitol.views import pending_of, render_view, summary


def claim_marks(log: list[dict[str, Any]], honesty: int, n: int) -> list[dict[str, Any]]:
    """The claims made so far (the summary's, in log order), each with ``at`` (the index of its log
    entry), ``honest``, ``challenger`` and, when challenged, ``challenge_at`` and ``won`` (whether the
    challenger won: the claim was a bluff)."""
    claims: list[dict[str, Any]] = summary(log, honesty, n)["claims"]
    places: list[dict[str, Any]] = []
    for i, e in enumerate(log):
        kind = e["type"]
        if (kind == "action" and CLAIM.get(e["action"]) is not None) or kind == "block":
            places.append({"at": i})
        elif kind == "challenge":
            places[-1]["challenge_at"] = i  # a challenge is always of the latest claim
    for claim, place in zip(claims, places, strict=True):
        claim.update(place)
        if claim["challenged"]:
            claim["won"] = not claim["honest"]
    return claims


def open_view(state: CapitolState) -> View:
    """The spectator's view with every hand, the draw pile (top first) and whatever is being chosen
    in secret (an exchange's drawn cards, a card shown to the Police) face up, and the claims marked."""
    view = render_view(state, None)
    for i, player in enumerate(view["players"]):
        player["hidden"] = list(state.hidden[i])
    view["deck_cards"] = list(state.deck)
    if view["pending"] is not None:
        # The actor's pending carries the exchange's hand and drawn cards, the investigation's shown card.
        view["pending"] = pending_of(state, state.actor)
    view["claims"] = claim_marks(view["log"], state.honesty, state.n)
    return view


def step_view(state: CapitolState) -> tuple[View, int]:
    """A replay's step (``Game.replay_step``): :func:`open_view` without the log and the claims,
    which the replay sends once for the whole game (each claim says at which log entry it was made),
    and the log's length. A step costs the same at the end of a long game as at its start."""
    view = render_view(state, None, with_log=False)
    for i, player in enumerate(view["players"]):
        player["hidden"] = list(state.hidden[i])
    view["deck_cards"] = list(state.deck)
    if view["pending"] is not None:
        view["pending"] = pending_of(state, state.actor)
    return view, len(state.log)


def eliminations(log: list[dict[str, Any]], n: int) -> list[int]:
    """Per seat, the players it knocked out: whoever won the challenge that cost the last influence,
    else the actor whose Scandal or hack took it."""
    out = [0] * n
    actor = -1
    last = (-1, -1)  # the latest challenge: (challenger, challenged)
    owed: tuple[int, int] | None = None  # (the seat that lost a challenge, the seat that won it)
    credit: dict[int, int] = {}
    for e in log:
        kind = e["type"]
        if kind == "action":
            actor, owed = e["seat"], None
        elif kind == "challenge":
            owed = None
            last = (e["seat"], e["challenged"])
        elif kind == "reveal":  # the claim was true: the challenger pays
            owed = last
        elif kind == "bluff":  # caught: the claimant pays
            owed = (last[1], last[0])
        elif kind == "lose":
            seat = e["seat"]
            if owed is not None and owed[0] == seat:
                credit[seat] = owed[1]
                owed = None
            elif actor >= 0 and seat != actor:
                credit[seat] = actor
            else:
                credit.pop(seat, None)
        elif kind == "eliminated":
            by = credit.get(e["seat"])
            if by is not None:
                out[by] += 1
    return out


def figures(state: CapitolState) -> list[dict[str, int]]:
    """Per seat: ``bluffs`` made, ``bluffs_caught`` (of those), ``challenges_won`` (challenges that
    caught a bluff) and ``eliminations`` (players knocked out)."""
    log = render_view(state, None)["log"]
    marks = summary(log, state.honesty, state.n)
    won = [0] * state.n
    for claim in marks["claims"]:
        if claim["caught"]:
            won[claim["challenger"]] += 1
    knocked = eliminations(log, state.n)
    return [
        {
            "bluffs": marks["bluffs"][i],
            "bluffs_caught": marks["caught"][i],
            "challenges_won": won[i],
            "eliminations": knocked[i],
        }
        for i in range(state.n)
    ]
