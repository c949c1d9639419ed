"""What a seat's Conspiranoicos view shows and hides (views.py): the other's hand as backs, the piles
as sizes, a hidden play as its back, face-down Pyramid cards as null, rows as counts while they are
built; and what it shows: one's own cards, the zones, what both saw go into the Pyramid."""

from __future__ import annotations

from typing import Any

import pytest

from conflictology.games.conspiranoicos import GAME, ConspiranoicosState
from conflictology.games.conspiranoicos.views import read_view

DECK = [
    # seat 0's draw deck (opening hand A7 I2), seat 1's (R0 R3), the challenge deck, the Final Challenge
    *["A7", "I2", "G0", "G6", "A1", "I6"],
    *["R0", "R3", "GA4", "GI2", "GR5", "AI3"],
    *["R4", "AR4", "I7", "ABDUCTION", "EYE"],
    "GNOME",
]


def strings(doc: Any, skip: tuple[str, ...] = ("cards", "log")) -> set[str]:
    """Every string value in a view, but under ``skip`` (the public catalogue, the log's texts)."""
    found: set[str] = set()
    if isinstance(doc, str):
        found.add(doc)
    elif isinstance(doc, dict):
        for key, value in doc.items():
            if key not in skip:
                found |= strings(value, skip)
    elif isinstance(doc, list):
        for value in doc:
            found |= strings(value, skip)
    return found


def finish_collect(state: ConspiranoicosState) -> None:
    while state.phase in ("play", "send", "keep"):
        seat = state.waiting_for()[0]
        state.apply(seat, state.timeout_action(seat))


def test_a_seat_sees_its_own_hand_and_only_the_backs_of_the_others() -> None:
    state = GAME.new_game(2, seed=1, deck=DECK)
    v0, v1, spectator = state.view(0), state.view(1), state.view(None)
    assert v0["players"][0]["hand"] == ["A7", "I2"] and v0["players"][1]["hand"] == ["R", "R"]
    assert v1["players"][1]["hand"] == ["R0", "R3"] and v1["players"][0]["hand"] == ["A", "I"]
    assert spectator["players"][0]["hand"] == ["A", "I"] and spectator["players"][1]["hand"] == ["R", "R"]
    assert not {"R0", "R3"} & strings(v0) and not {"A7", "I2"} & strings(v1)


def test_the_piles_show_only_their_sizes_and_the_final_challenge_stays_hidden() -> None:
    state = GAME.new_game(2, seed=1, deck=DECK)
    view = state.view(0)
    assert [p["draw"] for p in view["players"]] == [4, 4] and view["challenge_deck"] == 4
    assert view["challenge"] == "R4" and view["final_challenge"] is None
    unseen = {"G0", "G6", "A1", "I6", "GA4", "GI2", "GR5", "AI3", "AR4", "I7", "ABDUCTION", "EYE", "GNOME"}
    assert not unseen & strings(view), "a draw deck, the challenge deck or the Final Challenge leaked"
    # The catalogue lists every card of the deck (its contents are public), not where they are.
    assert sorted(c["id"] for c in view["cards"]) == sorted(DECK)


def test_a_submitted_play_shows_its_back_to_the_other_until_both_are_in() -> None:
    state = GAME.new_game(2, seed=1, deck=DECK)
    state.apply(0, {"type": "play", "card": "A7"})
    assert state.view(0)["table"]["plays"] == ["A7", None]
    assert state.view(1)["table"]["plays"] == ["A", None]
    assert state.view(None)["table"]["plays"] == ["A", None] and not state.view(1)["table"]["revealed"]
    assert state.view(1)["pending"]["submitted"] == [True, False]
    state.apply(1, {"type": "play", "card": "R0"})
    for seat in (0, 1, None):
        table = state.view(seat)["table"]
        assert table["revealed"] and table["plays"] == ["A7", "R0"]
        assert sorted(table["remaining"]) == sorted(["A7", "R0", "R4"])


def test_the_log_shows_private_lines_only_to_their_seat() -> None:
    state = GAME.new_game(2, seed=1, deck=DECK)
    hands = {seat: [e for e in state.view(seat)["log"] if e["type"] == "opening_hand"] for seat in (0, 1)}
    assert [e["cards"] for e in hands[0]] == [["A7", "I2"]]
    assert [e["cards"] for e in hands[1]] == [["R0", "R3"]]
    assert not [e for e in state.view(None)["log"] if "private" in e]


