"""Conspiranoicos rules, phase by phase, on stacked decks: plays, challenges, sends, draws, the Final
Challenge, the Pyramid, Abduction, Gnome Revelation (with the warning clause), rows and views."""

from __future__ import annotations

import functools
import json
import operator
from typing import Any

import pytest

from conflictology import IllegalAction
from conflictology.engine import Rng
from conflictology.games.conspiranoicos import GAME, ConspiranoicosState, pyramid, rules
from conflictology.games.conspiranoicos.cards import load_deck
from conflictology.games.conspiranoicos.options import Options
from conflictology.games.conspiranoicos.state import State

ALL = [
    "G0",
    "G6",
    "A1",
    "A7",
    "I2",
    "I6",
    "I7",
    "R0",
    "R3",
    "R4",
    "GA4",
    "GI2",
    "GR5",
    "AI3",
    "AR4",
    "ABDUCTION",
    "EYE",
    "GNOME",
]


def stack(seat0: str, seat1: str, challenges: str = "", final: str = "") -> list[str]:
    """An 18-card stacked deck: each seat's draw deck (the first two are its opening hand), the
    challenge deck in reveal order and the Final Challenge; unnamed places take the other cards."""
    named = [seat0.split(), seat1.split(), challenges.split(), final.split()]
    rest = [c for c in ALL if c not in functools.reduce(operator.iadd, named, [])]
    sizes = [6, 6, 5, 1]
    order: list[str] = []
    for cards, size in zip(named, sizes, strict=True):
        order += cards + [rest.pop(0) for _ in range(size - len(cards))]
    assert sorted(order) == sorted(ALL)
    return order


def new(deck: list[str], options: dict[str, Any] | None = None, seed: int = 1) -> ConspiranoicosState:
    return GAME.new_game(2, seed=seed, options=options, deck=deck)


def act(state: ConspiranoicosState, seat: int, kind: str, **fields: Any) -> None:
    state.apply(seat, {"type": kind, **fields})


def at_round_6(
    zone0: str,
    zone1: str,
    pyramid: str,
    hand0: str,
    hand1: str,
    final: str,
    options: dict[str, Any] | None = None,
) -> ConspiranoicosState:
    """A game at the start of round 6 (the Final Challenge), through a saved game's JSON."""
    data = GAME.new_game(2, seed=5, options=options).to_dict()
    data.update(
        round=6,
        phase="play",
        hands=[hand0.split(), hand1.split()],
        draws=[[], []],
        challenge_deck=[],
        final=final,
        final_revealed=False,
        challenge=None,
        plays=[None, None],
        remaining=[],
        moves=[],
        winner=-1,
        decided="",
        sent_to="",
        zones=[zone0.split(), zone1.split()],
        pyramid=pyramid.split(),
        gnome_slot=-1,
        gained=[],
        swaps=[],
        holder=-1,
        rows=[[], []],
        final_winner=-1,
        log=[],
    )
    return GAME.from_json(json.dumps(data))


def log_types(state: ConspiranoicosState, seat: int | None) -> list[str]:
    return [e["type"] for e in state.view(seat)["log"]]


# ---------------------------------------------------------------- setup
def test_the_stacked_deck_deals_as_the_contract_says() -> None:
    deck = stack("A7 I2 G0 G6 A1 I6", "R0 R3 GA4 GI2 GR5 AI3", "R4 AR4 I7 ABDUCTION EYE", "GNOME")
    state = new(deck)
    v0, v1, spectator = state.view(0), state.view(1), state.view(None)
    assert v0["players"][0]["hand"] == ["A7", "I2"]
    assert v0["players"][1]["hand"] == ["R", "R"]  # the opponent's hand as backs (R0, R3)
    assert v1["players"][1]["hand"] == ["R0", "R3"]
    assert spectator["players"][0]["hand"] == ["A", "I"]
    assert [p["draw"] for p in v0["players"]] == [4, 4]
    assert v0["round"] == 1 and v0["challenge"] == "R4" and v0["challenge_deck"] == 4
    assert v0["final_challenge"] is None and v0["pyramid"] == [None] * 6
    assert state.where()["final"] == [ALL.index("GNOME")]
    assert state.waiting_for() == [0, 1]
    assert {a["card"] for a in state.legal_actions(0)} == {"A7", "I2"}
    # The opening hands are private log entries.
    assert next(e for e in v0["log"] if e["type"] == "opening_hand")["cards"] == ["A7", "I2"]
    assert "opening_hand" not in log_types(state, None)
    assert [e["seat"] for e in v1["log"] if e["type"] == "opening_hand"] == [1]


