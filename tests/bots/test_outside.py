"""The outside AI (treason's rule-based player through coupml) at the Capitol table.

coupml is in the ``test`` extra, so these run wherever the suite does.
"""

from __future__ import annotations

import sys
from collections import Counter

import pytest

from bot_helpers import Checked, midgame_states
from conflictology import bots, games
from conflictology.bots import outside
from conflictology.engine import Action, GameState, Rng
from conflictology.simulate import simulate

OUTSIDE = ["outside-treason", "outside-treason-js"]
CAPITOL = games.get("capitol")


@pytest.mark.parametrize("name", OUTSIDE)
def test_it_plays_legal_actions_at_every_table_size_and_every_decision_maps(name: str) -> None:
    """Mixed with our bots at 2 to 6 seats, and with the Mafia blockable (a block window Coup has):
    every answer is legal, and not one decision falls back to a default."""
    outside.STATS.clear()
    master = Rng(41)
    others = ["random", "heuristic", "heuristic-bluffer", name]
    for g in range(150):
        players = 2 + g % 5
        options = {"steal_blockers": ["mafia", "reporter", "police"]} if g % 3 == 0 else None
        state = CAPITOL.new_game(players=players, seed=master.next64(), options=options)
        seated = [
            Checked(bots.make(pick, CAPITOL, seat, seed=master.next64()))
            for seat, pick in enumerate([name] + [master.choice(others) for _ in range(players - 1)])
        ]
        bots.play_game(state, seated, max_decisions=20_000)
        assert state.is_over()
    assert outside.STATS["decisions"] > 3000
    fallbacks = {k: v for k, v in outside.STATS.items() if k.startswith("fallback:")}
    assert fallbacks == {}


@pytest.mark.parametrize("name", OUTSIDE)
def test_decisions_depend_only_on_what_the_seat_may_know(name: str) -> None:
    rng = Rng(8)
    compared = 0
    for state, seat in midgame_states(CAPITOL, 150, seed=12):
        other = CAPITOL.determinize(state.view(seat), rng)
        if other.to_json() == state.to_json():
            continue
        seed = rng.next64()
        first = bots.make(name, CAPITOL, seat, seed=seed).act(state.view(seat), state.legal_actions(seat))
        second = bots.make(name, CAPITOL, seat, seed=seed).act(other.view(seat), other.legal_actions(seat))
        assert first == second
        compared += 1
    assert compared >= 75


def exchanges(count: int) -> list[GameState]:
    """States where a seat chooses the cards to keep after a Reporter exchange with two cards."""
    found: list[GameState] = []
    master = Rng(5)
    while len(found) < count:
        state = CAPITOL.new_game(players=3, seed=master.next64())
        while not state.is_over():
            seat = state.waiting_for()[0]
            legal = state.legal_actions(seat)
            view = state.view(seat)
            pending = view["pending"] or {}
            if view["phase"] == "exchange" and len(pending["hand"]) == len(pending["drawn"]) == 2:
                found.append(state)
                break
            if {"type": "reporter"} in legal and master.random() < 0.5:
                action: Action = {"type": "reporter"}
            else:
                action = master.choice([a for a in legal if a["type"] != "reporter"] or legal)
            state.apply(seat, action)
    return found


RANK = ["banker", "hacker", "mafia", "police", "judge", "reporter"]  # treason's order, mapped


def test_the_port_keeps_only_drawn_cards_and_the_javascript_the_best_of_all() -> None:
    """coupml's exchange chooses among the drawn cards alone; treason's among the hand and the drawn
    cards, distinct roles first in its order (Duke, Assassin, Captain, Inquisitor, Contessa,
    Ambassador)."""
    differ = 0
    for state in exchanges(40):
        seat = state.waiting_for()[0]
        view, legal = state.view(seat), state.legal_actions(seat)
        drawn, hand = view["pending"]["drawn"], view["pending"]["hand"]
        port = bots.make("outside-treason", CAPITOL, seat, seed=1).act(view, legal)
        js = bots.make("outside-treason-js", CAPITOL, seat, seed=1).act(view, legal)
        assert not Counter(port["cards"]) - Counter(drawn)
        options = sorted(set(hand + drawn), key=RANK.index)
        assert sorted(js["cards"]) == sorted(options[:2])
        differ += sorted(port["cards"]) != sorted(js["cards"])
    assert differ > 5


def test_it_never_steals_nothing_in_the_javascript() -> None:
    """treason's Captain targets a player with money; coupml's port may pick one with none."""
    seen = 0
    for state, seat in midgame_states(CAPITOL, 400, seed=3):
        if state.view(seat)["phase"] != "turn":
            continue
        action = bots.make("outside-treason-js", CAPITOL, seat, seed=seen).act(
            state.view(seat), state.legal_actions(seat)
        )
        if action["type"] == "mafia":
            assert state.view(seat)["players"][action["target"]]["money"] > 0
            seen += 1
    assert seen > 3


def test_the_trace_reads_claims_reveals_caught_bluffs_and_exchanges() -> None:
    log = [
        {"type": "action", "seat": 0, "action": "banker"},
        {"type": "action", "seat": 1, "action": "police_swap"},
        {"type": "block", "seat": 1, "card": "judge", "actor": 0},
        {"type": "bluff", "seat": 1, "claim": "judge"},
        {"type": "lose", "seat": 1, "card": "reporter"},
        {"type": "reveal", "seat": 0, "card": "banker"},
        {"type": "exchange", "seat": 1, "count": 1},
    ]
    assert outside._traces(log, 2) == [
        [("claim", "duke"), ("reveal", "duke")],
        [
            ("claim", "inquisitor"),
            ("claim", "contessa"),
            ("lost_challenge", "contessa"),
            ("reveal", "ambassador"),
            ("exchange", None),
        ],
    ]


def test_a_server_never_offers_it_and_other_games_refuse_it() -> None:
    for name in OUTSIDE:
        assert name not in bots.offered(CAPITOL)
        assert not bots.is_offered(name, CAPITOL)
        assert name in bots.names()
        with pytest.raises(ValueError, match="unknown bot"):
            bots.make(name, games.get("conspiranoicos"), 0, seed=1)


def test_without_coupml_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "coupml", None)  # an import of it now fails
    monkeypatch.setitem(sys.modules, "coupml.rule_ai", None)
    assert not outside.available()
    with pytest.raises(ValueError, match=r"coupml.*conflictology\[bench\]"):
        bots.make("outside-treason", CAPITOL, 0, seed=1)
    with pytest.raises(ValueError, match="coupml"):
        simulate("capitol", 2, 1, ["heuristic", "outside-treason"], seed=1)


def test_a_seeded_run_repeats() -> None:
    first = simulate("capitol", 3, 20, ["outside-treason-js", "heuristic", "outside-treason"], seed=9)
    second = simulate("capitol", 3, 20, ["outside-treason-js", "heuristic", "outside-treason"], seed=9)
    assert first.per_game == second.per_game


def test_two_ports_stealing_nothing_from_each_other_are_stopped_as_a_draw() -> None:
    """coupml's port steals from a player with no money; two of its seats holding Mafias with $0
    each would go on forever: the stalemate rule (docs/rules/capitol.md) ends the game, a shared win
    that simulate counts as a draw, before simulate has to stop it."""
    seats = ["outside-treason"] * 3
    result = simulate("capitol", 3, 200, seats, seed=3, max_decisions=1000)
    assert result.unfinished == 0
    assert result.draws > 0
    js = simulate("capitol", 3, 200, ["outside-treason-js"] * 3, seed=3, max_decisions=1000)
    assert js.unfinished == 0
