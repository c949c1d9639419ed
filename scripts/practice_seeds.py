"""Find the practice rooms' deals (server/practice.py DEAL_SEEDS): a seed whose game, played the way
tests/web/test_coach.py plays it (tests/browser_helpers.capitol_step, conspiranoicos_step) against
the practice bot, brings up every lesson of the coach (js/coach.js LESSONS), soonest first.

    .venv/bin/python scripts/practice_seeds.py [capitol|conspiranoicos] [how many seeds to try]

It plays as the server does: the deal from the seed, each bot decision seeded by the state's
number and the seat (practice.bot_seed), the seats as Learn to play fills them (js/app.js: the
player in seat 0, one bot). Where both seats are awaited at once (a Conspiranoicos round's plays,
the rows), the bot goes first, as in the test, which waits for the bot's card before playing its
own: the bot's seed is the state's number, so the same game needs the same order.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from conflictology import bots, games
from conflictology.server import practice

BOT_LEVEL = "easy"
Choice = Callable[[dict[str, Any], list[dict[str, Any]], int], tuple[dict[str, Any], int]]
Arisen = Callable[[dict[str, Any], list[dict[str, Any]]], set[str]]

# ---- Capitol ----------------------------------------------------------------------------------------

ROTATION = ("reporter", "police_investigate", "hacker", "police_swap", "mafia", "banker")
CAPITOL_LESSONS = ("income", "claim", "challenge", "block", "lose", "hacker", "police", "reporter", "scandal")


def capitol_human(
    view: dict[str, Any], legal: list[dict[str, Any]], turns: int
) -> tuple[dict[str, Any], int]:
    """capitol_step's choice, in engine terms: the first enabled card in hand order, the first cards
    to keep, always force a redraw, always pass, and on a turn Scandal, the rotation, else Income."""
    types = {a["type"] for a in legal}
    hidden = view["players"][view["you"]]["hidden"]
    for kind in ("lose", "return", "show"):
        if kind in types:
            card = next(r for r in hidden if any(a["type"] == kind and a["card"] == r for a in legal))
            return {"type": kind, "card": card}, turns
    if "keep" in types:
        n = len(next(a for a in legal if a["type"] == "keep")["cards"])
        want = sorted(hidden[:n])
        return next(a for a in legal if a["type"] == "keep" and sorted(a["cards"]) == want), turns
    if "force_redraw" in types:
        return next(a for a in legal if a["type"] == "force_redraw"), turns
    if "pass" in types:
        return next(a for a in legal if a["type"] == "pass"), turns
    for name in ("scandal", ROTATION[turns % len(ROTATION)], "income"):
        for a in legal:
            if a["type"] == name:
                return a, turns + 1
    raise AssertionError(f"no choice among {legal}")


def capitol_arisen(view: dict[str, Any], legal: list[dict[str, Any]]) -> set[str]:
    """js/coach.js's conditions (kept alike by hand: the browser test checks the outcome)."""
    types = {a["type"] for a in legal}
    log = view.get("log") or []
    kinds = {e.get("type") for e in log}
    acts = {e.get("action") for e in log if e.get("type") == "action"}
    out = set()
    if "income" in types:
        out |= {"income", "claim"}
    if "challenge" in types or "challenge" in kinds:
        out.add("challenge")
    if "block" in types or "block" in kinds:
        out.add("block")
    if "lose" in types or "lose" in kinds:
        out.add("lose")
    if "hacker" in acts:
        out.add("hacker")
    if acts & {"police_investigate", "police_swap"}:
        out.add("police")
    if "reporter" in acts:
        out.add("reporter")
    if "scandal" in types or "scandal" in acts:
        out.add("scandal")
    return out


# ---- Conspiranoicos -----------------------------------------------------------------------------------

SCORING = ("scoreFinal", "scoreSequence", "scoreRun", "scoreTriple", "scorePairs", "scoreMajority")
CONSPIRANOICOS_LESSONS = ("challengeCard", "send", "tie", "final", "specials", "row", *SCORING)