def test_a_bad_stacked_deck_is_refused() -> None:
    good = stack("", "")
    with pytest.raises(ValueError, match="permutation"):
        new(good[:17])
    with pytest.raises(ValueError, match="permutation"):
        new([*good[:17], good[0]])
    with pytest.raises(ValueError):
        GAME.new_game(3, seed=1)


# ---------------------------------------------------------------- Collect Evidence
def test_plays_are_simultaneous_and_hidden_until_both_are_in() -> None:
    state = new(stack("A7 I2 G0 G6 A1 I6", "R0 R3 GA4 GI2 GR5 AI3", "R4 AR4 I7 ABDUCTION EYE", "GNOME"))
    act(state, 1, "play", card="R3")
    assert state.waiting_for() == [0]
    assert state.view(0)["table"]["plays"] == [None, "R"]  # only the back of seat 1's card
    assert state.view(None)["table"]["plays"] == [None, "R"]
    assert state.view(1)["table"]["plays"] == [None, "R3"]
    assert state.view(0)["players"][1]["hand"] == ["R"]
    assert state.legal_actions(1) == []
    with pytest.raises(IllegalAction):
        act(state, 1, "play", card="R0")  # a submitted play cannot be taken back or doubled
    assert state.view(0)["pending"] == {
        "phase": "play",
        "awaiting": [0],
        "submitted": [False, True],
        "final_challenge": False,
    }
    act(state, 0, "play", card="A7")
    # R4: "front shows its own back's faction": A7 (A/A) and R3 (R/R) both meet it, so the value
    # closest to R4's 4 wins: R3 (1 away) against A7 (3 away).
    table = state.view(0)["table"]
    assert table["plays"] == ["A7", "R3"] and table["revealed"]
    assert table["winner"] == 1 and table["decided_by"] == "closeness"
    assert state.waiting_for() == [1]
    assert [a for a in state.legal_actions(1) if a["card"] == "R4"] == [
        {"type": "send", "card": "R4", "to": "zone"},
        {"type": "send", "card": "R4", "to": "pyramid"},
    ]
    assert len(state.legal_actions(1)) == 6


def test_winner_sends_to_the_pyramid_loser_keeps_last_card_to_winners_zone() -> None:
    state = new(stack("A7 I2 G0 G6 A1 I6", "R0 R3 GA4 GI2 GR5 AI3", "R4 AR4 I7 ABDUCTION EYE", "GNOME"))
    act(state, 1, "play", card="R3")
    act(state, 0, "play", card="A7")
    act(state, 1, "send", card="R4", to="pyramid")  # the winner may take the challenge card
    assert state.waiting_for() == [0]
    assert state.legal_actions(0) == [{"type": "keep", "card": "A7"}, {"type": "keep", "card": "R3"}]
    with pytest.raises(IllegalAction):
        act(state, 0, "keep", card="R4")  # already sent
    act(state, 0, "keep", card="R3")  # the loser may keep the winner's card
    view = state.view(0)
    assert view["players"][0]["zone"] == ["R3"]
    assert view["players"][1]["zone"] == ["A7"]  # the winner sent to the Pyramid: the rest is theirs
    assert view["pyramid"][0] == {
        "slot": 1,
        "back": "G",
        "face_up": False,
        "card": None,
        "seen": "R4",
        "shows": None,
    }
    # Draws: both draw one; round 2 reveals the next challenge.
    assert view["round"] == 2 and view["challenge"] == "AR4"
    assert view["players"][0]["hand"] == ["I2", "G0"] and view["players"][1]["hand"] == ["R", "A"]
    assert [p["draw"] for p in view["players"]] == [3, 3]
    drew = [e for e in view["log"] if e["type"] == "drew"]
    assert [(e["seat"], e["card"]) for e in drew] == [(0, "G0")]  # seat 1's draw is private to it
    assert [e["text"] for e in view["log"] if e["type"] == "draw"] == [
        "Seat 0 draws a card (back G).",
        "Seat 1 draws a card (back A).",
    ]


def test_winner_sends_to_their_zone_and_the_last_card_goes_to_the_pyramid() -> None:
    state = new(stack("A7 I2 G0 G6 A1 I6", "R0 R3 GA4 GI2 GR5 AI3", "R4 AR4 I7 ABDUCTION EYE", "GNOME"))
    act(state, 1, "play", card="R3")
    act(state, 0, "play", card="A7")
    act(state, 1, "send", card="A7", to="zone")  # the opponent's card
    act(state, 0, "keep", card="R4")
    view = state.view(None)
    assert view["players"][1]["zone"] == ["A7"]
    assert view["players"][0]["zone"] == ["R4"]
    assert view["pyramid"][0]["seen"] == "R3"
    texts = [e["text"] for e in view["log"]]
    assert "Seat 1 sends A7 to their zone." in texts
    assert "The last card, R3, goes to the Pyramid (slot 1)." in texts


