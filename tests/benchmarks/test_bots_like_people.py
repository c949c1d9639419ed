"""benchmarks/bots_like_people.py counts what it says: bluffs from the true hands, challenges right or
wrong, genuine and bluffed blocks, chances to challenge, the action mix, turns and wins; on scripted
games whose every answer is known, and on seeded bot games against a count made from the hands
themselves at each claim."""

from __future__ import annotations

import json
from typing import Any

from benchmarks.bots_like_people import Counts, Recorder, count_game, measure, play

from capitol_helpers import B, H, J, M, R, table
from conflictology import bots
from conflictology.games.capitol import GAME, CapitolState
from conflictology.games.capitol.data import CLAIM


def scripted(state: CapitolState, moves: list[tuple[int, dict[str, Any]]]) -> list[Counts]:
    rec = Recorder(state.num_players)
    for seat, action in moves:
        assert seat in state.waiting_for(), (seat, action, state.waiting_for())
        rec.before(seat, state.legal_actions(seat))
        state.apply(seat, action)
    assert state.is_over()
    return count_game(state, rec.chances)


def test_a_claim_without_the_role_is_a_bluff_and_a_challenge_of_a_true_claim_is_wrong() -> None:
    s = table([[M, R], [B, J]])
    c0, c1 = scripted(
        s,
        [
            (0, {"type": "banker"}),  # a bluff: seat 0 holds no Banker
            (1, {"type": "pass"}),  # seat 1's chance, not taken
            (1, {"type": "banker"}),  # true
            (0, {"type": "challenge"}),  # wrong: the Banker is there
            (0, {"type": "lose", "card": R}),
            (0, {"type": "hacker", "target": 1}),  # a bluff ($5M: Banker's $3M and the start's $2M)
            (1, {"type": "challenge"}),  # right: caught, and seat 0's last card goes
        ],
    )
    assert (c0.claims, c0.bluffs, c0.action_claims, c0.action_bluffs) == (2, 2, 2, 2)
    assert (c0.chances, c0.challenges, c0.right) == (1, 1, 0)
    assert (c1.claims, c1.bluffs) == (1, 0)
    assert (c1.chances, c1.challenges, c1.right) == (2, 1, 1)
    assert (c1.hacked, c0.hacked) == (1, 0)
    assert (c0.wins, c1.wins, c0.seats, c1.seats) == (0, 1, 1, 1)
    assert c0.turns == c1.turns == 3
    assert c0.actions == {"banker": 1, "hacker": 1} and c1.actions == {"banker": 1}
    assert c0.blocks == c1.blocks == 0


def test_blocks_genuine_and_bluffed_and_the_judge_against_a_hacker() -> None:
    # Seat 0 hacks with a true Hacker twice; seat 1 blocks with the Judge it holds, then (the Judge
    # returned after the accepted block) with a Judge it no longer holds, and is caught.
    s = table([[H, B], [J, M]], pile=[R, R])
    c0, c1 = scripted(
        s,
        [
            (0, {"type": "banker"}),  # true: $5M
            (1, {"type": "pass"}),
            (1, {"type": "income"}),
            (0, {"type": "hacker", "target": 1}),  # true: $2M
            (1, {"type": "block", "card": J}),  # the one prompt: a sealed, genuine block
            (0, {"type": "pass"}),  # accepted
            (1, {"type": "return", "card": J}),  # the Judge goes back, seat 1 draws from the deck
            (1, {"type": "income"}),
            (0, {"type": "banker"}),  # the Banker was shown nowhere: still held, true ($5M)
            (1, {"type": "pass"}),
            (1, {"type": "income"}),
            (0, {"type": "hacker", "target": 1}),
            (1, {"type": "block", "card": J}),  # a bluff now: seat 1 returned its Judge
            (0, {"type": "challenge"}),  # right: caught, seat 1 loses two (ruling 11)
            (1, {"type": "lose", "card": M}),
        ],
    )
    assert s.winners() == [0]
    assert (c1.blocks, c1.genuine, c1.judge_blocks, c1.judge_genuine) == (2, 1, 2, 1)
    assert (c1.claims, c1.bluffs, c1.action_claims) == (2, 1, 0)
    assert c1.hacked == 2
    assert (c0.claims, c0.bluffs, c0.chances, c0.challenges, c0.right) == (4, 0, 2, 1, 1)
    assert c0.blocks == 0 and c0.wins == 1


