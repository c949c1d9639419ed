"""The Capitol game description (the engine's ``Game``): options, dealing, the action table, reading a
save, determinization (``worlds.py``) and the replay of a finished game (``replay.py``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from conflictology.engine import ActionTable, Game, GameState, IllegalAction, Rng, View, check_options
from conflictology.games.capitol import data, replay, worlds
from conflictology.games.capitol.state import CapitolState
from conflictology.games.capitol.table import table_for

# A late option the game was not given (a null is given, and may be refused).
NOT_SET = object()


def check_stalemate_turns(players: int, value: object) -> int | None:
    """The ``stalemate_turns`` option (the stalemate rule, docs/rules/capitol.md): an integer within
    ``data.STALEMATE_BOUNDS``, never null (the rule is never off); not set, it is left out (the rule's
    default applies)."""
    if value is NOT_SET:
        return None
    low, high = data.STALEMATE_BOUNDS
    if type(value) is not int or not low <= value <= high:
        raise ValueError(f"{data.STALEMATE_OPTION} must be an integer from {low} to {high}, got {value!r}")
    return value


def check_copies(players: int, value: object) -> int | None:
    """The big tables' ``copies`` option (docs/rules/capitol.md, "Big tables"): copies of each role,
    one of ``data.COPIES_CHOICES``, with at least a Reporter's draw left in the deck after the deal.
    None (not set, or null) is the table's own deck: left out up to six seats, by its size past six."""
    if value is None or value is NOT_SET:
        return data.default_copies(players) if players > data.RULEBOOK_MAX_PLAYERS else None
    if type(value) is not int or value not in data.COPIES_CHOICES:
        choices = ", ".join(str(c) for c in data.COPIES_CHOICES)
        raise ValueError(f"copies must be null or one of {choices}, got {value!r}")
    left = data.min_deck_left(players, value)
    if left < data.DRAW["reporter"]:
        raise ValueError(
            f"copies {value} is too few for {players} players: {value * len(data.ROLES)} cards leave "
            f"{left} in the deck after the deal, and a Reporter draws {data.DRAW['reporter']}"
        )
    return value


# Options listed only when a game sets them (``copies`` also past six seats, by the table's size): a
# game that leaves them alone shows, saves and names in OpenSpiel's parameters the rulebook's options
# exactly as before they existed. Each with its check.
LATE_OPTIONS: dict[str, Callable[[int, object], int | None]] = {
    "copies": check_copies,
    data.STALEMATE_OPTION: check_stalemate_turns,
}


class CapitolGame(Game):
    name = "capitol"
    title = "Conflictology: Capitol"
    min_players = 2
    max_players = data.MAX_PLAYERS

    @property
    def action_table(self) -> ActionTable:
        """The table of 2-6 seats; a state of seven or more numbers its actions by its own
        ``action_table`` (``table_for``), which extends this one."""
        return table_for(data.RULEBOOK_MAX_PLAYERS)

    def default_options(self) -> dict[str, Any]:
        return {**data.DEFAULT_OPTIONS, "steal_blockers": []}

    def option_choices(self) -> dict[str, list[str]]:
        return {"steal_blockers": list(data.STEAL_BLOCKER_CHOICES)}

    def check_game_options(self, players: int, options: Mapping[str, Any] | None) -> dict[str, Any]:
        """The options merged over the defaults, each value checked (``ValueError`` if bad)."""
        given = dict(options) if isinstance(options, Mapping) else options
        late = {k: given.pop(k) for k in LATE_OPTIONS if isinstance(given, dict) and k in given}
        merged = check_options(self.name, given, self.default_options())
        for key, check in LATE_OPTIONS.items():
            value = check(players, late.get(key, NOT_SET))
            if value is not None:
                merged[key] = value
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
        full = data.deck_of(merged.get("copies", data.COPIES))
        if deck is None:
            cards = list(full)
            rng.shuffle(cards)
        else:
            if not isinstance(deck, list | tuple) or any(type(c) is not str for c in deck):
                raise ValueError("deck must be a list of role names")
            cards = list(deck)
            if sorted(cards) != sorted(full):
                copies = {3: "three", 4: "four", 5: "five"}[len(full) // len(data.ROLES)]
                roles = ", ".join(data.ROLES)
                raise ValueError(
                    f"deck must be a permutation of the {len(full)} cards ({copies} each of {roles})"
                )
        return CapitolState.deal(players, merged, cards, rng)

    def from_json(self, text: str) -> CapitolState:
        try:
            doc = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"not a JSON Capitol state: {exc}") from exc
        if not isinstance(doc, dict):
            raise ValueError("not a JSON Capitol state")
        state = CapitolState.from_doc(doc)
        # A save's options pass the same checks as a new game's: a bad value is refused here, not
        # met halfway through a later move.
        try:
            checked = self.check_game_options(state.n, state.options)
        except ValueError as exc:
            raise ValueError(f"malformed Capitol state: {exc}") from exc
        if checked != state.options:
            raise ValueError(f"malformed Capitol state: options {state.options!r} are not as checked")
        return state

    def open_view(self, state: GameState) -> View:
        assert isinstance(state, CapitolState)
        return replay.open_view(state)

    def replay_step(self, state: GameState) -> tuple[View, int]:
        assert isinstance(state, CapitolState)
        return replay.step_view(state)

    def figures(self, state: GameState) -> list[dict[str, int]]:
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
        """:meth:`determinize` for many worlds of one view (``worlds.worlds``): the view is read once
        (a search draws hundreds of worlds per decision), each call deals the unseen cards anew. A
        world drawn with a given ``rng`` is the one :meth:`determinize` draws with it."""
        return worlds.worlds(view)


__all__ = ["CapitolGame", "IllegalAction"]