CHALLENGE_CASES = [
    # challenge, seat 0 plays, seat 1 plays, winner, decided by
    ("G0", "A7", "I2", 0, "challenge"),  # highest value: 7 > 2
    ("G6", "A7", "I2", 1, "challenge"),  # lowest value
    ("I2", "GA4", "R3", 0, "challenge"),  # most symbols: 2 > 1
    ("GR5", "GA4", "EYE", 1, "challenge"),  # fewest symbols: a special card has none
    ("I6", "R3", "G0", 1, "challenge"),  # shows G
    ("I6", "R3", "GNOME", 0, "closeness"),  # the Gnome Revelation does not "show G": 3 is nearer 6
    ("I6", "G6", "GA4", 0, "closeness"),  # both show G: G6 equals I6's value
    ("I7", "A1", "R0", 1, "challenge"),  # even value
    ("AI3", "A1", "R0", 0, "challenge"),  # odd value
    ("R4", "I7", "G0", 1, "challenge"),  # front shows its own back: I7 is a decoy (back R, front I)
    ("GA4", "AR4", "GR5", 0, "closeness"),  # shows R: both do; AR4 equals 4
    ("AR4", "ABDUCTION", "I2", 0, "closeness"),  # shows A: Abduction's back is A but it shows nothing
    ("R3", "I6", "I2", 0, "challenge"),  # highest value again, on another card
]


@pytest.mark.parametrize(("challenge", "p0", "p1", "winner", "how"), CHALLENGE_CASES)
def test_challenge_resolution(challenge: str, p0: str, p1: str, winner: int, how: str) -> None:
    state = new(stack(p0, p1, challenge))
    act(state, 0, "play", card=p0)
    act(state, 1, "play", card=p1)
    assert (state.winner, state.decided) == (winner, how)
    assert state.waiting_for() == [winner]
    result = [e for e in state.view(None)["log"] if e["type"] == "round_winner"]
    assert result[-1]["seat"] == winner and result[-1]["by"] == how


def test_a_persistent_tie_places_the_three_cards_at_random() -> None:
    # G0 asks for the highest value: R4 and GA4 are both 4, and both 4 away from G0's 0.
    placed_in_pyramid = set()
    for seed in range(12):
        state = new(stack("R4", "GA4", "G0"), seed=seed)
        act(state, 0, "play", card="R4")
        act(state, 1, "play", card="GA4")
        view = state.view(None)
        assert view["round"] == 2 and state.waiting_for() == [0, 1]  # nobody chooses
        zones = [p["zone"] for p in view["players"]]
        pyramid = view["pyramid"][0]["seen"]
        assert sorted([pyramid, *zones[0], *zones[1]]) == ["G0", "GA4", "R4"]
        assert len(zones[0]) == len(zones[1]) == 1
        entry = next(e for e in view["log"] if e["type"] == "random_placement")
        assert entry["pyramid"] == pyramid and entry["zones"] == [zones[0][0], zones[1][0]]
        placed_in_pyramid.add(pyramid)
        twin = new(stack("R4", "GA4", "G0"), seed=seed)
        act(twin, 0, "play", card="R4")
        act(twin, 1, "play", card="GA4")
        assert twin.to_json() == state.to_json()  # seeded
    assert placed_in_pyramid == {"G0", "GA4", "R4"}


def play_round_with_timeouts(state: ConspiranoicosState) -> None:
    start = state.round
    while state.round == start and state.phase in ("play", "send", "keep"):
        seat = state.waiting_for()[0]
        state.apply(seat, state.timeout_action(seat))


def test_draws_refill_hands_until_the_draw_decks_run_out() -> None:
    state = new(stack("", ""), seed=3)
    seen = []
    for _ in range(6):
        view = state.view(0)
        seen.append((view["round"], len(state.hands[0]), len(state.hands[1]), view["players"][0]["draw"]))
        play_round_with_timeouts(state)
    # Hands hold 2 cards in rounds 1-5 (play one, draw one), 1 in round 6 (round 5 draws nothing).
    assert seen == [(1, 2, 2, 4), (2, 2, 2, 3), (3, 2, 2, 2), (4, 2, 2, 1), (5, 2, 2, 0), (6, 1, 1, 0)]
    # Six rounds: six Pyramid cards, six cards in each zone, now taken into hand to be sorted.
    assert len(state.pyramid) == 6 and [len(h) for h in state.hands] == [6, 6]
    assert state.phase in ("abduct", "gnome", "build")


