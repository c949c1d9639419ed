"""Conspiranoicos scoring: hand-worked rows for every criterion and tie-break, and brute force.

Each example builds a finished game (a Pyramid and two rows that use the 18 cards of the default
deck once each) and states the expected points with the reason. Card values and symbols, for
working by hand: G0 0 G · G6 6 G · A1 1 A · A7 7 A · I2 2 I · I6 6 I · I7 7 I (back R) · R0 0 R ·
R3 3 R · R4 4 R (back G) · GA4 4 GA (back A) · GI2 2 GI (back G) · GR5 5 GR (back R) ·
AI3 3 AI (back I) · AR4 4 AR (back R) · ABDUCTION 5 (back A) · EYE 3 (back I) · GNOME 1 (back G).
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Sequence
from typing import Any

import pytest

from conflictology.games.conspiranoicos import GAME, ConspiranoicosState, scoring

CRITERIA = [key for key, _ in scoring.CRITERIA]


def finished(
    pyramid: str,
    row0: str,
    row1: str,
    final_winner: int | None = None,
    options: dict[str, Any] | None = None,
    swaps: Sequence[tuple[str, int, int, str, str]] = (),
) -> ConspiranoicosState:
    """A game at its end with this Pyramid (slots 1–6) and rows, through a saved game's JSON.

    ``swaps``: (special, seat, slot, special card id, card taken) as Sort Evidence left them.
    """
    data = GAME.new_game(2, seed=1, options=options).to_dict()
    cards = pyramid.split() + row0.split() + row1.split()
    assert sorted(cards) == sorted(c["id"] for c in data["deck"]["cards"]), "use each of the 18 cards once"
    data.update(
        phase="over",
        round=6,
        hands=[[], []],
        draws=[[], []],
        challenge_deck=[],
        final=pyramid.split()[0],
        final_revealed=True,
        challenge=None,
        plays=[None, None],
        remaining=[],
        moves=[],
        winner=-1,
        zones=[[], []],
        pyramid=pyramid.split(),
        rows=[row0.split(), row1.split()],
        final_winner=-1 if final_winner is None else final_winner,
        gained=[s[4] for s in swaps],
        swaps=[list(s) for s in swaps],
        gnome_slot=next((s[2] - 1 for s in swaps if s[0] == "gnome_revelation"), -1),
        holder=-1,
    )
    return GAME.from_json(json.dumps(data))


def points(state: ConspiranoicosState) -> dict[str, list[int]]:
    detail = state.view(None)["score_detail"]
    return {c["criterion"]: c["points"] for c in detail["criteria"]}


def measures(state: ConspiranoicosState) -> dict[str, list[Any]]:
    detail = state.view(None)["score_detail"]
    return {c["criterion"]: c["measure"] for c in detail["criteria"]}


# The rulings' worked example: Pyramid I7 GA4 AI3 G0 R0 GR5, seat 1 won the Final Challenge.
WORKED_PYRAMID = "I7 GA4 AI3 G0 R0 GR5"


def test_rulings_worked_example_scores_12_and_2() -> None:
    state = finished(WORKED_PYRAMID, "I2 R3 EYE AR4 I6 A7", "G6 ABDUCTION R4 A1 GNOME GI2", final_winner=1)
    view = state.view(None)
    # T = the backs of slots 1–3: I7 (R), GA4 (A), AI3 (I); S = GR5 on top has two fronts: its back R.
    assert view["pyramid_symbols"] == {"T": ["R", "A", "I"], "S": "R"}
    assert points(state) == {
        "final": [0, 1],
        "sequence": [1, 1],  # 2-3-(3)-4 and 6-5-4: both 3 long, nobody strictly longest
        "run": [2, 0],  # R3 EYE(=S=R) AR4: a run of 3 R; seat 1 has none
        "triple": [3, 0],  # EYE AR4 I6 read R, A, I: once, strictly more than 0
        "pairs": [3, 0],  # R×3, A×2, I×2 -> 3 pairs against 0: 2, ahead by 3: +1
        "majority": [3, 0],  # R: R3 EYE AR4 = 3 against R4 = 1: 2, ahead by 2: +1
    }
    assert state.scores() == [12, 2]
    assert state.winners() == [0]
    assert view["score_detail"]["decided_by"] == "points"
    assert view["scores"] == [12, 2] and view["winners"] == [0]


def test_sequence_falling_skips_repeats_and_strictly_longest() -> None:
    # Seat 0: 7-6-5-4-3-2 falls by one each step: 6 long. Seat 1: 6, 4, 1, (1 skipped), 2, 3: 1-2-3.
    state = finished(WORKED_PYRAMID, "A7 I6 ABDUCTION AR4 R3 I2", "G6 R4 A1 GNOME GI2 EYE")
    assert measures(state)["sequence"] == [6, 3]
    assert points(state)["sequence"] == [2, 1]  # both >= 3; seat 0 strictly longest +1


def test_sequence_in_any_order_is_an_option() -> None:
    # Seat 1's values 6, 1, 4, 2, 1, 3: in row order no two-step stretch goes beyond 2-1 (length 2);
    # as a set {1, 2, 3, 4, 6} holds 1-2-3-4.
    rows = ("A7 I6 ABDUCTION AR4 R3 I2", "G6 A1 R4 GI2 GNOME EYE")
    in_order = finished(WORKED_PYRAMID, *rows)
    assert measures(in_order)["sequence"] == [6, 2]
    assert points(in_order)["sequence"] == [2, 0]
    any_order = finished(WORKED_PYRAMID, *rows, options={"sequence_any_order": True})
    assert measures(any_order)["sequence"] == [6, 4]
    assert points(any_order)["sequence"] == [2, 1]


def test_equal_longest_sequences_score_both_only_with_the_option() -> None:
    # Worked example: both sequences are 3 long.
    rows = ("I2 R3 EYE AR4 I6 A7", "G6 ABDUCTION R4 A1 GNOME GI2")
    assert points(finished(WORKED_PYRAMID, *rows))["sequence"] == [1, 1]
    both = finished(WORKED_PYRAMID, *rows, options={"head_to_head_ties_score_both": True})
    assert points(both)["sequence"] == [2, 2]
    # The option does not touch awards nobody earned: run is 3 against 1, pairs 3 against 0.
    assert points(both)["run"] == [2, 0]


def test_symbol_run_uses_either_symbol_of_two_symbol_cards() -> None:
    # Pyramid T = R A I, S = R. Seat 0: A7 AR4 R3 R4 EYE ...: R runs AR4 R3 R4 EYE(=R) = 4 long (AR4
    # carries R; A7 before it carries A only). Seat 1: GI2 I2 I6 = 3 I in a row (GI2 carries I).
    state = finished(WORKED_PYRAMID, "A7 AR4 R3 R4 EYE A1", "G6 GI2 I2 I6 ABDUCTION GNOME")
    assert measures(state)["run"] == [4, 3]
    assert points(state)["run"] == [2, 1]  # both >= 3; seat 0 strictly longest


def test_pyramid_triple_counts_non_overlapping_occurrences() -> None:
    # T = R A I. Seat 0: R3 A7 I2 R4 A1 I6 reads R A I R A I: twice. Seat 1: EYE(=R) AR4 GI2 read
    # R, A, I (AR4 read A alone, GI2 read I alone): once.
    state = finished(WORKED_PYRAMID, "R3 A7 I2 R4 A1 I6", "EYE AR4 GI2 G6 ABDUCTION GNOME")
    assert measures(state)["triple"] == [2, 1]
    assert points(state)["triple"] == [3, 2]  # both have it: 2 each; seat 0 more times: +1
    # The other criteria of this example, by hand: pairs R2 A2 I2 = 3 against R2 (EYE, AR4) = 1,
    # ahead by 2; majority of R 2 against 2: nobody; no sequence or run reaches 3.
    assert points(state)["pairs"] == [3, 0]
    assert points(state)["majority"] == [0, 0]
    assert state.scores() == [6, 2]


def test_one_two_symbol_card_may_supply_two_symbols_of_the_triple() -> None:
    # T = R A I: AR4 read (R, A) then I6 gives R A I in two cards; a card with no symbol breaks it.
    state = finished(WORKED_PYRAMID, "G6 AR4 I6 A1 ABDUCTION I2", "R3 GNOME A7 EYE GI2 R4")
    assert measures(state)["triple"] == [1, 0]  # seat 1: R3, then GNOME breaks before A7
    assert points(state)["triple"] == [3, 0]


def test_pairs_two_points_for_more_and_one_more_when_ahead_by_two() -> None:
    # Pyramid G0 G6 GNOME R0 R3 I6: T = G G G (pairs count G only), S = I6 face up on top: I.
    pyramid = "G0 G6 GNOME R0 R3 I6"
    # Seat 0: G on GA4 and GR5 = 1 pair; seat 1: GI2 only = 0 pairs. Ahead by 1: 2 points, no +1.
    state = finished(pyramid, "GA4 I2 GR5 A7 EYE AR4", "GI2 I7 A1 R4 AI3 ABDUCTION")
    assert state.view(None)["pyramid_symbols"] == {"T": ["G", "G", "G"], "S": "I"}
    assert measures(state)["pairs"] == [1, 0]
    assert points(state)["pairs"] == [2, 0]


def test_majority_of_s_two_points_and_one_more_when_ahead_by_two() -> None:
    pyramid = "G0 G6 GNOME R0 R3 I6"  # S = I
    # Seat 0 carries I on I2 and EYE (= S); seat 1 on GI2, I7, AI3: 3 against 2, ahead by 1.
    state = finished(pyramid, "GA4 I2 GR5 A7 EYE AR4", "GI2 I7 A1 R4 AI3 ABDUCTION")
    assert measures(state)["majority"] == [2, 3]
    assert points(state)["majority"] == [0, 2]
    # Move the Eye to seat 1: I2 alone against GI2, I7, AI3, EYE: 1 against 4, ahead by 3.
    state = finished(pyramid, "GA4 I2 GR5 A7 ABDUCTION AR4", "GI2 I7 A1 R4 AI3 EYE")
    assert measures(state)["majority"] == [1, 4]
    assert points(state)["majority"] == [0, 3]


def test_tie_on_points_goes_to_the_final_challenge_winner() -> None:
    # Seat 0: pairs (G×2 against G×1): 2, plus the Final Challenge: 1 = 3. Seat 1: majority of I
    # 4 against 1: 3. 3-3: the Final Challenge winner, seat 0, wins (before the Eye, held by seat 1).
    state = finished("G0 G6 GNOME R0 R3 I6", "GA4 I2 GR5 A7 ABDUCTION AR4", "GI2 I7 A1 R4 AI3 EYE", 0)
    assert state.scores() == [3, 3]
    assert state.winners() == [0]
    assert state.view(None)["score_detail"]["decided_by"] == "final_challenge"


def test_tie_without_final_winner_goes_to_the_all_seeing_eye() -> None:
    # Seat 0: pairs 1 against 0: 2. Seat 1: majority of I 3 against 2: 2. Nobody won the Final
    # Challenge (a random placement), seat 0 has the Eye in their row.
    state = finished("G0 G6 GNOME R0 R3 I6", "GA4 I2 GR5 A7 EYE AR4", "GI2 I7 A1 R4 AI3 ABDUCTION")
    assert state.scores() == [2, 2]
    assert state.winners() == [0]
    assert state.view(None)["score_detail"]["decided_by"] == "all_seeing_eye"


def test_tie_with_no_tie_break_is_a_shared_victory() -> None:
    # The Eye on top of the Pyramid (face up, no front: S = its back, I). Seat 0: pairs 1 against 0:
    # 2; seat 1: I on GI2, I7, AI3 against I2, I6: 3 against 2: 2. No Final Challenge winner.
    state = finished("G0 G6 GNOME R0 R3 EYE", "GA4 I2 GR5 A7 I6 AR4", "GI2 I7 A1 R4 AI3 ABDUCTION")
    assert state.view(None)["pyramid_symbols"]["S"] == "I"
    assert state.scores() == [2, 2]
    assert state.winners() == [0, 1]
    assert state.view(None)["score_detail"]["decided_by"] == "shared"


def test_a_gained_eye_has_no_symbol_but_still_breaks_the_tie() -> None:
    # Seat 0 gained the Eye with Abduction from face-down slot 2, where Abduction now lies:
    # T = G A (Abduction's back) G, S = I (I6 on top). Seat 0: GA4 I2 GR5 A7 EYE AR4; the gained Eye
    # shows nothing, so seat 0 carries I once (I2) against seat 1's GI2 I7 AI3: 3, ahead by 2: 3 pts.
    pyramid = "G0 ABDUCTION GNOME R0 R3 I6"
    rows = ("GA4 I2 GR5 A7 EYE AR4", "GI2 I7 A1 R4 AI3 G6")
    gained = finished(pyramid, *rows, swaps=[("abduction", 0, 2, "ABDUCTION", "EYE")])
    assert gained.view(None)["pyramid_symbols"] == {"T": ["G", "A", "G"], "S": "I"}
    assert measures(gained)["majority"] == [1, 3]
    assert points(gained)["majority"] == [0, 3]
    # Pairs on G and A: seat 0 G×2 (GA4 GR5), A×3 (GA4 A7 AR4) = 2; seat 1 G×2 (GI2 G6), A×2 (A1
    # AI3) = 2: equal, nobody. So seat 1 wins 3-0 and the Eye's tie-break never comes into play.
    assert gained.scores() == [0, 3]
    # Without the swap the Eye would show S = I: 2 against 3, ahead by 1: 2 points only.
    plain = finished(pyramid, *rows)
    assert measures(plain)["majority"] == [2, 3]
    assert points(plain)["majority"] == [0, 2]
    # A gained Eye still breaks a tie: the engine names whoever has it in their row.
    tie = scoring.score(
        rows=[["EYE"], ["G0"]],
        values=[[3], [0]],
        syms=[[()], [()]],
        t="GAG",
        s="I",
        final_winner=-1,
        eye_holder=0,
    )
    assert tie.totals == [0, 0] and tie.winners == [0] and tie.decided_by == "all_seeing_eye"


def test_gnome_revelation_on_top_makes_s_gnome() -> None:
    # Seat 1 swapped the Gnome Revelation for GR5 on slot 6: S = G. Seat 0 carries G on G6 GA4 GI2,
    # seat 1 on GR5 G0 and the Eye (which counts as S = G): 3 against 3, nobody scores.
    state = finished(
        "I7 R4 AI3 R0 I6 GNOME",
        "G6 GA4 GI2 A7 I2 R3",
        "GR5 G0 A1 AR4 EYE ABDUCTION",
        swaps=[("gnome_revelation", 1, 6, "GNOME", "GR5")],
    )
    assert state.view(None)["pyramid_symbols"] == {"T": ["R", "G", "I"], "S": "G"}
    assert measures(state)["majority"] == [3, 3]  # seat 1's Eye counts as S = G too
    assert points(state)["majority"] == [0, 0]


def test_score_detail_explains_every_criterion_for_both_players() -> None:
    state = finished(WORKED_PYRAMID, "I2 R3 EYE AR4 I6 A7", "G6 ABDUCTION R4 A1 GNOME GI2", final_winner=1)
    detail = state.view(0)["score_detail"]
    assert [c["criterion"] for c in detail["criteria"]] == CRITERIA
    assert detail["totals"] == [12, 2]
    run = next(c for c in detail["criteria"] if c["criterion"] == "run")
    assert run["why"][0] == "run of 3 R: R3 EYE AR4"
    seq = next(c for c in detail["criteria"] if c["criterion"] == "sequence")
    assert seq["why"][0].startswith("sequence 2-3-4")
    assert seq["why"][1].startswith("sequence 6-5-4")
    assert detail == state.view(1)["score_detail"] == state.view(None)["score_detail"]


# ---------------------------------------------------------------- brute force
def brute_readings(syms: list[tuple[str, ...]]) -> list[list[tuple[str, ...]]]:
    return [list(r) for r in itertools.product(*(scoring.readings(c) for c in syms))]


def brute_triple(reading: list[tuple[str, ...]], t: str) -> int:
    """Non-overlapping occurrences in a fixed reading, by trying every set of start positions."""
    flat: list[str] = []
    for card in reading:
        flat.extend(card if card else ["|"])
    starts = [i for i in range(len(flat) - 2) if "".join(flat[i : i + 3]) == t]
    best = 0
    for n in range(len(starts), 0, -1):
        for chosen in itertools.combinations(starts, n):
            if all(b - a >= 3 for a, b in itertools.pairwise(chosen)):
                return n
    return best


def brute_run(reading: list[tuple[str, ...]]) -> int:
    best = 0
    for i in range(len(reading)):
        for j in range(i, len(reading)):
            common = set("GIAR")
            for card in reading[i : j + 1]:
                common &= set(card)
            if common:
                best = max(best, j - i + 1)
    return best


def brute_sequence(values: list[int]) -> int:
    best = 1 if values else 0
    for i in range(len(values)):
        for j in range(i, len(values)):
            kept = [values[i]] + [values[k] for k in range(i + 1, j + 1) if values[k] != values[k - 1]]
            steps = {b - a for a, b in itertools.pairwise(kept)}
            if steps <= {1} or steps <= {-1}:
                best = max(best, len(kept))
    return best


def random_row(rng: random.Random) -> tuple[list[tuple[str, ...]], list[int]]:
    syms: list[tuple[str, ...]] = []
    for _ in range(6):
        k = rng.choice((0, 1, 1, 2, 2))
        syms.append(tuple(rng.sample("GIAR", k)))
    return syms, [rng.randrange(8) for _ in range(6)]


@pytest.mark.parametrize("seed", range(4))
def test_scorer_takes_the_best_reading_per_criterion(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(150):
        syms, values = random_row(rng)
        t = "".join(rng.choice("GIAR") for _ in range(3))
        s = rng.choice("GIAR")
        all_readings = brute_readings(syms)
        assert scoring.triple(syms, t) == max(brute_triple(r, t) for r in all_readings), (syms, t)
        assert scoring.run(syms)[0] == max(brute_run(r) for r in all_readings), syms
        best_pairs = max(sum(sum(1 for card in r if x in card) // 2 for x in set(t)) for r in all_readings)
        assert scoring.pairs(syms, t)[0] == best_pairs
        assert scoring.majority(syms, s) == max(sum(1 for card in r if s in card) for r in all_readings)
        assert scoring.sequence(values)[0] == brute_sequence(values), values


def test_triple_dynamic_programming_on_tricky_rows() -> None:
    # Overlap cannot be shared: R A R A I holds R A I once... and A A I with T = A A I after A A A.
    assert scoring.triple([("R",), ("A",), ("R",), ("A",), ("I",)], "RAI") == 1
    assert scoring.triple([("A",), ("A",), ("A",), ("I",)], "AAI") == 1
    # Two two-symbol cards give R A I R: one card's second symbol begins nothing more.
    assert scoring.triple([("A", "R"), ("A", "I"), ("R", "A"), ("I",)], "RAI") == 2
    # A card with no symbol breaks an occurrence.
    assert scoring.triple([("R",), (), ("A",), ("I",)], "RAI") == 0
    assert scoring.triple([("R", "A"), ("I", "R"), ("A", "I")], "RAI") == 2
