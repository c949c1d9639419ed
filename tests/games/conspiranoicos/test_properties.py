"""Conspiranoicos properties over random games: the 18 cards are conserved, views keep secrets,
``determinize`` rebuilds what a seat sees, and saves round-trip."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from conflictology.engine import Rng
from conflictology.games.conspiranoicos import GAME, ConspiranoicosState

options_strategy = st.fixed_dictionaries(
    {},
    optional={
        "face_up_slots": st.lists(st.integers(1, 6), unique=True),
        "sequence_any_order": st.booleans(),
        "head_to_head_ties_score_both": st.booleans(),
    },
)

TOKEN = re.compile(r"[A-Za-z0-9_-]+")


def tokens(value: Any) -> set[str]:
    """Every word of every string in a view, except the public card catalogue."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            if key != "cards":
                found |= tokens(item)
    elif isinstance(value, list):
        for item in value:
            found |= tokens(item)
    elif isinstance(value, str):
        found |= set(TOKEN.findall(value))
    return found


def hidden_from(state: ConspiranoicosState, seat: int) -> set[str]:
    """Card ids this seat cannot know now (its own draws are hidden from it too)."""
    ids = state.deck.ids
    hidden = [*state.draws[0], *state.draws[1], *state.cdeck]
    if not state.final_revealed:
        hidden.append(state.final)
    if state.phase in ("play", "send", "keep"):
        hidden += state.hands[1 - seat]  # drawn cards, never shown
        if state.phase == "play" and state.plays[1 - seat] >= 0:
            hidden.append(state.plays[1 - seat])
    return {ids[c] for c in hidden}


def check_state(state: ConspiranoicosState, sampler: Rng) -> None:
    # Conservation: hands, draw decks, challenge deck, Final Challenge, zones, Pyramid, table, rows.
    places = state.where()
    assert sorted(c for cards in places.values() for c in cards) == list(range(18)), places
    for seat in (0, 1):
        view = state.view(seat)
        me, them = view["players"][seat], view["players"][1 - seat]
        row_them = them["row"] if isinstance(them["row"], int) else len(them["row"])
        # While rows are built the opponent's hand is a count (backs would tell which card was placed).
        hand_them = them["hand"] if isinstance(them["hand"], int) else len(them["hand"])
        assert isinstance(them["hand"], int) == (view["phase"] == "build")
        table = view["table"]
        on_table = (
            len(table["remaining"]) if table["revealed"] else sum(p is not None for p in table["plays"])
        )
        on_table += 1 if view["phase"] == "play" and view["challenge"] is not None else 0
        counted = (
            len(me["hand"])
            + hand_them
            + len(me["row"])
            + row_them
            + sum(p["draw"] for p in view["players"])
            + sum(len(p["zone"]) for p in view["players"])
            + view["challenge_deck"]
            + (0 if view["final_challenge"] else 1)
            + sum(1 for slot in view["pyramid"] if slot is not None)
            + on_table
        )
        assert counted == 18, view
        # Secrets: no id this seat cannot know appears anywhere in its view (catalogue aside).
        leaked = hidden_from(state, seat) & tokens(view)
        assert not leaked, f"seat {seat} sees {leaked}"
        # Determinize: a world drawn from the view looks the same to the seat and to spectators.
        world = GAME.determinize(view, Rng(sampler.next64()))
        assert world.view(seat) == view
        assert world.legal_actions(seat) == state.legal_actions(seat)
        assert world.view(None) == state.view(None)
        assert world.where()["hand0" if seat == 0 else "hand1"] == places["hand0" if seat == 0 else "hand1"]
    spectator_leak = (hidden_from(state, 0) | hidden_from(state, 1)) & tokens(state.view(None))
    assert not spectator_leak


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**64 - 1), chooser=st.integers(0, 2**32), options=options_strategy)
def test_random_games_conserve_cards_keep_secrets_and_determinize(
    seed: int, chooser: int, options: dict[str, Any]
) -> None:
    state = GAME.new_game(2, seed=seed, options=options)
    rng = Rng(chooser)
    sampler = Rng(chooser ^ 0x5EED)
    steps = 0
    while True:
        check_state(state, sampler)
        if steps % 7 == 0:
            copy = GAME.from_json(state.to_json())
            assert copy.to_json() == state.to_json()
            assert [copy.view(s) for s in (0, 1, None)] == [state.view(s) for s in (0, 1, None)]
        if state.is_over():
            break
        seat = rng.choice(state.waiting_for())
        state.apply(seat, rng.choice(state.legal_actions(seat)))
        steps += 1
    assert len(state.scores()) == 2 and state.winners()
    detail = state.view(0)["score_detail"]
    assert [sum(c["points"][p] for c in detail["criteria"]) for p in (0, 1)] == state.scores()
    assert all(0 <= s <= 14 for s in state.scores())
    json.dumps(state.view(None))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**64 - 1), chooser=st.integers(0, 2**32))
def test_determinized_worlds_vary_the_hidden_cards_and_play_on(seed: int, chooser: int) -> None:
    state = GAME.new_game(2, seed=seed)
    rng = Rng(chooser)
    act = rng.choice(state.waiting_for())
    state.apply(act, rng.choice(state.legal_actions(act)))  # one hidden play on the table
    view = state.view(1 - act)
    worlds = [GAME.determinize(view, Rng(chooser + k)) for k in range(12)]
    hidden_hands = {tuple(w.hands[act]) for w in worlds}
    assert len(hidden_hands) > 1  # the opponent's hand really is re-drawn...
    backs = state.deck.backs
    for world in worlds:
        # ...always with the backs the seat saw.
        assert [backs[c] for c in world.hands[act]] == [backs[c] for c in state.hands[act]]
        assert backs[world.plays[act]] == backs[state.plays[act]]
        while not world.is_over():
            seat = rng.choice(world.waiting_for())
            world.apply(seat, rng.choice(world.legal_actions(seat)))