def test_the_final_challenge_stays_face_down_until_both_plays_are_in() -> None:
    state = at_round_6("G0 A1 I2 R0 GR5", "G6 A7 I6 R3 GI2", "I7 GA4 AI3 R4 ABDUCTION", "AR4", "EYE", "GNOME")
    assert state.view(0)["challenge"] is None and state.view(0)["final_challenge"] is None
    assert state.view(0)["pending"]["final_challenge"] is True
    act(state, 0, "play", card="AR4")
    assert state.view(1)["challenge"] is None
    act(state, 1, "play", card="EYE")
    view = state.view(None)
    # GNOME's value is 1: EYE (3) is 2 away, AR4 (4) is 3 away. Its printed challenge is ignored.
    assert view["challenge"] == "GNOME" and view["final_challenge"] == "GNOME"
    assert view["final_winner"] == 1 and state.waiting_for() == [1]
    assert "They score the Final Challenge point." in view["log"][-1]["text"]


def test_an_equal_final_challenge_is_placed_at_random_and_nobody_scores_it() -> None:
    # A1 and AI3 are both 1 away from I2's 2.
    state = at_round_6("G0 R3 GR5 R0 I7", "G6 A7 I6 GI2 R4", "GA4 AR4 ABDUCTION EYE GNOME", "A1", "AI3", "I2")
    act(state, 0, "play", card="A1")
    act(state, 1, "play", card="AI3")
    assert state.final_winner == -1
    assert state.view(None)["final_winner"] is None
    assert len(state.pyramid) == 6 and state.phase in ("abduct", "gnome", "build")
    assert any(e["type"] == "random_placement" for e in state.view(None)["log"])


# ---------------------------------------------------------------- the Pyramid and Sort Evidence
def to_sort_evidence(options: dict[str, Any] | None = None) -> ConspiranoicosState:
    """Seat 0 ends with Abduction and the Gnome Revelation; the Pyramid is I7 GA4 AI3 R4 GR5 AR4."""
    state = at_round_6(
        "ABDUCTION G0 A1 I2 R0", "G6 A7 I6 R3 GI2", "I7 GA4 AI3 R4 GR5", "AR4", "EYE", "GNOME", options
    )
    act(state, 0, "play", card="AR4")
    act(state, 1, "play", card="EYE")  # EYE (3) is nearer GNOME's 1 than AR4 (4): seat 1 wins
    act(state, 1, "send", card="EYE", to="zone")
    act(state, 0, "keep", card="GNOME")  # the last card, AR4, goes to Pyramid slot 6
    return state


def test_sort_evidence_turns_slots_4_to_6_face_up_and_hands_take_the_zones() -> None:
    state = to_sort_evidence()
    view = state.view(1)
    assert view["phase"] == "abduct" and view["challenge"] is None and view["round"] == 6
    assert [p["zone"] for p in view["players"]] == [[], []]
    assert view["players"][1]["hand"] == ["G6", "A7", "I6", "R3", "GI2", "EYE"]
    assert view["players"][0]["hand"] == ["A", "G", "A", "I", "R", "G"]  # backs only...
    assert view["players"][0]["evidence"] == sorted(
        ["ABDUCTION", "G0", "A1", "I2", "R0", "GNOME"], key=ALL.index
    )  # ...though every one of those cards was seen in seat 0's zone
    assert [(p["slot"], p["face_up"], p["card"]) for p in view["pyramid"]] == [
        (1, False, None),
        (2, False, None),
        (3, False, None),
        (4, True, "R4"),
        (5, True, "GR5"),
        (6, True, "AR4"),
    ]
    assert [p["shows"] for p in view["pyramid"]] == ["R", "A", "I", "R", "R", "R"]
    assert view["pyramid_symbols"] == {"T": ["R", "A", "I"], "S": "R"}  # AR4 has two fronts: back R
    assert view["pending"] == {"phase": "abduct", "awaiting": [0], "holder": 0, "slots": [1, 2, 3]}


def test_abduction_then_gnome_revelation_by_one_player() -> None:
    state = to_sort_evidence()
    assert state.legal_actions(0) == [
        {"type": "abduct", "slot": 1},
        {"type": "abduct", "slot": 2},
        {"type": "abduct", "slot": 3},
        {"type": "pass"},
    ]
    assert state.legal_actions(1) == []
    # The holder looks at the three face-down cards; the opponent does not.
    assert [p["card"] for p in state.view(0)["pyramid"][:3]] == ["I7", "GA4", "AI3"]
    assert [p["card"] for p in state.view(1)["pyramid"][:3]] == [None, None, None]
    with pytest.raises(IllegalAction):
        act(state, 0, "abduct", slot=4)  # face up: not Abduction's
    act(state, 0, "abduct", slot=2)
    view = state.view(1)
    assert view["pyramid"][1] == {
        "slot": 2,
        "back": "A",
        "face_up": False,
        "card": None,
        "seen": "ABDUCTION",
        "shows": "A",
    }
    assert view["gained"] == ["GA4"]
    assert view["swaps"] == [{"special": "abduction", "seat": 0, "slot": 2, "card": "GA4"}]
    assert "GA4" in view["players"][0]["evidence"] and "ABDUCTION" not in view["players"][0]["evidence"]
    # Then the Gnome Revelation holder (the same player) may swap it for a face-up card.
    assert view["pending"] == {"phase": "gnome", "awaiting": [0], "holder": 0, "slots": [4, 5, 6]}
    act(state, 0, "reveal_gnome", slot=6)
    view = state.view(1)
    assert view["pyramid"][5]["card"] == "GNOME" and view["pyramid"][5]["shows"] == "G"
    assert view["pyramid_symbols"] == {"T": ["R", "A", "I"], "S": "G"}
    assert view["phase"] == "build" and state.waiting_for() == [0, 1]
    assert sorted(state.hands[0]) == sorted(ALL.index(c) for c in ["G0", "A1", "I2", "R0", "GA4", "AR4"])


