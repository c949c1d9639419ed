"""The Capitol game description: options, dealing, the action table, JSON and determinization."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations_with_replacement
from typing import Any

from conflictology.engine import Action, ActionTable, Game, GameState, IllegalAction, Rng, View, check_options
from conflictology.games.capitol import data
from conflictology.games.capitol.state import (
    EXCHANGE,
    INVESTIGATE,
    OVER,
    CapitolState,
    honesty_int,
    public_honesty_bits,
)


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


class CapitolGame(Game):
    name = "capitol"
    title = "Conflictology: Capitol"
    min_players = 2
    max_players = 6

    def __init__(self) -> None:
        self._table = ActionTable(_all_actions(self.max_players), canonical=_canonical)

    @property
    def action_table(self) -> ActionTable:
        return self._table

    def default_options(self) -> dict[str, Any]:
        return {**data.DEFAULT_OPTIONS, "steal_blockers": []}

    def option_choices(self) -> dict[str, list[str]]:
        return {"steal_blockers": list(data.STEAL_BLOCKER_CHOICES)}

    def check_game_options(self, players: int, options: Mapping[str, Any] | None) -> dict[str, Any]:
        """The options merged over the defaults, each value checked (``ValueError`` if bad)."""
        merged = check_options(self.name, options, self.default_options())
        first = merged["first_player"]
        if first is not None and (type(first) is not int or not 0 <= first < players):
            raise ValueError(f"first_player must be null or a seat from 0 to {players - 1}, got {first!r}")
        for key in ("forced_scandal", "anyone_challenges_block"):
            if type(merged[key]) is not bool:
                raise ValueError(f"{key} must be true or false, got {merged[key]!r}")
        blockers = merged["steal_blockers"]
        choices = data.STEAL_BLOCKER_CHOICES
        if (
            not isinstance(blockers, list | tuple)
            or any(type(r) is not str or r not in choices for r in blockers)
            or len(set(blockers)) != len(blockers)
        ):
            raise ValueError(
                f"steal_blockers must be a list of distinct roles among {', '.join(choices)}, "
                f"got {blockers!r}"
            )
        merged["steal_blockers"] = [r for r in choices if r in blockers]
        return merged

    def new_game(
        self,
        players: int,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
        deck: Sequence[str] | None = None,
    ) -> CapitolState:
        self.check_players(players)
        merged = self.check_game_options(players, options)
        if seed is None:
            seed = Rng.fresh_seed()
        elif type(seed) is not int:
            raise ValueError(f"seed must be an integer, got {seed!r}")
        rng = Rng(seed)
        if deck is None:
            cards = list(data.DECK)
            rng.shuffle(cards)
        else:
            if not isinstance(deck, list | tuple) or any(type(c) is not str for c in deck):
                raise ValueError("deck must be a list of role names")
            cards = list(deck)
            if sorted(cards) != sorted(data.DECK):
                raise ValueError(
                    f"deck must be a permutation of the 18 cards (three each of {', '.join(data.ROLES)})"
                )
        return CapitolState.deal(players, merged, cards, rng)

    def from_json(self, text: str) -> CapitolState:
        try:
            doc = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"not a JSON Capitol state: {exc}") from exc
        if not isinstance(doc, dict):
            raise ValueError("not a JSON Capitol state")
        return CapitolState.from_doc(doc)

    def open_view(self, state: GameState) -> View:
        from conflictology.games.capitol import replay

        assert isinstance(state, CapitolState)
        return replay.open_view(state)

    def figures(self, state: GameState) -> list[dict[str, int]]:
        from conflictology.games.capitol import replay

        assert isinstance(state, CapitolState)
        return replay.figures(state)

    def determinize(self, view: View, rng: Rng) -> CapitolState:
        """A full state consistent with one seat's view, the unseen cards drawn at random.

        The seat's own cards (and the exchange it is choosing, and the card Police showed it) are
        kept; every other face-down card and the deck are drawn from the cards not accounted for.
        The private honesty of the claims comes from the summary once the game is over; before, from
        the public log: a claim counts as honest unless a challenge caught it (no view says more).
        """
        return self.worlds(view)(rng)

    def worlds(self, view: View) -> Callable[[Rng], CapitolState]:
        """:meth:`determinize` for many worlds of one view: the view is read once (a search draws
        hundreds of worlds per decision), each call deals the unseen cards anew. A world drawn with
        a given ``rng`` is the one :meth:`determinize` draws with it."""
        you = view.get("you")
        if type(you) is not int:
            raise ValueError("determinize needs a seat's own view (not a spectator's)")
        ps = view["players"]
        n = len(ps)
        t = CapitolState.__new__(CapitolState)
        t.n = n
        options = dict(view["options"])
        options["steal_blockers"] = list(options["steal_blockers"])
        t._set_options(options)
        t.money = [int(p["money"]) for p in ps]
        t.revealed = [list(p["revealed"]) for p in ps]
        t.alive = [bool(p["alive"]) for p in ps]
        t.treasury = int(view["treasury"])
        t.rng = Rng(0)
        t.phase = view["phase"]
        t.actor = int(view["turn"])
        t.awaiting = list(view["awaiting"])
        t.winner = int(view["winners"][0]) if t.phase == OVER else -1
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
        t.passed = list(pending.get("passed", []))
        t.losses = list(pending.get("losses", []))
        t.then = pending.get("then") or ""
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
        t._legal = []

        # The cards nobody has shown this seat: 18 minus the face-up ones, its own, and what it knows.
        unseen = Counter(data.DECK)
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
            raise ValueError("inconsistent view: the cards do not add up to 18")
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


__all__ = ["CapitolGame", "IllegalAction"]
