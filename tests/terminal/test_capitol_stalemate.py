"""The terminal shows a Capitol game the stalemate rule ended, naming every winner."""

from __future__ import annotations

from conflictology.games.capitol.game import CapitolGame
from conflictology.terminal.render import render_text


def test_the_terminal_names_the_stalemate_and_its_winners() -> None:
    state = CapitolGame().new_game(2, seed=1, options={"first_player": 0, "stalemate_turns": 10})
    while not state.is_over():
        seat = state.waiting_for()[0]
        legal = state.legal_actions(seat)
        state.apply(seat, next((a for a in legal if a["type"] in ("reporter", "pass")), legal[0]))
    out = render_text(state.view(0), ["Ana", "Bob"], width=200)
    assert "game over by the stalemate rule (no influence lost): Ana, Bob" in out
    assert "10 turns in a row with no influence lost" in out
