"""The Conspiranoicos game and its states behind the engine contract: options, the stacked deal,
saves and determinization, each delegated to the module that holds it (``rules``, ``views``,
``worlds``, ``replay``)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar

from conflictology.engine import Action, ActionTable, Game, GameState, Rng, View

from . import pyramid, recap, replay, rules, views, worlds
from .cards import DECK_SIZE, bundled_decks, load_deck
from .options import DEFAULT_OPTIONS, Options
from .state import OVER, State


class ConspiranoicosState(State, GameState):
    """One game: the fields of :class:`~.state.State` under the engine's :class:`GameState`. The
    methods are the contract's, each a call into the rules or the views."""

    game: ClassVar[Game]

    __slots__ = ()

    @property
    def num_players(self) -> int:
        return 2

    @property
    def action_table(self) -> ActionTable:
        """The action table of this game's deck (another deck file has other card ids)."""
        return rules.action_table_for(self.deck)

    def legal_action_indices(self, seat: int) -> list[int]:
        table = rules.action_table_for(self.deck)
        return [table.index(a) for a in rules.legal_actions(self, seat)]

    def apply_index(self, seat: int, index: int) -> None:
        rules.apply(self, seat, rules.action_table_for(self.deck).action(index))

    def is_over(self) -> bool:
        return self.phase is OVER

    def winners(self) -> list[int]:
        return list(self.result.winners) if self.result is not None else []

    def scores(self) -> list[int]:
        return list(self.result.totals) if self.result is not None else []

    def waiting_for(self) -> list[int]:
        return rules.waiting_for(self)

    def legal_actions(self, seat: int) -> list[Action]:
        return rules.legal_actions(self, seat)

    def apply(self, seat: int, action: Mapping[str, Any]) -> None:
        rules.apply(self, seat, action)

    def decision_kind(self, seat: int) -> str:
        return rules.decision_kind(self, seat)

    def timeout_action(self, seat: int) -> Action:
        return rules.timeout_action(self, seat)

    def view(self, seat: int | None) -> View:
        if seat is not None and (type(seat) is not int or seat not in (0, 1)):
            raise ValueError(f"no seat {seat!r} at a table of two (a seat is 0 or 1, None for a spectator)")
        return views.build_view(self, seat)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ConspiranoicosState:
        """Rebuild a state saved by ``to_dict``; a malformed save raises ``ValueError``."""
        st = cls.load(data)
        if st.phase is OVER:
            st.result = pyramid.compute_score(st)
        return st


class ConspiranoicosGame(Game):
    name = "conspiranoicos"
    title = "Conspiranoicos"
    min_players = 2
    max_players = 2

    @property
    def action_table(self) -> ActionTable:
        """The table for the bundled default deck; a state's own ``action_table`` follows its deck."""
        return rules.action_table_for(load_deck(None))

    def default_options(self) -> dict[str, Any]:
        return copy.deepcopy(DEFAULT_OPTIONS)

    def file_options(self) -> dict[str, list[str]]:
        """``deck_file`` names a deck file; a server accepts only the decks bundled with the game."""
        return {"deck_file": bundled_decks()}

    def new_game(
        self,
        players: int,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
        deck: Sequence[str] | None = None,
    ) -> ConspiranoicosState:
        self.check_players(players)
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise ValueError(f"seed must be an integer or null, got {seed!r}")
        opts = Options(options)
        cards = load_deck(opts.deck_file)  # a malformed deck file is refused here, naming card and field
        rng = Rng(Rng.fresh_seed() if seed is None else seed)
        if deck is None:
            order = list(range(DECK_SIZE))
            rng.shuffle(order)
        else:
            if isinstance(deck, str | bytes) or not isinstance(deck, Sequence):
                raise ValueError("deck must be a list of card ids")
            if sorted(map(str, deck)) != sorted(cards.ids) or len(deck) != DECK_SIZE:
                raise ValueError(
                    f"deck must be a permutation of the {DECK_SIZE} card ids: {', '.join(cards.ids)}"
                )
            order = [cards.index[c] for c in deck]
        return rules.deal(ConspiranoicosState, cards, opts, order, rng)

    def from_json(self, text: str) -> ConspiranoicosState:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not a saved game: {exc}") from exc
        if not isinstance(data, dict):
            raise ValueError("not a saved game: expected a JSON object")
        return ConspiranoicosState.from_dict(data)

    def open_view(self, state: GameState) -> View:
        return replay.open_view(self._own(state))

    def figures(self, state: GameState) -> list[dict[str, int]]:
        return replay.figures(self._own(state))

    def recap(
        self,
        initial: GameState,
        actions: Iterable[tuple[int, Action]],
        chance: Callable[[Any], list[float]] | None = None,
    ) -> dict[str, Any]:
        return recap.recap(self._own(initial), actions)  # the scores say it: no chance needed

    def determinize(self, view: View, rng: Rng) -> ConspiranoicosState:
        return worlds.determinize(ConspiranoicosState, view, rng)

    def _own(self, state: GameState) -> ConspiranoicosState:
        if not isinstance(state, ConspiranoicosState):
            raise TypeError(f"not a Conspiranoicos state: {type(state).__name__}")
        return state


GAME = ConspiranoicosGame()
ConspiranoicosState.game = GAME