def test_warning_clause_a_gained_gnome_revelation_cannot_be_revealed() -> None:
    # The Gnome Revelation lies face down in slot 1; seat 0 abducts it.
    state = at_round_6("ABDUCTION G0 A1 I2 R0", "G6 A7 I6 R3 GI2", "GNOME GA4 AI3 R4 GR5", "AR4", "EYE", "I7")
    act(state, 0, "play", card="AR4")
    act(state, 1, "play", card="EYE")  # I7 (7): AR4 is 3 away, EYE 4: seat 0 wins
    act(state, 0, "send", card="I7", to="zone")
    act(state, 1, "keep", card="EYE")
    assert state.phase == "abduct"
    act(state, 0, "abduct", slot=1)
    assert state.phase == "build"  # no Gnome Revelation turn: its effect may not be used
    entry = state.view(1)["log"][-1]
    assert entry["type"] == "abduct" and "its effect may not be used" in entry["text"]


def test_passing_on_both_specials_and_an_opponent_holding_the_gnome() -> None:
    state = at_round_6("ABDUCTION G0 A1 I2 R0", "GNOME A7 I6 R3 GI2", "I7 GA4 AI3 R4 GR5", "AR4", "EYE", "G6")
    act(state, 0, "play", card="AR4")
    act(state, 1, "play", card="EYE")  # G6 (6): AR4 is 2 away, EYE 3: seat 0 wins
    act(state, 0, "send", card="G6", to="pyramid")
    act(state, 1, "keep", card="EYE")  # AR4, the last card, goes to seat 0's zone
    assert state.view(0)["pending"]["holder"] == 0
    act(state, 0, "pass")
    assert state.view(0)["pending"] == {"phase": "gnome", "awaiting": [1], "holder": 1, "slots": [4, 5, 6]}
    with pytest.raises(IllegalAction):
        act(state, 0, "pass")
    act(state, 1, "pass")
    assert state.phase == "build"
    assert [e["type"] for e in state.view(None)["log"][-2:]] == ["pass", "pass"]


def test_face_up_slots_option_changes_what_specials_may_reach() -> None:
    # Every slot face up: nothing for Abduction to reach, so the Gnome Revelation's turn comes first.
    state = to_sort_evidence({"face_up_slots": [1, 2, 3, 4, 5, 6]})
    assert state.phase == "gnome" and pyramid.gnome_slots(state) == [1, 2, 3, 4, 5, 6]
    # T reads a face-up card's single front symbol: I7 shows I, GA4 (two) its back A, AI3 its back I.
    assert state.view(0)["pyramid_symbols"]["T"] == ["I", "A", "I"]
    state = to_sort_evidence({"face_up_slots": []})
    act(state, 0, "abduct", slot=6)
    assert state.phase == "build"  # no face-up card for the Gnome Revelation


def test_rows_are_built_card_by_card_and_revealed_together() -> None:
    state = to_sort_evidence()
    act(state, 0, "pass")
    act(state, 0, "pass")
    assert state.phase == "build"
    act(state, 1, "place", card="EYE")
    assert state.view(0)["players"][1]["row"] == 1  # only how many
    assert state.view(1)["players"][1]["row"] == ["EYE"]
    assert state.view(None)["players"][1]["row"] == 1
    with pytest.raises(IllegalAction):
        act(state, 1, "place", card="EYE")
    for card in ["G6", "A7", "I6", "R3", "GI2"]:
        act(state, 1, "place", card=card)
    assert state.waiting_for() == [0] and state.view(0)["players"][1]["row"] == 6
    for card in ["GNOME", "ABDUCTION", "G0", "A1", "I2", "R0"]:
        act(state, 0, "place", card=card)
    assert state.is_over() and state.waiting_for() == []
    view = state.view(None)
    assert view["players"][1]["row"] == ["EYE", "G6", "A7", "I6", "R3", "GI2"]
    assert view["players"][0]["row"] == ["GNOME", "ABDUCTION", "G0", "A1", "I2", "R0"]
    assert view["scores"] == state.scores() and view["winners"] == state.winners()
    assert len(view["score_detail"]["criteria"]) == 6
    assert view["pending"] is None
    assert view["log"][-1]["type"] == "result" and view["log"][-2]["type"] == "rows"


