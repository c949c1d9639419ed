"""The observation encoders put the right facts in the right places (layouts: docs/rl.md)."""

from __future__ import annotations

import numpy as np
import pytest

from conflictology import games, rl
from conflictology.engine import Rng
from conflictology.rl.encoding import Layout, Writer

ROLES = ["banker", "mafia", "hacker", "judge", "reporter", "police"]


def seg(vector: np.ndarray, layout: Layout, name: str) -> list[float]:
    return [round(float(x), 4) for x in vector[layout.slice(name)]]


def capitol_deck(hands: list[list[str]]) -> list[str]:
    pool = [r for r in ROLES for _ in range(3)]
    out = []
    for hand in hands:
        for card in hand:
            pool.remove(card)
            out.append(card)
    return out + pool


def test_capitol_vector_is_relative_to_the_viewer() -> None:
    g = games.get("capitol")
    state = g.new_game(3, seed=1, options={"first_player": 2},
                       deck=capitol_deck([["judge", "judge"], ["banker", "police"], ["mafia", "mafia"]]))
    enc = rl.encoder_for("capitol")
    layout = enc.layout(3)
    v1 = enc.encode(state.view(1), 3)
    assert seg(v1, layout, "seat") == [0, 1, 0]
    assert seg(v1, layout, "own_hidden") == [round(1 / 3, 4), 0, 0, 0, 0, round(1 / 3, 4)]
    assert seg(v1, layout, "turn") == [0, 1, 0]  # seat 2 is one place after seat 1
    assert seg(v1, layout, "phase")[0] == 1  # the turn phase
    assert seg(v1, layout, "money") == [round(2 / 12, 4)] * 3
    # Seat 2 claims Mafia against seat 0: the claim is recorded against seat 2, relative to each viewer.
    state.apply(2, {"type": "mafia", "target": 0})
    v1 = enc.encode(state.view(1), 3)
    v0 = enc.encode(state.view(0), 3)
    claims1 = seg(v1, layout, "claims")
    claims0 = seg(v0, layout, "claims")
    mafia = ROLES.index("mafia")
    assert claims1[1 * 6 + mafia] == round(1 / 3, 4)  # for seat 1, seat 2 is relative seat 1
    assert claims0[2 * 6 + mafia] == round(1 / 3, 4)  # for seat 0, seat 2 is relative seat 2
    assert seg(v0, layout, "pending_actor") == [0, 0, 1]
    assert seg(v0, layout, "pending_target") == [1, 0, 0]
    assert seg(v0, layout, "pending_claim")[mafia] == 1
    assert seg(v0, layout, "phase")[1] == 1  # the challenge window
    # Nothing of seat 2's hand (two Mafias) is in seat 0's vector beyond what seat 0 knows.
    assert seg(v0, layout, "own_hidden") == [0, 0, 0, round(2 / 3, 4), 0, 0]
    assert not any(seg(v0, layout, "known"))


def test_capitol_bluff_and_loss_are_counted() -> None:
    g = games.get("capitol")
    state = g.new_game(2, seed=1, options={"first_player": 0},
                       deck=capitol_deck([["judge", "hacker"], ["banker", "police"]]))
    state.apply(0, {"type": "banker"})  # a bluff
    state.apply(1, {"type": "challenge"})  # caught: seat 0 loses a card of their choice
    state.apply(0, {"type": "lose", "card": "hacker"})
    enc = rl.encoder_for("capitol")
    layout = enc.layout(2)
    v1 = enc.encode(state.view(1), 2)
    assert seg(v1, layout, "bluffs_caught") == [0, 0.5]
    assert seg(v1, layout, "revealed")[6 + ROLES.index("hacker")] == 0.5
    assert seg(v1, layout, "hidden_count") == [0.5, 0.25]


def test_conspiranoicos_vector_shows_backs_not_fronts() -> None:
    g = games.get("conspiranoicos")
    state = g.new_game(2, seed=4)
    enc = rl.encoder_for("conspiranoicos")
    layout = enc.layout(2)
    view0 = state.view(0)
    ids = [c["id"] for c in view0["cards"]]
    v0 = enc.encode(view0, 2)
    hand = [ids[i] for i, x in enumerate(seg(v0, layout, "my_hand")) if x]
    assert sorted(hand) == sorted(view0["players"][0]["hand"])
    backs = seg(v0, layout, "opp_hand_backs")
    assert sum(backs) == pytest.approx(2 / 6, abs=1e-3)
    # Seat 1 plays first: seat 0 sees its back only, until seat 0 plays too.
    play = state.legal_actions(1)[0]
    state.apply(1, play)
    v0 = enc.encode(state.view(0), 2)
    assert sum(seg(v0, layout, "opp_play_back")) == 1 and not any(seg(v0, layout, "opp_play"))
    assert seg(v0, layout, "submitted") == [0, 1]
    state.apply(0, state.legal_actions(0)[0])
    v0 = enc.encode(state.view(0), 2)
    assert seg(v0, layout, "opp_play")[ids.index(play["card"])] == 1


def test_conspiranoicos_layout_is_for_two_players_only() -> None:
    with pytest.raises(ValueError, match="exactly 2"):
        rl.encoder_for("conspiranoicos").layout(3)


def test_every_vector_stays_in_bounds_over_whole_games() -> None:
    rng = Rng(9)
    for name in games.names():
        g = games.get(name)
        enc = rl.encoder_for(name)
        for seed in range(15):
            n = g.min_players + seed % (g.max_players - g.min_players + 1)
            state = g.new_game(n, seed=seed)
            while True:
                for seat in range(n):
                    v = enc.encode(state.view(seat), n)
                    assert v.shape == (enc.size(n),) and v.dtype == np.float32
                    assert float(v.min()) >= 0.0 and float(v.max()) <= 1.0
                if state.is_over():
                    break
                seat = state.waiting_for()[0]
                state.apply(seat, rng.choice(state.legal_actions(seat)))


def test_writer_refuses_writes_outside_a_segment() -> None:
    layout = Layout([("a", 2, "two"), ("b", 1, "one")])
    w = Writer(layout)
    w.set("a", 1, 5.0)  # clipped to 1
    assert w.vector.tolist() == [0.0, 1.0, 0.0]
    with pytest.raises(IndexError):
        w.set("a", 2, 1.0)
    with pytest.raises(ValueError):
        Layout([("a", 0, "empty")])
    with pytest.raises(ValueError):
        Layout([("a", 1, ""), ("a", 1, "")])