def conspiranoicos_human(
    view: dict[str, Any], legal: list[dict[str, Any]], turns: int
) -> tuple[dict[str, Any], int]:
    """conspiranoicos_step's choice, in engine terms (js/conspiranoicos.js draws them in these
    orders): the first card of the hand; the first of the table's cards (the plays in seat order,
    then the challenge card) to send, always to the zone, or to keep; never a swap; the row as the
    hand lies (Confirm places it left to right)."""
    types = {a["type"] for a in legal}
    hand = view["players"][view["you"]]["hand"]
    if "play" in types or "place" in types:
        kind = "play" if "play" in types else "place"
        return next(a for a in legal if a["type"] == kind and a["card"] == hand[0]), turns
    table = view["table"]
    shown = [c for c in table["plays"] if c is not None]
    if view["challenge"] in table["remaining"]:
        shown.append(view["challenge"])
    if "send" in types:
        sent = (a for a in legal if a["type"] == "send" and a["card"] == shown[0] and a["to"] == "zone")
        return next(sent), turns
    if "keep" in types:
        return next(a for c in shown for a in legal if a["type"] == "keep" and a["card"] == c), turns
    if "pass" in types:
        return {"type": "pass"}, turns
    raise AssertionError(f"no choice among {legal}")


def conspiranoicos_arisen(view: dict[str, Any], legal: list[dict[str, Any]]) -> set[str]:
    """js/coach.js's conditions (kept alike by hand: the browser test checks the outcome)."""
    types = {a["type"] for a in legal}
    log = view.get("log") or []
    kinds = {e.get("type") for e in log}
    out = set()
    if "challenge" in kinds:
        out.add("challengeCard")
    if types & {"send", "keep"}:
        out.add("send")
    # Round 6 is always decided by closeness: that is the Final Challenge, not a tie.
    if "random_placement" in kinds or any(
        e.get("type") == "round_winner" and e.get("by") == "closeness" and e.get("round", 0) < 6 for e in log
    ):
        out.add("tie")
    if "final_round" in kinds:
        out.add("final")
    if types & {"abduct", "reveal_gnome"} or kinds & {"pass", "abduct", "reveal_gnome"}:
        out.add("specials")
    if "place" in types or "sort_evidence" in kinds:
        out.add("row")
    if "place" in types:
        out |= set(SCORING)
    return out


# ---- the replay -------------------------------------------------------------------------------------

RULES: dict[str, tuple[tuple[str, ...], Choice, Arisen]] = {
    "capitol": (CAPITOL_LESSONS, capitol_human, capitol_arisen),
    "conspiranoicos": (CONSPIRANOICOS_LESSONS, conspiranoicos_human, conspiranoicos_arisen),
}


def play(name: str, seed: int) -> tuple[dict[str, int], int, bool, set[str]]:
    """Each lesson's first decision number, the decisions in all, whether the human won, and the
    kinds of decision the human was offered."""
    _, human, arisen = RULES[name]
    game = games.get(name)
    state = game.new_game(players=2, seed=seed, options={})
    seq = 1  # Room.start
    turns = 0
    first: dict[str, int] = {}
    offered: set[str] = set()
    while not state.is_over():
        # The bot first when both are awaited (the module's docstring says why).
        seat = max(state.waiting_for())
        view, legal = state.view(seat), state.legal_actions(seat)
        if seat == 0:
            for lesson in arisen(view, legal):
                first.setdefault(lesson, seq)
            offered |= {a["type"] for a in legal}
            action, turns = human(view, legal, turns)
        else:
            action = bots.make(BOT_LEVEL, game, seat, practice.bot_seed(seq, seat)).act(view, legal)
        state.apply(seat, action)
        seq += 1
    for lesson in arisen(state.view(0), []):
        first.setdefault(lesson, seq)
    return first, seq, 0 in state.winners(), offered


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "capitol"
    tries = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    lessons = RULES[name][0]
    best = None
    for seed in range(tries):
        first, length, won, offered = play(name, seed)
        if set(first) >= set(lessons):
            # Conspiranoicos: better the player's own Abduction or Gnome Revelation, and a round won.
            own = -len(offered & {"abduct", "reveal_gnome", "send"})
            score = (own, max(first.values()), length)
            if best is None or score < best[0]:
                best = (score, seed, first, won, offered)
    if best is None:
        print("no seed brings every lesson")
        return
    (_, latest, length), seed, first, won, offered = best
    outcome = "wins" if won else "loses"
    print(f"{name} seed {seed}: every lesson by decision {latest}, {length} decisions, the player {outcome}")
    print(sorted(first.items(), key=lambda kv: kv[1]))
    print("the player is offered:", sorted(offered))


if __name__ == "__main__":
    main()
