"""What one seat may believe: the full states (worlds) consistent with its view.

The seat's own cards (and the exchange it is choosing, and the card Police showed it) are kept; every
other face-down card and the deck are drawn from the cards not accounted for. The private honesty of
the claims comes from the summary once the game is over; before, from the public log: a claim counts
as honest unless a challenge caught it (no view says more).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from conflictology.engine import Rng, View
from conflictology.games.capitol import data, rules
from conflictology.games.capitol.data import EXCHANGE, INVESTIGATE, OVER, Phase, Then
from conflictology.games.capitol.honesty import honesty_int, public_honesty_bits
from conflictology.games.capitol.state import CapitolState


def worlds(view: View) -> Callable[[Rng], CapitolState]:
    """Every world one seat's view allows, as a dealer: the view is read once (a search draws
    hundreds of worlds per decision), each call deals the unseen cards anew. A world drawn with a
    given ``rng`` is the one ``CapitolGame.determinize`` draws with it."""
    you = view.get("you")
    if type(you) is not int:
        raise ValueError("determinize needs a seat's own view (not a spectator's)")
    ps = view["players"]
    n = len(ps)
    t = CapitolState.__new__(CapitolState)
    t.n = n
    options = dict(view["options"])
    options["steal_blockers"] = list(options["steal_blockers"])
    t.set_options(options)
    t.money = [int(p["money"]) for p in ps]
    t.revealed = [list(p["revealed"]) for p in ps]
    t.alive = [bool(p["alive"]) for p in ps]
    t.treasury = int(view["treasury"])
    t.rng = Rng(0)
    t.phase = Phase(view["phase"])
    t.actor = int(view["turn"])
    t.awaiting = list(view["awaiting"])
    t.winner = int(view["winners"][0]) if t.phase == OVER else -1
    t.tied = [int(w) for w in view["winners"]] if t.phase == OVER and len(view["winners"]) > 1 else []
    t.quiet, t.moves = _stalemate_counters(view["log"], t.phase is Phase.TURN)
    t.log = [("_raw", dict(e)) for e in view["log"]]
    summary = view.get("summary")
    if summary is not None:
        t.honesty = honesty_int([bool(c["honest"]) for c in summary["claims"]])
    else:
        t.honesty = public_honesty_bits(view["log"])
    pending = view["pending"] or {}
    t.action = pending.get("action") or ""
    t.target = _int(pending.get("target"))
    t.claim = pending.get("claim") or ""
    t.challenger = _int(pending.get("challenger"))
    t.blocker = _int(pending.get("blocker"))
    t.block_claim = pending.get("block_claim") or ""
    t.block_challenger = _int(pending.get("block_challenger"))
    # Ruling 6a: only the target's own view holds its sealed answer; anyone else's world leaves it
    # unsaid, so that a target who answered is asked in a block window (the choice the seat cannot see).
    t.block_answer = pending.get("block_answer") or ""
    t.one_prompt = not view.get("two_prompts", False)
    t.passed = list(pending.get("passed", []))
    t.losses = list(pending.get("losses", []))
    t.then = Then(pending.get("then") or "")
    reveal = pending.get("reveal")
    t.reveal_seat = int(reveal["seat"]) if reveal else -1
    t.reveal_card = str(reveal["card"]) if reveal else ""
    t.keep = int(pending.get("keep", 0))
    t.shown = pending.get("shown", "")
    t.known = [(you, int(k["seat"]), str(k["card"])) for k in view.get("known", [])]
    t.hidden = [[] for _ in ps]
    t.deck = []
    t.ex_hand = []
    t._lseat = -1
    t._legal = rules.NO_CHOICES

    # The cards nobody has shown this seat: the deck's 18 (more at a big table, fewer in a small
    # variant: its options say which) minus the face-up ones, its own, and what it knows.
    unseen = Counter(data.deck_in(t.options))
    unseen.subtract(c for r in t.revealed for c in r)
    own = list(ps[you]["hidden"])
    unseen.subtract(own)
    # Cards known to be in a hand: what this seat saw as Police, and a card revealed to win a
    # challenge that is still waiting to be replaced (one card, if both name the same role).
    fixed: dict[int, list[str]] = {}
    for _, seat, c in t.known:
        fixed.setdefault(seat, []).append(c)
    if t.reveal_seat >= 0 and t.reveal_seat != you and t.reveal_card not in fixed.get(t.reveal_seat, []):
        fixed.setdefault(t.reveal_seat, []).append(t.reveal_card)
    for cards in fixed.values():
        unseen.subtract(cards)
    if any(v < 0 for v in unseen.values()):
        raise ValueError("inconsistent view: more copies of a role than the deck holds")
    unseen_cards = list(unseen.elements())
    # Per other seat: the cards known to be in its hand and how many more it holds.
    deal = []
    for i, p in enumerate(ps):
        if i != you:
            hand = fixed.get(i, [])[: int(p["hidden"])]
            deal.append((i, hand, int(p["hidden"]) - len(hand)))
    if len(unseen_cards) - sum(take for _, _, take in deal) != view["deck"]:
        raise ValueError("inconsistent view: the cards do not add up to the deck")
    exchange = t.phase == EXCHANGE
    ex_hand = list(pending["hand"]) if exchange and t.actor == you else []
    investigate = t.phase == INVESTIGATE
    checked = [False]

    def draw(rng: Rng) -> CapitolState:
        s = t.clone()
        s.rng = Rng(rng.next64())
        pool = unseen_cards[:]
        rng.shuffle(pool)
        hidden = s.hidden
        hidden[you] = own[:]
        at = 0
        for i, known, take in deal:
            hand = known + pool[at : at + take]
            at += take
            rng.shuffle(hand)  # a known card could be either of the hand's cards
            hidden[i] = hand
        s.deck = pool[at:]
        if exchange:
            s.ex_hand = ex_hand[:] if s.actor == you else s.hidden[s.actor][: s.keep]
        if investigate:
            if you not in (s.actor, s.target):
                s.shown = rng.choice(s.hidden[s.target])
            if not any(p == s.actor and q == s.target for p, q, _ in s.known):
                s.known.append((s.actor, s.target, s.shown))
        if not checked[0]:
            s.check_invariants()  # every world of the view is dealt alike: checking one is enough
            checked[0] = True
        return s

    return draw


def _int(x: Any) -> int:
    return -1 if x is None else int(x)


def _stalemate_counters(log: list[dict[str, Any]], between_turns: bool) -> tuple[int, int]:
    """The stalemate rule's counters as far as a view tells: the turns ended since the last influence
    lost (each turn starts with one ``action``), and, as a floor of the decisions made, one per
    ``action``. A world's search sees the quiet end coming; the hard cap stays far beyond any search."""
    quiet = 0
    actions = 0
    for e in log:
        kind = e.get("type")
        if kind == "action":
            actions += 1
            quiet += 1
        elif kind == "lose":
            quiet = 0
    # Mid-turn, the turn now going on (its action logged) has not ended yet.
    return (quiet if between_turns else max(quiet - 1, 0)), actions