def test_placing_a_card_tells_the_opponent_only_how_many() -> None:
    """Rulings "Sort Evidence": until both rows are complete the opponent sees only how many cards each
    has placed. Backs of the hand beside the public evidence would tell which card went down."""
    views = {}
    for card in ["EYE", "G6", "R3"]:  # three different backs (G, G, R): any of them, the same views
        state = to_sort_evidence()
        act(state, 0, "pass")
        act(state, 0, "pass")
        before = state.view(0)["players"][1]
        assert before["hand"] == 6 and before["row"] == 0
        act(state, 1, "place", card=card)
        views[card] = (state.view(0), state.view(None))
        them = views[card][0]["players"][1]
        assert them["hand"] == 5 and them["row"] == 1
        assert them["evidence"] == before["evidence"]  # listed in deck order: placing changes nothing
        held = [c for c in ["G6", "A7", "I6", "R3", "GI2", "EYE"] if c != card]
        assert state.view(1)["players"][1]["hand"] == held
    assert views["EYE"] == views["G6"] == views["R3"]


def test_determinize_draws_the_opponents_row_and_hand_from_its_evidence() -> None:
    state = to_sort_evidence()
    act(state, 0, "pass")
    act(state, 0, "pass")
    for card in ["EYE", "G6"]:
        act(state, 1, "place", card=card)
    view = state.view(0)
    rows = set()
    for k in range(30):
        world = GAME.determinize(view, Rng(k))
        assert world.view(0) == view and world.legal_actions(0) == state.legal_actions(0)
        row, hand = world.view(1)["players"][1]["row"], world.view(1)["players"][1]["hand"]
        assert len(row) == 2 and sorted(row + hand, key=ALL.index) == view["players"][1]["evidence"]
        rows.add(tuple(row))
    assert len(rows) > 5  # any two of the six, in either order: the real one is not singled out


@pytest.mark.parametrize("seat", [True, False, 1.0, "0", None])
def test_a_bool_or_non_int_is_not_a_seat(seat: Any) -> None:
    state = new(stack("A7 I2", "R0 R3", "R4"))
    assert state.legal_actions(seat) == []
    with pytest.raises(IllegalAction):
        state.apply(seat, {"type": "play", "card": "A7"})
    if seat is not None:  # None is the spectator's view
        with pytest.raises(ValueError):
            state.view(seat)
        with pytest.raises(IllegalAction):
            state.timeout_action(seat)
    with pytest.raises(ValueError):
        state.view(2)


def test_timeout_actions() -> None:
    state = new(stack("A7 I2", "R0 R3", "R4"))
    assert state.timeout_action(0) == {"type": "play", "card": "A7"}
    act(state, 0, "play", card="A7")
    with pytest.raises(IllegalAction):
        state.timeout_action(0)
    act(state, 1, "play", card="R3")
    assert state.timeout_action(1) == {"type": "send", "card": "R3", "to": "zone"}
    act(state, 1, "send", card="R3", to="zone")
    assert state.timeout_action(0) == {"type": "keep", "card": "A7"}
    special = to_sort_evidence()
    assert special.timeout_action(0) == {"type": "pass"}


def test_illegal_actions_say_why_and_change_nothing() -> None:
    state = new(stack("A7 I2", "R0 R3", "R4"))
    before = state.to_json()
    attempts: list[tuple[int, dict[str, Any], str]] = [
        (0, {"type": "play", "card": "R0"}, "not in their hand"),
        (0, {"type": "send", "card": "A7", "to": "zone"}, "not an action now"),
        (0, {"type": "play"}, "exactly the fields"),
        (0, {"type": "play", "card": "XX"}, "card id"),
        (2, {"type": "play", "card": "A7"}, "no such seat"),
        (0, {"type": ["play"]}, "not an action now"),
        (0, {"type": "play", "card": ["A7"]}, "card id"),
        (0, {"type": "play", "card": "A7", "extra": 1}, "exactly the fields"),
    ]
    for seat, action, message in attempts:
        with pytest.raises(IllegalAction, match=message):
            state.apply(seat, action)
        assert state.to_json() == before


