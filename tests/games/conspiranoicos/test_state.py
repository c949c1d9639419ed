"""The state's fields (state.py): the phases as an enum with the protocol's strings, clone, and the
JSON form, which reads back into Phase members (the rules compare phases by identity)."""

from __future__ import annotations

import json

import pytest

from conflictology.games.conspiranoicos import GAME, ConspiranoicosState, Phase
from conflictology.games.conspiranoicos.state import COLLECT, PHASES, PLAY


def test_phases_spell_what_saves_views_and_the_protocol_carry() -> None:
    assert [p.value for p in Phase] == ["play", "send", "keep", "abduct", "gnome", "build", "over"]
    assert PHASES == ("play", "send", "keep", "abduct", "gnome", "build", "over")
    assert all(type(p) is str for p in PHASES)
    assert COLLECT == (Phase.PLAY, Phase.SEND, Phase.KEEP) and PLAY is Phase.PLAY
    assert Phase.SEND == "send" and f"{Phase.KEEP}" == "keep"


def test_a_saved_phase_reads_back_as_the_member_and_is_written_as_its_string() -> None:
    state = GAME.new_game(2, seed=2)
    state.apply(0, state.timeout_action(0))
    state.apply(1, state.timeout_action(1))
    text = state.to_json()
    assert json.loads(text)["phase"] == "send" and '"phase":"send"' in text
    back = GAME.from_json(text)
    assert back.phase is Phase.SEND and back.to_json() == text
    assert type(state.to_dict()["phase"]) is str


def test_a_save_with_an_unknown_phase_or_round_is_refused() -> None:
    data = GAME.new_game(2, seed=2).to_dict()
    for phase, rnd in (("nap", 1), ("play", 7), ("play", 0)):
        with pytest.raises(ValueError, match="bad phase/round"):
            ConspiranoicosState.from_dict({**data, "phase": phase, "round": rnd})
    with pytest.raises(ValueError, match="not a Conspiranoicos save"):
        ConspiranoicosState.from_dict({**data, "game": "capitol"})


def test_clone_copies_every_list_and_shares_only_what_never_changes() -> None:
    state = GAME.new_game(2, seed=2)
    twin = state.clone()
    assert type(twin) is ConspiranoicosState and twin.to_json() == state.to_json()
    assert twin.deck is state.deck and twin.opts is state.opts
    seat = twin.waiting_for()[0]
    twin.apply(seat, twin.timeout_action(seat))
    assert twin.to_json() != state.to_json()
    assert state.hands != twin.hands and state.plays == [-1, -1]
    assert twin.rng is not state.rng


def test_a_finished_save_reads_back_with_its_score() -> None:
    state = GAME.new_game(2, seed=9)
    while not state.is_over():
        seat = state.waiting_for()[0]
        state.apply(seat, state.timeout_action(seat))
    back = GAME.from_json(state.to_json())
    assert back.result is not None and back.scores() == state.scores() and back.winners() == state.winners()