def test_face_down_pyramid_cards_show_null_but_name_what_both_saw() -> None:
    state = GAME.new_game(2, seed=4, deck=DECK)
    finish_collect(state)
    assert state.phase in ("abduct", "gnome", "build")
    holder = state.holder if state.phase == "abduct" else None
    for seat in (0, 1, None):
        slots = state.view(seat)["pyramid"]
        assert [s["slot"] for s in slots] == [1, 2, 3, 4, 5, 6]
        for slot in slots:
            assert slot["seen"] == state.deck.ids[state.pyramid[slot["slot"] - 1]]
            assert slot["face_up"] == (slot["slot"] in (4, 5, 6))  # the default face_up_slots
            if slot["face_up"]:
                assert slot["card"] == slot["seen"]
            elif seat != holder:  # the Abduction holder deciding looks at them
                assert slot["card"] is None
            assert slot["shows"] in ("G", "I", "A", "R")
        assert state.view(seat)["pyramid_symbols"] is not None


def test_during_collect_evidence_the_pyramid_is_all_face_down_and_evidence_unlisted() -> None:
    state = GAME.new_game(2, seed=1, deck=DECK)
    state.apply(0, {"type": "play", "card": "A7"})
    state.apply(1, {"type": "play", "card": "R0"})
    seat = state.waiting_for()[0]
    state.apply(seat, state.timeout_action(seat))
    seat = state.waiting_for()[0]
    state.apply(seat, state.timeout_action(seat))
    view = state.view(0)
    assert view["round"] == 2
    assert [s for s in view["pyramid"] if s is not None] and all(
        s["card"] is None and not s["face_up"] and s["shows"] is None for s in view["pyramid"] if s
    )
    assert [p["evidence"] for p in view["players"]] == [None, None] and view["pyramid_symbols"] is None
    # The zones are public: both saw the round's three cards revealed.
    assert state.view(1)["players"][0]["zone"] == view["players"][0]["zone"]


def test_while_rows_are_built_another_hand_and_row_are_counts_beside_the_public_evidence() -> None:
    state = GAME.new_game(2, seed=4, deck=DECK)
    finish_collect(state)
    while state.phase != "build":
        state.apply(state.waiting_for()[0], {"type": "pass"})
    state.apply(0, state.timeout_action(0))
    v0, v1 = state.view(0), state.view(1)
    assert isinstance(v0["players"][0]["hand"], list) and len(v0["players"][0]["row"]) == 1
    assert v1["players"][0]["hand"] == len(state.hands[0]) and v1["players"][0]["row"] == 1
    evidence = sorted(state.hands[0] + state.rows[0])
    assert v1["players"][0]["evidence"] == [state.deck.ids[c] for c in evidence]
    assert v1["players"][0]["evidence"] == v0["players"][0]["evidence"]
    assert v1["pending"] == {"phase": "build", "awaiting": [0, 1], "placed": [1, 0]}


def test_once_over_every_row_and_the_score_are_shown() -> None:
    state = GAME.new_game(2, seed=4, deck=DECK)
    while not state.is_over():
        seat = state.waiting_for()[0]
        state.apply(seat, state.timeout_action(seat))
    for seat in (0, 1, None):
        view = state.view(seat)
        assert [p["row"] for p in view["players"]] == [[state.deck.ids[c] for c in r] for r in state.rows]
        assert view["scores"] == state.scores() and view["winners"] == state.winners()
        assert view["pending"] is None and view["phase"] == "over"


def test_views_carry_phases_as_plain_strings() -> None:
    # The state holds a Phase member; a view (and the protocol) carries the string itself.
    state = GAME.new_game(2, seed=1, deck=DECK)
    view = state.view(0)
    assert type(view["phase"]) is str and type(view["pending"]["phase"]) is str


def test_read_view_types_a_conspiranoicos_view_and_refuses_another() -> None:
    state = GAME.new_game(2, seed=1, deck=DECK)
    view = state.view(1)
    assert read_view(view) is view
    with pytest.raises(ValueError, match="not a Conspiranoicos view"):
        read_view({"game": "capitol"})


def test_a_view_of_no_seat_is_refused() -> None:
    state = GAME.new_game(2, seed=1, deck=DECK)
    for bad in (2, -1, True, "0"):
        with pytest.raises(ValueError, match="no seat"):
            state.view(bad)  # type: ignore[arg-type]
