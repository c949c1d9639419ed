"""Conspiranoicos decks and options: the bundled deck, deck files, refusals that name card and field."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from conflictology.engine import Rng
from conflictology.games.conspiranoicos import GAME, DeckError, bundled_decks, load_deck, parse_deck

DEFAULT = load_deck(None)


def default_data() -> dict[str, Any]:
    return copy.deepcopy(DEFAULT.data)


def test_the_bundled_default_deck_is_the_rulings_table() -> None:
    assert "default" in bundled_decks()
    assert load_deck("default") is DEFAULT
    assert len(DEFAULT.cards) == 18
    by_id = {c.id: c for c in DEFAULT.cards}
    # Spot checks against conspiranoicos-rulings.md "The deck".
    assert (by_id["I7"].value, by_id["I7"].front, by_id["I7"].back, by_id["I7"].challenge) == (
        7,
        ("I",),
        "R",
        "even_value",
    )
    assert (by_id["R4"].front, by_id["R4"].back, by_id["R4"].challenge) == (("R",), "G", "shows_own_back")
    assert (by_id["GR5"].front, by_id["GR5"].back, by_id["GR5"].challenge) == (
        ("G", "R"),
        "R",
        "fewest_symbols",
    )
    assert (by_id["ABDUCTION"].value, by_id["ABDUCTION"].back, by_id["ABDUCTION"].special) == (
        5,
        "A",
        "abduction",
    )
    assert (by_id["EYE"].value, by_id["EYE"].back, by_id["EYE"].special) == (3, "I", "all_seeing_eye")
    assert (by_id["GNOME"].value, by_id["GNOME"].back, by_id["GNOME"].special) == (1, "G", "gnome_revelation")
    assert sum(1 for c in DEFAULT.cards if len(c.front) == 2) == 5
    assert by_id["AR4"].challenge_text == "Shows Aliens (A)"


@pytest.mark.parametrize(
    ("card", "field", "value", "message"),
    [
        (3, "value", 8, "card 'A7' (#4): field 'value': must be an integer 0–7, got 8"),
        (3, "value", "7", "card 'A7' (#4): field 'value'"),
        (3, "value", True, "card 'A7' (#4): field 'value'"),
        (10, "front", ["G", "X"], "card 'GA4' (#11): field 'front': 'X' is not a faction"),
        (10, "front", ["G", "A", "I"], "card 'GA4' (#11): field 'front': at most two symbols"),
        (10, "front", ["G", "G"], "card 'GA4' (#11): field 'front': a symbol is repeated"),
        (10, "front", "GA", "card 'GA4' (#11): field 'front': must be a list"),
        (0, "back", "Q", "card 'G0' (#1): field 'back': must be one faction symbol"),
        (0, "back", None, "card 'G0' (#1): field 'back'"),
        (5, "challenge", "loudest", "card 'I6' (#6): field 'challenge': must be one of"),
        (15, "front", ["A"], "card 'ABDUCTION' (#16): field 'front': a special card has no faction symbol"),
        (15, "special", "teleport", "card 'ABDUCTION' (#16): field 'special'"),
        (2, "colour", "red", "card 'A1' (#3): field 'colour': unknown field"),
        (2, "id", "A 1", "card #3: field 'id'"),
        (2, "id", "G", "card #3: field 'id': 'G' is a faction symbol"),
        (2, "id", "G0", "card 'G0' (#3): field 'id': duplicate of card #1"),
    ],
)
def test_a_malformed_card_is_refused_naming_card_and_field(
    card: int, field: str, value: Any, message: str
) -> None:
    data = default_data()
    data["cards"][card][field] = value
    with pytest.raises(DeckError) as err:
        parse_deck(data, "test.json")
    assert message in str(err.value)
    assert str(err.value).startswith("deck test.json: ")


def test_a_missing_field_is_refused() -> None:
    data = default_data()
    del data["cards"][7]["value"]
    with pytest.raises(DeckError, match=r"card 'R0' \(#8\): field 'value'"):
        parse_deck(data, "test.json")


def test_deck_level_refusals() -> None:
    data = default_data()
    data["cards"].pop()
    with pytest.raises(DeckError, match="has 17 cards; the game needs 18"):
        parse_deck(data)
    data = default_data()
    data["cards"][16]["special"] = "abduction"  # the Eye turned into a second Abduction
    with pytest.raises(DeckError, match=r"card 'EYE'.*field 'special': a second Abduction"):
        parse_deck(data)
    with pytest.raises(DeckError, match="JSON object"):
        parse_deck([1, 2, 3])
    with pytest.raises(DeckError, match="unknown field"):
        parse_deck({**default_data(), "extra": 1})
    with pytest.raises(DeckError, match="#2: must be an object"):
        parse_deck({"cards": [default_data()["cards"][0], "G6"]})


def test_a_deck_file_by_path_is_loaded_and_refused_at_game_start(tmp_path: Path) -> None:
    data = default_data()
    # A variant: every value shifted down by one where it can be (a host's house deck).
    for card in data["cards"]:
        card["value"] = max(0, card["value"] - 1)
    good = tmp_path / "variant.json"
    good.write_text(json.dumps(data))
    state = GAME.new_game(2, seed=4, options={"deck_file": str(good)})
    assert {c["id"]: c["value"] for c in state.view(0)["cards"]}["A7"] == 6
    assert state.view(0)["options"]["deck_file"] == str(good)

    bad = tmp_path / "bad.json"
    data["cards"][4]["back"] = "Z"
    bad.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"card 'I2' \(#5\): field 'back'"):
        GAME.new_game(2, seed=4, options={"deck_file": str(bad)})
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        GAME.new_game(2, seed=4, options={"deck_file": str(broken)})
    with pytest.raises(ValueError, match="no bundled deck of that name"):
        GAME.new_game(2, seed=4, options={"deck_file": "no-such-deck"})


def play_out(state: Any, seed: int) -> int:
    chooser = random.Random(seed)
    decisions = 0
    while not state.is_over():
        seat = chooser.choice(state.waiting_for())
        legal = state.legal_actions(seat)
        # The state's own action table follows its deck's card ids.
        assert [state.action_table.action(i) for i in state.legal_action_indices(seat)] == legal
        state.apply(seat, chooser.choice(legal))
        decisions += 1
    return decisions


def test_a_deck_with_other_ids_and_no_specials_plays_to_the_end(tmp_path: Path) -> None:
    data = default_data()
    for n, card in enumerate(data["cards"]):
        card["id"] = f"X{n}"
        card.pop("special", None)
        card.pop("name", None)
        if not card["front"]:
            card["front"] = ["G"]
    path = tmp_path / "plain.json"
    path.write_text(json.dumps(data))
    for seed in range(20):
        state = GAME.new_game(2, seed=seed, options={"deck_file": str(path)})
        default = GAME.new_game(2, seed=seed)
        for game_state in (state, default, state):  # alternate decks through determinize
            view = game_state.view(seed % 2)
            assert GAME.determinize(view, Rng(seed)).view(seed % 2) == view
        play_out(state, seed)
        assert state.phase == "over"
        types = {e["type"] for e in state.view(None)["log"]}
        assert not types & {"abduct", "reveal_gnome", "pass"}  # no special card, no special turn
        again = GAME.from_json(state.to_json())
        assert again.view(0) == state.view(0)


OPTION_ERRORS = [
    ({"face_up_slots": [0]}, "face_up_slots"),
    ({"face_up_slots": [7]}, "face_up_slots"),
    ({"face_up_slots": [4, 4]}, "twice"),
    ({"face_up_slots": "456"}, "face_up_slots"),
    ({"face_up_slots": [True]}, "face_up_slots"),
    ({"sequence_any_order": 1}, "sequence_any_order"),
    ({"head_to_head_ties_score_both": "yes"}, "head_to_head_ties_score_both"),
    ({"deck_file": 3}, "deck_file"),
    ({"deck_file": ""}, "deck_file"),
    ({"first_player": 0}, "unknown option"),
]


@pytest.mark.parametrize(("options", "message"), OPTION_ERRORS)
def test_bad_options_are_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GAME.new_game(2, seed=1, options=options)


def test_default_options_and_their_view() -> None:
    assert GAME.default_options() == {
        "deck_file": None,
        "face_up_slots": [4, 5, 6],
        "sequence_any_order": False,
        "head_to_head_ties_score_both": False,
    }
    state = GAME.new_game(2, seed=1, options={"face_up_slots": [6, 4]})
    assert state.view(None)["options"]["face_up_slots"] == [4, 6]
    assert GAME.action_table.size == 18 + 36 + 18 + 6 + 6 + 1 + 18


def test_the_rules_doc_deck_table_matches_the_bundled_deck() -> None:
    doc = Path(__file__).resolve().parents[3] / "docs" / "rules" / "conspiranoicos.md"
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in doc.read_text("utf-8").splitlines()
        if line.startswith("| ") and len(line.split("|")) == 7
    ]
    table = {r[0]: r[1:] for r in rows if r[0] in DEFAULT.index}
    assert len(table) == 18
    for card in DEFAULT.cards:
        value, front, back, challenge = table[card.id]
        assert int(value) == card.value
        assert front.split() == (list(card.front) or ["—"])
        assert back == card.back
        assert challenge == card.challenge_text


def test_file_options_offer_the_bundled_decks_for_deck_file_only() -> None:
    # A server accepts only these names for deck_file; a path stays for the library and the CLI.
    assert GAME.file_options() == {"deck_file": bundled_decks()}
    assert "default" in GAME.file_options()["deck_file"]