# ---------------------------------------------------------------- a whole game, move by move
GOLDEN_DECK = [
    *["I2", "R3", "AR4", "EYE", "I6", "A7"],  # seat 0's draw deck, in the order it plays them
    *["A1", "G6", "GNOME", "R4", "ABDUCTION", "GR5"],  # seat 1's
    *["I7", "GA4", "AI3", "G0", "R0"],  # the challenge deck
    "GI2",  # the Final Challenge
]
GOLDEN_MOVES: list[tuple[int, str, dict[str, Any]]] = [
    (0, "play", {"card": "I2"}),
    (1, "play", {"card": "A1"}),  # I7: even value
    (0, "send", {"card": "I7", "to": "pyramid"}),
    (1, "keep", {"card": "A1"}),
    (1, "play", {"card": "G6"}),
    (0, "play", {"card": "R3"}),  # GA4: shows R
    (0, "send", {"card": "GA4", "to": "pyramid"}),
    (1, "keep", {"card": "G6"}),
    (0, "play", {"card": "AR4"}),
    (1, "play", {"card": "GNOME"}),  # AI3: odd value
    (1, "send", {"card": "GNOME", "to": "zone"}),
    (0, "keep", {"card": "AR4"}),
    (0, "play", {"card": "EYE"}),
    (1, "play", {"card": "R4"}),  # G0: highest value
    (1, "send", {"card": "R4", "to": "zone"}),
    (0, "keep", {"card": "EYE"}),
    (0, "play", {"card": "I6"}),
    (1, "play", {"card": "ABDUCTION"}),  # R0: shows I
    (0, "send", {"card": "R0", "to": "pyramid"}),
    (1, "keep", {"card": "ABDUCTION"}),
    (0, "play", {"card": "A7"}),
    (1, "play", {"card": "GR5"}),  # the Final Challenge: GI2 (2)
    (1, "send", {"card": "GR5", "to": "pyramid"}),
    (0, "keep", {"card": "A7"}),
    (1, "pass", {}),
    (1, "pass", {}),  # seat 1 holds Abduction and the Gnome Revelation
    *[(0, "place", {"card": c}) for c in ["I2", "R3", "EYE", "AR4", "I6", "A7"]],
    *[(1, "place", {"card": c}) for c in ["G6", "ABDUCTION", "R4", "A1", "GNOME", "GI2"]],
]
GOLDEN_LOG = [
    "Each player draws two cards from their own draw deck.",
    "Round 1: the challenge card is I7 (Even value, value 7).",
    "Seat 0 submits a card (back I).",
    "Seat 1 submits a card (back A).",
    "Revealed: Seat 0 plays I2, Seat 1 plays A1.",
    "Seat 0 wins the round: Even value: only I2 meets it.",
    "Seat 0 sends I7 to the Pyramid (slot 1).",
    "Seat 1 keeps A1 in their zone.",
    "The last card, I2, goes to Seat 0's zone.",
    "Seat 0 draws a card (back R).",
    "Seat 1 draws a card (back G).",
    "Round 2: the challenge card is GA4 (Shows Reptilians (R), value 4).",
    "Seat 1 submits a card (back G).",
    "Seat 0 submits a card (back R).",
    "Revealed: Seat 0 plays R3, Seat 1 plays G6.",
    "Seat 0 wins the round: Shows Reptilians (R): only R3 meets it.",
    "Seat 0 sends GA4 to the Pyramid (slot 2).",
    "Seat 1 keeps G6 in their zone.",
    "The last card, R3, goes to Seat 0's zone.",
    "Seat 0 draws a card (back I).",
    "Seat 1 draws a card (back G).",
    "Round 3: the challenge card is AI3 (Odd value, value 3).",
    "Seat 0 submits a card (back R).",
    "Seat 1 submits a card (back G).",
    "Revealed: Seat 0 plays AR4, Seat 1 plays GNOME.",
    "Seat 1 wins the round: Odd value: only GNOME meets it.",
    "Seat 1 sends GNOME to their zone.",
    "Seat 0 keeps AR4 in their zone.",
    "The last card, AI3, goes to the Pyramid (slot 3).",
    "Seat 0 draws a card (back I).",
    "Seat 1 draws a card (back A).",
    "Round 4: the challenge card is G0 (Highest value, value 0).",
    "Seat 0 submits a card (back I).",
    "Seat 1 submits a card (back G).",
    "Revealed: Seat 0 plays EYE, Seat 1 plays R4.",
    "Seat 1 wins the round: Highest value (3 against 4).",
    "Seat 1 sends R4 to their zone.",
    "Seat 0 keeps EYE in their zone.",
    "The last card, G0, goes to the Pyramid (slot 4).",
    "Seat 0 draws a card (back A).",
    "Seat 1 draws a card (back R).",
    "Round 5: the challenge card is R0 (Shows Illuminati (I), value 0).",
    "Seat 0 submits a card (back I).",
    "Seat 1 submits a card (back A).",
    "Revealed: Seat 0 plays I6, Seat 1 plays ABDUCTION.",
    "Seat 0 wins the round: Shows Illuminati (I): only I6 meets it.",
    "Seat 0 sends R0 to the Pyramid (slot 5).",
    "Seat 1 keeps ABDUCTION in their zone.",
    "The last card, I6, goes to Seat 0's zone.",
    "Round 6: the Final Challenge, face down; the value closest to it wins.",
    "Seat 0 submits a card (back A).",
    "Seat 1 submits a card (back R).",
    "Revealed: Seat 0 plays A7, Seat 1 plays GR5; the Final Challenge is GI2 (value 2).",
    "Seat 1 wins the round: GR5 is closer to 2 (3 against 5). They score the Final Challenge point.",
    "Seat 1 sends GR5 to the Pyramid (slot 6).",
    "Seat 0 keeps A7 in their zone.",
    "The last card, GI2, goes to Seat 1's zone.",
    "Sort Evidence: each player takes the cards of their zone into hand; "
    "Pyramid slot(s) 4, 5, 6 turn face up (G0, R0, GR5).",
    "Seat 1 does not use Abduction.",
    "Seat 1 does not use Gnome Revelation.",
    "Seat 0 places a card in their row (1).",
    "Seat 0 places a card in their row (2).",
    "Seat 0 places a card in their row (3).",
    "Seat 0 places a card in their row (4).",
    "Seat 0 places a card in their row (5).",
    "Seat 0 places a card in their row (6).",
    "Seat 1 places a card in their row (1).",
    "Seat 1 places a card in their row (2).",
    "Seat 1 places a card in their row (3).",
    "Seat 1 places a card in their row (4).",
    "Seat 1 places a card in their row (5).",
    "Seat 1 places a card in their row (6).",
    "Both rows are revealed: Seat 0: I2 R3 EYE AR4 I6 A7; Seat 1: G6 ABDUCTION R4 A1 GNOME GI2.",
    "Scores: Seat 0 12, Seat 1 2. Seat 0 wins (on points).",
]