class _Truth(bots.Bot):
    """A bot that notes, before each of its turn claims, whether its hand holds the role."""

    def __init__(self, inner: bots.Bot, state: CapitolState, notes: list[tuple[int, bool]]) -> None:
        self.inner, self.state, self.notes = inner, state, notes
        self.seat, self.game = inner.seat, inner.game

    def act(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
        action = self.inner.act(view, legal)
        role = CLAIM.get(action["type"])
        if role is not None and self.state.phase == "turn":
            self.notes.append((self.seat, role in self.state.hidden[self.seat]))
        return action


def test_seeded_games_agree_with_the_hands_at_each_claim() -> None:
    bluffed = honest = 0
    for g in range(30):
        players = 2 + g % 3
        s = GAME.new_game(players, seed=1000 + g)
        notes: list[tuple[int, bool]] = []
        seated = [
            _Truth(bots.make("heuristic-bluffer" if seat % 2 else "easy", GAME, seat, seed=g), s, notes)
            for seat in range(players)
        ]
        counts = play(s, seated)
        for seat in range(players):
            mine = [held for who, held in notes if who == seat]
            assert counts[seat].action_claims == len(mine)
            assert counts[seat].action_bluffs == mine.count(False)
            # Each challenge the log shows is one counted, right when a bluff followed it.
            log = s.view(None)["log"]
            made = [i for i, e in enumerate(log) if e["type"] == "challenge" and e["seat"] == seat]
            assert counts[seat].challenges == len(made)
            assert counts[seat].right == sum(log[i + 1]["type"] == "bluff" for i in made)
            assert counts[seat].challenges <= counts[seat].chances
        bluffed += sum(not held for _, held in notes)
        honest += sum(held for _, held in notes)
    assert bluffed > 10 and honest > 10  # both kinds were met


def test_measure_counts_the_measured_seats_only() -> None:
    r = measure("easy", 3, 12, seed=5, field_bot="normal")
    assert r.all.seats == 12  # one seat a game
    assert r.winners.seats == r.all.wins + r.all.shared
    assert sum(r.all.actions.values()) > 0
    field = measure("normal", 3, 5, seed=5, field_bot="normal")
    assert field.all.seats == 15  # the field itself: every seat


def _census_sum(c: Counts, what: str) -> int:
    return sum(n for key, n in c.census.items() if key.split("|")[-1] == what)


def test_the_census_of_chances_adds_up_to_the_counts() -> None:
    """The chances by kind sum to the chances, the ones taken to the challenges (the log's), the
    right ones to the right ones; a search's challenges split into its prior's kept and its own added."""
    for bot in ("heuristic-sceptic", "hard:iterations=4:seconds=9"):
        r = measure(bot, 3, 6, seed=8, field_bot="heuristic-bluffer")
        c = r.all
        assert c.chances > 0 and c.challenges > 0
        assert _census_sum(c, "offered") == c.chances
        assert _census_sum(c, "held") + _census_sum(c, "bluff") == c.chances
        assert _census_sum(c, "taken") == c.challenges
        assert _census_sum(c, "taken right") == c.right
        searched = _census_sum(c, "prior taken") + _census_sum(c, "added") - _census_sum(c, "dropped")
        assert searched == (c.challenges if bot.startswith("hard") else 0)
        # The turn claims by role sum to the record's action claims and bluffs; a search's are its
        # prior's or its own, a heuristic's neither.
        made = {k: n for k, n in c.claim_census.items() if not k.endswith("|dropped")}
        assert sum(made.values()) == c.action_claims
        assert sum(n for k, n in made.items() if k.split("|")[1] == "bluff") == c.action_bluffs
        whose = {k.split("|")[2] for k in made}
        assert whose <= ({"prior", "search"} if bot.startswith("hard") else {"—"})


def test_a_run_saved_as_json_gives_the_same_tables() -> None:
    from benchmarks.bots_like_people import census_table, doc_of, report, result_of

    r = measure("easy", 2, 5, seed=3, field_bot="normal")
    back = result_of(json.loads(json.dumps(doc_of(r))))
    assert back == r
    assert report([back], "x") == report([r], "x")
    assert census_table([back]) == census_table([r])
