"""The Capitol game description (the engine's ``Game``): options, dealing, the action table, reading a
save, determinization (``worlds.py``) and the replay of a finished game (``replay.py``)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from conflictology.engine import Action, ActionTable, Game, GameState, IllegalAction, Rng, View, check_options
from conflictology.games.capitol import data, recap, replay, worlds
from conflictology.games.capitol.state import CapitolState, Setup
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
    """The ``copies`` option (docs/rules/capitol.md, "Big tables" and "Small variants"): copies of
    each role in play, one of ``data.COPIES_CHOICES`` or of ``data.SMALL_COPIES_CHOICES``; the deck
    left after the deal is checked with the other options (``check_deck``). None (not set, or null)
    is the table's own deck: left out up to six seats, by its size past six."""
    if value is None or value is NOT_SET:
        return data.default_copies(players) if players > data.RULEBOOK_MAX_PLAYERS else None
    choices = (*data.SMALL_COPIES_CHOICES, *data.COPIES_CHOICES)
    if type(value) is not int or value not in choices:
        raise ValueError(f"copies must be null or one of {', '.join(str(c) for c in choices)}, got {value!r}")
    return value


def check_roles(players: int, value: object) -> list[str] | None:
    """The ``roles`` option (a small variant): the roles in play, at least ``data.MIN_ROLES``
    distinct ones, kept in role order; not set, all six (left out)."""
    if value is NOT_SET:
        return None
    if (
        not isinstance(value, list | tuple)
        or any(type(r) is not str or r not in data.ROLE_SET for r in value)
        or len(set(value)) != len(value)
        or len(value) < data.MIN_ROLES
    ):
        raise ValueError(
            f"roles must be a list of at least {data.MIN_ROLES} distinct roles among "
            f"{', '.join(data.ROLES)}, got {value!r}"
        )
    return [r for r in data.ROLES if r in value]


def check_influence(players: int, value: object) -> int | None:
    """The ``influence`` option (a small variant): face-down cards dealt to each player, 1 or 2;
    not set, the rulebook's two (left out)."""
    if value is NOT_SET:
        return None
    if type(value) is not int or value not in data.INFLUENCE_CHOICES:
        choices = " or ".join(str(c) for c in data.INFLUENCE_CHOICES)
        raise ValueError(f"{data.INFLUENCE_OPTION} must be {choices}, got {value!r}")
    return value


def check_deck(players: int, options: dict[str, Any]) -> None:
    """The deck the options make must deal every hand and leave the largest draw of a role in play
    (a Reporter's two, a Police swap's one)."""
    cards = len(data.deck_in(options))
    hands = data.influence_in(options) * players
    roles = data.roles_in(options)
    draw = max((data.DRAW[k] for k in ("reporter", "police_swap") if data.CLAIM[k] in roles), default=0)
    if cards - hands < draw:
        drawer = "a Reporter draws" if "reporter" in roles else "a Police swap draws"
        what = f"copies {options['copies']}" if "copies" in options else "the deck"
        raise ValueError(
            f"{what} is too few for {players} players: {cards} cards leave {cards - hands} in the "
            f"deck after the deal, and {drawer} {draw}"
        )
    steal = [r for r in options["steal_blockers"] if r not in roles]
    if steal:
        raise ValueError(f"steal_blockers names roles out of play: {', '.join(steal)}")


# Options listed only when a game sets them (``copies`` also past six seats, by the table's size): a
# game that leaves them alone shows, saves and names in OpenSpiel's parameters the rulebook's options
# exactly as before they existed. Each with its check.
LATE_OPTIONS: dict[str, Callable[[int, object], Any]] = {
    "copies": check_copies,
    data.STALEMATE_OPTION: check_stalemate_turns,
    data.ROLES_OPTION: check_roles,
    data.INFLUENCE_OPTION: check_influence,
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

    def option_choices(self) -> dict[str, list[Any]]:
        # The late options a room may set by number: the big tables' deck (the small variants' 1 and 2
        # are for programs) and the stalemate rule's turns (a few steps of its range).
        return {
            "steal_blockers": list(data.STEAL_BLOCKER_CHOICES),
            "copies": list(data.COPIES_CHOICES),
            data.STALEMATE_OPTION: list(data.STALEMATE_FORM_CHOICES),
        }

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
        check_deck(players, merged)
        return merged

    def new_game(
        self,
        players: int,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
        deck: Sequence[str] | None = None,
    ) -> CapitolState:
        if options is None and type(players) is int and self.min_players <= players <= self.max_players:
            # The table's own options (every fresh playout of a search or a benchmark): checked and
            # derived once per table size (``check_players`` inline: a call less a game).
            setup = _own_setup(self, players)
        else:
            self.check_players(players)
            setup = Setup(players, self.check_game_options(players, options))
        if seed is None:
            seed = Rng.fresh_seed()
        elif type(seed) is not int:
            raise ValueError(f"seed must be an integer, got {seed!r}")
        rng = Rng(seed)
        full = setup.cards
        if deck is None:
            cards = list(full)
            rng.shuffle(cards)
        else:
            merged = setup.options
            if not isinstance(deck, list | tuple) or any(type(c) is not str for c in deck):
                raise ValueError("deck must be a list of role names")
            cards = list(deck)
            if sorted(cards) != sorted(full):
                copies = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}[data.copies_in(merged)]
                roles = ", ".join(data.roles_in(merged))
                raise ValueError(
                    f"deck must be a permutation of the {len(full)} cards ({copies} each of {roles})"
                )
        return CapitolState.deal(setup, cards, rng)

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

    def recap(
        self,
        initial: GameState,
        actions: Iterable[tuple[int, Action]],
        chance: Callable[[Any], list[float]] | None = None,
    ) -> dict[str, Any]:
        assert isinstance(initial, CapitolState)
        return recap.recap(initial, actions, chance)

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


@functools.cache
def _own_setup(game: CapitolGame, players: int) -> Setup:
    """The default options as checked for a table of ``players``, and what a deal derives from them
    (never handed out: each game copies the options)."""
    return Setup(players, game.check_game_options(players, None))


__all__ = ["CapitolGame", "IllegalAction"]