def test_a_whole_game_replayed_move_by_move_gives_the_recorded_log() -> None:
    """The rulings' worked example, reached by playing: Pyramid I7 GA4 AI3 G0 R0 GR5, rows scoring
    12 and 2, seat 1 winning the Final Challenge. The public log is the recorded one, line by line."""
    state = new(GOLDEN_DECK, seed=11)
    for seat, kind, fields in GOLDEN_MOVES:
        act(state, seat, kind, **fields)
    view = state.view(None)
    assert [e["text"] for e in view["log"]] == GOLDEN_LOG
    assert [slot["seen"] for slot in view["pyramid"]] == ["I7", "GA4", "AI3", "G0", "R0", "GR5"]
    assert view["final_winner"] == 1
    assert state.scores() == [12, 2] and state.winners() == [0]
    # The same moves on a fresh game, saved and reloaded at every step, end in the same place.
    replay = new(GOLDEN_DECK, seed=11)
    for seat, kind, fields in GOLDEN_MOVES:
        replay = GAME.from_json(replay.to_json())
        act(replay, seat, kind, **fields)
    assert replay.to_json() == state.to_json()


# ---------------------------------------------------------------- rules.py as functions over a state
def test_the_rules_play_a_bare_state_as_the_game_does() -> None:
    # The rules need only the fields (state.State): the GameState is a thin layer over them.
    deck = load_deck(None)
    order = [deck.index[c] for c in stack("", "")]
    bare = rules.deal(State, deck, Options(None), order, Rng(7))
    game = GAME.new_game(2, seed=7, deck=stack("", ""))
    assert type(bare) is State and bare.to_json() == game.to_json()
    while rules.waiting_for(bare):
        seat = rules.waiting_for(bare)[0]
        assert rules.legal_actions(bare, seat) == game.legal_actions(seat)
        action = rules.timeout_action(bare, seat)
        rules.apply(bare, seat, action)
        game.apply(seat, action)
        assert bare.to_json() == game.to_json()
    assert game.is_over() and bare.result is not None and list(bare.result.totals) == game.scores()


def test_an_illegal_action_names_what_the_phase_awaits_and_changes_nothing() -> None:
    state = new(stack("", ""))
    before = state.to_json()
    with pytest.raises(IllegalAction, match=r"'place' is not an action now; the game awaits play"):
        rules.apply(state, 0, {"type": "place", "card": "G0"})
    with pytest.raises(IllegalAction, match="exactly the fields card, type"):
        rules.apply(state, 0, {"type": "play"})
    assert state.to_json() == before
    assert rules.action_table_for(state.deck).size == 103
