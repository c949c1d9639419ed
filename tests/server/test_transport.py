"""The WebSocket transport's refusals: bounded, whatever was refused."""

from __future__ import annotations

import msgspec

from conflictology.games.capitol import GAME
from conflictology.server.transport import ERROR_CHARS, error_message


def test_a_refusal_quotes_at_most_a_bounded_part_of_what_it_refused() -> None:
    state = GAME.new_game(2, seed=1)
    huge = {"type": "income", "padding": "x" * 10_000}
    try:
        state.apply(state.waiting_for()[0], huge)
    except ValueError as exc:
        refusal = str(exc)
    assert len(refusal) > 10_000  # the engine quotes the action whole
    sent = error_message("illegal", refusal)
    assert len(sent.message) == ERROR_CHARS and sent.message.endswith("…")
    assert len(msgspec.json.encode(sent)) < ERROR_CHARS * 2
    assert error_message("illegal", "short").message == "short"
