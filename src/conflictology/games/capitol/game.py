"""The Capitol game description: options, dealing, the action table, JSON and determinization."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
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
        you = view.get("you")
        if type(you) is not int:
            raise ValueError("determinize needs a seat's own view (not a spectator's)")
        ps = view["players"]
        n = len(ps)
        s = CapitolState.__new__(CapitolState)
        s.n = n
        options = dict(view["options"])
        options["steal_blockers"] = list(options["steal_blockers"])
        s._set_options(options)
        s.money = [int(p["money"]) for p in ps]
        s.revealed = [list(p["revealed"]) for p in ps]
        s.alive = [bool(p["alive"]) for p in ps]
        s.treasury = int(view["treasury"])
        s.rng = Rng(rng.next64())
        s.phase = view["phase"]
        s.actor = int(view["turn"])
        s.awaiting = list(view["awaiting"])
        s.winner = int(view["winners"][0]) if s.phase == OVER else -1
        s.log = [("_raw", dict(e)) for e in view["log"]]
        summary = view.get("summary")
        if summary is not None:
            s.honesty = honesty_int([bool(c["honest"]) for c in summary["claims"]])
        else:
            s.honesty = public_honesty_bits(view["log"])
        pending = view["pending"] or {}
        s.action = pending.get("action") or ""
        s.target = _int(pending.get("target"))
        s.claim = pending.get("claim") or ""
        s.challenger = _int(pending.get("challenger"))
        s.blocker = _int(pending.get("blocker"))
        s.block_claim = pending.get("block_claim") or ""
        s.block_challenger = _int(pending.get("block_challenger"))
        s.passed = list(pending.get("passed", []))
        s.losses = list(pending.get("losses", []))
        s.then = pending.get("then") or ""
        reveal = pending.get("reveal")
        s.reveal_seat = int(reveal["seat"]) if reveal else -1
        s.reveal_card = str(reveal["card"]) if reveal else ""
        s.keep = int(pending.get("keep", 0))
        s.shown = pending.get("shown", "")
        s.known = [(you, int(k["seat"]), str(k["card"])) for k in view.get("known", [])]

        # The cards nobody has shown this seat: 18 minus the face-up ones, its own, and what it knows.
        unseen = Counter(data.DECK)
        unseen.subtract(c for r in s.revealed for c in r)
        own = list(ps[you]["hidden"])
        unseen.subtract(own)
        # Cards known to be in a hand: what this seat saw as Police, and a card revealed to win a
        # challenge that is still waiting to be replaced (one card, if both name the same role).
        fixed: dict[int, list[str]] = {}
        for _, t, c in s.known:
            fixed.setdefault(t, []).append(c)
        if s.reveal_seat >= 0 and s.reveal_seat != you and s.reveal_card not in fixed.get(s.reveal_seat, []):
            fixed.setdefault(s.reveal_seat, []).append(s.reveal_card)
        for cards in fixed.values():
            unseen.subtract(cards)
        if any(v < 0 for v in unseen.values()):
            raise ValueError("inconsistent view: more copies of a role than the deck holds")
        pool = list(unseen.elements())
        rng.shuffle(pool)
        hidden: list[list[str]] = []
        for i, p in enumerate(ps):
            if i == you:
                hidden.append(own)
                continue
            hand = fixed.get(i, [])[: int(p["hidden"])]
            take = int(p["hidden"]) - len(hand)
            hand = hand + pool[:take]
            del pool[:take]
            rng.shuffle(hand)  # a known card could be either of the hand's cards
            hidden.append(hand)
        s.hidden = hidden
        s.deck = pool
        if len(pool) != view["deck"]:
            raise ValueError("inconsistent view: the cards do not add up to 18")
        if s.phase == EXCHANGE:
            if s.actor == you:
                s.ex_hand = list(pending["hand"])
            else:
                s.ex_hand = s.hidden[s.actor][: s.keep]
        else:
            s.ex_hand = []
        if s.phase == INVESTIGATE:
            if you not in (s.actor, s.target):
                s.shown = rng.choice(s.hidden[s.target])
            if not any(p == s.actor and t == s.target for p, t, _ in s.known):
                s.known.append((s.actor, s.target, s.shown))
        s._lseat = -1
        s._legal = []
        s.check_invariants()
        return s


def _int(x: Any) -> int:
    return -1 if x is None else int(x)


__all__ = ["CapitolGame", "IllegalAction"]
