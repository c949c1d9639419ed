"""The Conspiranoicos game: options, the stacked deal, saves and determinization."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from conflictology.engine import ActionTable, Game, GameState, Rng, View

from .cards import DECK_SIZE, bundled_decks, load_deck
from .options import DEFAULT_OPTIONS, Options
from .state import ConspiranoicosState, action_table_for
from .views import determinize


class ConspiranoicosGame(Game):
    name = "conspiranoicos"
    title = "Conspiranoicos"
    min_players = 2
    max_players = 2

    @property
    def action_table(self) -> ActionTable:
        """The table for the bundled default deck; a state's own ``action_table`` follows its deck."""
        return action_table_for(load_deck(None))

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
        return ConspiranoicosState.deal(cards, opts, order, rng)

    def from_json(self, text: str) -> ConspiranoicosState:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not a saved game: {exc}") from exc
        if not isinstance(data, dict):
            raise ValueError("not a saved game: expected a JSON object")
        return ConspiranoicosState.from_dict(data)

    def open_view(self, state: GameState) -> View:
        from . import replay

        assert isinstance(state, ConspiranoicosState)
        return replay.open_view(state)

    def figures(self, state: GameState) -> list[dict[str, int]]:
        from . import replay

        assert isinstance(state, ConspiranoicosState)
        return replay.figures(state)

    def determinize(self, view: View, rng: Rng) -> ConspiranoicosState:
        return determinize(view, rng)


GAME = ConspiranoicosGame()
ConspiranoicosState.game = GAME
