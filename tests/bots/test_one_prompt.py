"""Ruling 6a at the bots: the target's one prompt (challenge, block or let it pass) is answered as the
two prompts were. Each bot, given the one prompt, gives the answer a twin of it (the same seed) gives
in two steps: its challenge window's answer, and if it let it pass, its block window's answer then."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from capitol_helpers import B, H, J, M, P, R, table
from conflictology import bots
from conflictology.engine import Rng
from conflictology.games.capitol import GAME, CapitolState
from conflictology.games.capitol.data import BLOCK


def one_prompts(games: int) -> Iterator[tuple[CapitolState, int]]:
    """Random games' positions where a target is offered its one prompt."""
    rng = Rng(77)
    for g in range(games):
        options = {"steal_blockers": ["mafia", "reporter"]} if g % 2 else None
        s = GAME.new_game(2 + g % 5, seed=g, options=options)
        while not s.is_over():
            for seat in s.waiting_for():
                if s.phase == "challenge" and any(a["type"] == "block" for a in s.legal_actions(seat)):
                    yield s.clone(), seat
            seat = s.waiting_for()[0]
            s.apply(seat, rng.choice(s.legal_actions(seat)))


def block_window(s: CapitolState, seat: int) -> CapitolState:
    """The same position as the two prompts' block window would have had it: the window closed."""
    b = s.clone()
    b.phase = BLOCK
    b.awaiting = [seat]
    b.passed = []
    b._lseat = -1
    return b


@pytest.mark.parametrize("name", ["heuristic", "heuristic-bluffer", "heuristic-sceptic", "outside-treason",
                                  "outside-treason-js"])
def test_the_one_prompt_gets_the_two_prompts_answer(name: str) -> None:
    asked = blocks = challenges = 0
    for n, (s, seat) in enumerate(one_prompts(120)):
        one = bots.make(name, GAME, seat, seed=n)
        two = bots.make(name, GAME, seat, seed=n)
        legal = s.legal_actions(seat)
        answer = one.act(s.view(seat), legal)
        first = two.act(s.view(seat), [a for a in legal if a["type"] != "block"])
        if first["type"] == "challenge":
            expected = first
            challenges += 1
        else:
            b = block_window(s, seat)
            expected = two.act(b.view(seat), b.legal_actions(seat))
            blocks += expected["type"] == "block"
        assert answer == expected, (n, s.action, answer, expected)
        asked += 1
    assert asked > 200 and blocks > 20 and challenges > 5, (asked, blocks, challenges)


def test_treasons_ai_blocks_with_the_judge_it_holds_in_the_one_prompt() -> None:
    s = table([[H, M], [B, J], [R, P]])
    s.money[0] += 1
    s.treasury -= 1
    s._lseat = -1
    s.apply(0, {"type": "hacker", "target": 1})
    for name in ("outside-treason", "outside-treason-js"):
        bot = bots.make(name, GAME, 1, seed=3)
        assert bot.act(s.view(1), s.legal_actions(1)) == {"type": "block", "card": J}, name


def test_the_search_answers_the_one_prompt_with_a_legal_action() -> None:
    checked = 0
    for n, (s, seat) in enumerate(one_prompts(10)):
        if n % 5:
            continue
        bot = bots.make("search:iterations=20:seconds=30", GAME, seat, seed=n)
        assert bot.act(s.view(seat), s.legal_actions(seat)) in s.legal_actions(seat)
        checked += 1
    assert checked >= 3
