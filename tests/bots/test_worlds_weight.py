"""How the Capitol search's worlds weigh the claims standing (issue 28; docs/bots.md, "How the bots
play beside people"): ``worlds=resample`` takes a drawn world by its weight when none of the draws
was kept (``reject``, before: the next draw whatever its weight), ``claims=role`` reads a claim's
chance of being a bluff role by role as the heuristic does (``flat``: one rate a player); and
``quiet_bluffs=0`` leaves a bluffed exchange out of the search's candidates. Whatever they are,
the search decides from its seat's view alone and plays legally."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot_helpers import play_legally
from capitol_helpers import B, H, J, M, P, R, table
from conflictology import bots
from conflictology.bots.capitol import BYSTANDER
from conflictology.bots.capitol_knowledge import PERSONALITIES
from conflictology.bots.ismcts import _overrule
from conflictology.engine import Rng
from conflictology.games.capitol import GAME
from conflictology.games.capitol.data import CLAIM


def _settle(state: Any) -> None:
    """Everyone asked passes until the next turn (the claim stands, unblocked)."""
    while state.phase != "turn":
        seat = state.waiting_for()[0]
        state.apply(seat, {"type": "pass"})


def _three_claims(last: str = "banker") -> Any:
    """Four players: seats 1 and 2 have claimed a Banker unchallenged, seat 3 has just claimed
    ``last`` (a Hacker at seat 0, after a round of Foreign Aid and Income) and seat 0 (holding none
    of them) may challenge it."""
    s = table([[M, R], [J, P], [M, P], [J, R]])
    s.apply(0, {"type": "income"})
    for seat in (1, 2):
        s.apply(seat, {"type": "banker"})
        _settle(s)
    if last == "hacker":  # a round of Foreign Aid and Income first, for the Hacker's $3M
        s.apply(3, {"type": "foreign_aid"})
        _settle(s)
        for seat in (0, 1, 2):
            s.apply(seat, {"type": "income"})
        s.apply(3, {"type": "hacker", "target": 0})
    else:
        s.apply(3, {"type": last})
    assert 0 in s.waiting_for() and s.phase == "challenge"
    return s


def _held(state: Any, spec: str, seat: int, role: str, worlds: int = 400) -> float:
    bot = bots.make(spec, GAME, 0, seed=5)
    draw = bot.policy.sampler(bot, state.view(0))  # type: ignore[attr-defined]
    rng = Rng(9)
    return sum(role in draw(rng).hidden[seat] for _ in range(worlds)) / worlds


def test_resampled_worlds_believe_three_claims_more_than_the_next_draw_did() -> None:
    s = _three_claims()
    rng = Rng(9)
    uniform = sum(B in GAME.determinize(s.view(0), rng).hidden[3] for _ in range(400)) / 400
    reject = _held(s, "hard:worlds=reject", 3, B)
    resample = _held(s, "hard:worlds=resample", 3, B)
    assert uniform < reject < resample
    # every claimant believed at once: the three copies of the Banker, one in each claimant's hand
    rng = Rng(3)
    bot = bots.make("hard:worlds=resample", GAME, 0, seed=5)
    draw = bot.policy.sampler(bot, s.view(0))  # type: ignore[attr-defined]
    everyone = sum(all(B in draw(rng).hidden[i] for i in (1, 2, 3)) for _ in range(400)) / 400
    bot = bots.make("hard:worlds=reject", GAME, 0, seed=5)
    draw = bot.policy.sampler(bot, s.view(0))  # type: ignore[attr-defined]
    before = sum(all(B in draw(rng).hidden[i] for i in (1, 2, 3)) for _ in range(400)) / 400
    assert everyone > before


def test_a_hacker_is_believed_more_when_claims_are_read_role_by_role() -> None:
    s = _three_claims("hacker")
    flat = _held(s, "hard:worlds=resample:claims=flat", 3, H)
    by_role = _held(s, "hard:worlds=resample:claims=role", 3, H)
    assert flat < by_role


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("hard:worlds=always", "worlds must be one of"),
        ("hard:worlds=1", "worlds must be one of"),
        ("hard:claims=seat", "claims must be one of"),
        ("hard:quiet_bluffs=2", "quiet_bluffs must be 0 or 1"),
        ("hard:quiet_bluffs=no", "quiet_bluffs must be 0 or 1"),
        ("hard:bystander=-1", "bystander must be a number"),
        ("hard:prior_honesty=1.5", "prior_honesty must be a number from 0 to 1"),
        ("hard:prior_honesty=yes", "prior_honesty must be a number"),
        ("hard:prior_scepticism=-1", "prior_scepticism must be a number 0 or more"),
        ("hard:bluff_z=-1", "bluff_z must be a number of standard errors, 0 or more"),
        ("hard:bluff_z=inf", "bluff_z must be a number of standard errors"),
        ("hard:bluff_z=yes", "bluff_z must be a number of standard errors"),
    ],
)
def test_an_unknown_rule_for_the_worlds_is_refused_when_the_bot_is_made(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        bots.make(spec, GAME, 0, seed=1)


def test_the_bystander_threshold_reaches_the_searchers_own_heuristic_only() -> None:
    """The prior, and the searcher's seat in the rollouts, take ``bystander``; the other seats are
    played as the table is modelled (the heuristic's own threshold)."""
    s = _three_claims()
    bot = bots.make("hard:iterations=2:seconds=9999:bystander=0.8", GAME, 0, seed=1)
    bot.act(s.view(0), s.legal_actions(0))
    memo = bot.policy_memo  # type: ignore[attr-defined]
    assert memo.prior_helper.bystander == 0.8
    assert [p.bystander for p in memo.rollout_players] == [0.8, *[BYSTANDER] * (GAME.max_players - 1)]


SPECS = [
    "hard:iterations=10:seconds=9999:worlds=resample:claims=role",
    "hard:iterations=10:seconds=9999:worlds=resample:claims=role:quiet_bluffs=0:bystander=0.8",
    "hard:iterations=10:seconds=9999:worlds=reject:claims=flat",
]


@pytest.mark.parametrize("spec", SPECS)
def test_a_decision_among_standing_claims_depends_only_on_the_view(spec: str) -> None:
    """Seat 0 at three standing claims, in the real game and in a world dealt anew from its view (the
    other hands differ): the same decision and the same statistics, for the challenge window and for
    its next turn."""
    s = _three_claims()
    states = [s]
    turn = _three_claims()
    _settle(turn)
    while turn.waiting_for()[0] != 0:
        seat = turn.waiting_for()[0]
        turn.apply(seat, {"type": "income"})
    states.append(turn)
    for state in states:
        view = state.view(0)
        world = GAME.worlds(view)(Rng(11))
        assert world.view(0) == view and world.hidden != state.hidden
        seen = set()
        for x in (state, world):
            bot = bots.make(spec, GAME, 0, seed=4)
            action = bot.act(x.view(0), x.legal_actions(0))
            assert action in state.legal_actions(0)
            seen.add(json.dumps([action, bot.last_root_stats], sort_keys=True))
        assert len(seen) == 1


def test_without_quiet_bluffs_no_bluffed_reporter_or_police_is_a_candidate() -> None:
    s = _three_claims()
    _settle(s)
    while s.waiting_for()[0] != 0:
        s.apply(s.waiting_for()[0], {"type": "income"})
    hand = s.hidden[0]  # mafia and reporter: a Reporter is held, a Police swap would be a bluff
    legal = s.legal_actions(0)
    bot = bots.make("hard:iterations=4:seconds=9999:quiet_bluffs=0", GAME, 0, seed=2)
    prior = bot.policy.prior(bot, s.view(0), legal)  # type: ignore[attr-defined]
    cands = bot.policy.candidates(bot, s.view(0), legal, prior)  # type: ignore[attr-defined]
    kinds = {a["type"] for a in cands}
    assert "reporter" in kinds and not kinds & {"police_swap", "police_investigate"}
    assert all(a is prior or CLAIM.get(a["type"]) not in (R, P) or CLAIM[a["type"]] in hand for a in cands)
    free = bots.make("hard:iterations=4:seconds=9999:quiet_bluffs=1", GAME, 0, seed=2)
    kinds = {a["type"] for a in free.policy.candidates(free, s.view(0), legal, prior)}  # type: ignore[attr-defined]
    assert {"police_swap", "police_investigate"} <= kinds


@pytest.mark.parametrize("players", [2, 4])
def test_the_search_with_its_worlds_resampled_plays_whole_games_legally(players: int) -> None:
    spec = "hard:iterations=6:seconds=9999:worlds=resample:claims=role:quiet_bluffs=0"
    for g in range(2):
        state = GAME.new_game(players=players, seed=60 + g)
        names = [spec if s == g % players else "normal" for s in range(players)]
        seated = [bots.make(name, GAME, s, seed=g + s) for s, name in enumerate(names)]
        play_legally(state, seated)
        assert state.is_over()


def test_face_to_face_the_search_decides_as_before() -> None:
    """With two players in, the worlds and the candidates are as they were (``bluff_scale`` was fitted
    there, and there the search already bluffed like people): the defaults decide exactly as the old
    rules, worlds, statistics and all."""
    old = (
        "hard:iterations=10:seconds=9999:worlds=reject:claims=flat:quiet_bluffs=1"
        ":prior_honesty=0.7:prior_scepticism=1:bluff_z=0"
    )
    new = "hard:iterations=10:seconds=9999"
    state: Any = GAME.new_game(players=2, seed=21)
    seated = [bots.make("heuristic-bluffer", GAME, s, seed=s) for s in range(2)]
    compared = 0
    while state.waiting_for() and compared < 12:
        seat = state.waiting_for()[0]
        legal = state.legal_actions(seat)
        if len(legal) > 1:
            seen = set()
            for spec in (old, new):
                bot = bots.make(spec, GAME, seat, seed=compared)
                action = bot.act(state.view(seat), legal)
                seen.add(json.dumps([action, bot.last_root_stats], sort_keys=True))
            assert len(seen) == 1
            compared += 1
        state.apply(seat, seated[seat].act(state.view(seat), legal))
    assert compared == 12


def test_at_four_players_the_defaults_are_the_new_rules() -> None:
    s = _three_claims()
    assert _held(s, "hard", 3, B) == _held(s, "hard:worlds=resample:claims=role", 3, B)
    assert _held(s, "hard", 3, B) != _held(s, "hard:worlds=reject:claims=flat", 3, B)
    # the searcher's own dials: heuristic-honest's honesty, a lower scepticism
    bot = bots.make("hard:iterations=3:seconds=9999", GAME, 0, seed=1)
    bot.act(s.view(0), s.legal_actions(0))
    memo = bot.policy_memo  # type: ignore[attr-defined]
    assert (memo.prior_helper.honesty, memo.prior_helper.scepticism) == (0.97, 0.6)
    assert (memo.rollout_players[0].honesty, memo.rollout_players[0].scepticism) == (0.97, 0.6)
    # a bluff must clear two more standard errors to overrule an honest prior
    assert bot.policy.bluff_z == 2.0  # type: ignore[attr-defined]


def _my_turn(players: int) -> Any:
    """Seat 0's first turn, holding a Mafia and a Reporter (no Banker, no Hacker), ``players`` in."""
    hands = [[M, R], [J, P], [M, P], [J, R]][:players]
    return table(hands)


@pytest.mark.parametrize("players", [2, 4])
def test_the_searchers_own_honesty_and_scepticism_are_params_read_with_three_or_more_in(players: int) -> None:
    """``prior_honesty`` and ``prior_scepticism`` reach the searcher's own heuristic (its prior, and its
    seat in the rollouts) with three or more players in; face to face it keeps the default
    personality's, and the other seats are played as the table is modelled."""
    s = _my_turn(players)
    spec = "hard:iterations=3:seconds=9999:prior_honesty=0.95:prior_scepticism=0.6"
    bot = bots.make(spec, GAME, 0, seed=1)
    bot.act(s.view(0), s.legal_actions(0))
    memo = bot.policy_memo  # type: ignore[attr-defined]
    base = PERSONALITIES["heuristic"]
    want = (0.95, 0.6) if players > 2 else (base["honesty"], base["scepticism"])
    assert (memo.prior_helper.honesty, memo.prior_helper.scepticism) == want
    me, *others = memo.rollout_players[:players]
    assert (me.honesty, me.scepticism) == want
    assert all(p.honesty != 0.95 and p.scepticism != 0.6 for p in others)


def test_an_honest_prior_bluffs_no_banker_where_the_default_one_does() -> None:
    """At four players, seat 0 holds no Banker: over many seeds the default prior (`normal`'s dials)
    bluffs one now and then, a prior with ``prior_honesty=1`` never does."""
    s = _my_turn(4)
    legal = s.legal_actions(0)

    def bankers(spec: str) -> int:
        count = 0
        for seed in range(200):
            bot = bots.make(spec, GAME, 0, seed=seed)
            prior = bot.policy.prior(bot, s.view(0), legal)  # type: ignore[attr-defined]
            count += prior is not None and prior["type"] == "banker"
        return count

    assert bankers("hard:prior_honesty=0.7") > 0
    assert bankers("hard:prior_honesty=1") == 0


@pytest.mark.parametrize("players", [2, 4])
def test_a_bluff_needs_bluff_z_more_to_overrule_an_honest_prior_with_three_or_more_in(players: int) -> None:
    """``bluff_z``: a turn's claim of a role the searcher lacks must clear that many more standard
    errors to overrule a prior that bluffs nothing, with three or more players in; face to face, for a
    claim of a role held, and against a prior that bluffs itself, nothing more is asked."""
    s = _my_turn(players)  # seat 0 holds a Mafia and a Reporter
    view = s.view(0)
    income, banker = {"type": "income"}, {"type": "banker"}
    mafia, hacker = {"type": "mafia", "target": 1}, {"type": "hacker", "target": 1}
    bot = bots.make("hard:bluff_z=1.5", GAME, 0, seed=1)
    policy: Any = bot.policy  # type: ignore[attr-defined]
    assert policy.extra_z(bot, view, banker, income) == (1.5 if players > 2 else 0.0)
    assert policy.extra_z(bot, view, mafia, income) == 0.0  # held
    assert policy.extra_z(bot, view, income, banker) == 0.0  # no claim
    assert policy.extra_z(bot, view, hacker, banker) == 0.0  # the prior bluffs too
    off = bots.make("hard:bluff_z=0", GAME, 0, seed=1)
    assert policy.extra_z(off, view, banker, income) == 0.0
    default = bots.make("hard", GAME, 0, seed=1)
    assert policy.extra_z(default, view, banker, income) == (2.0 if players > 2 else 0.0)
    tree = bots.make("ismcts:bluff_z=1.5", GAME, 0, seed=1)  # the flat search only, where it was measured
    assert policy.extra_z(tree, view, banker, income) == 0.0


def test_a_bluff_that_clears_the_rule_but_not_bluff_z_gives_way_to_the_next_best() -> None:
    """The prior (Income) against a bluffed Banker 3.5 standard errors better (beyond the 0.02 margin)
    and a held Reporter less good but sure: with ``bluff_z`` 0 or 1 the Banker is taken, with 2 it is
    set aside and the Reporter, which clears the rule, is; with no honest candidate left, the prior."""
    s = _my_turn(4)
    view = s.view(0)
    income, banker, reporter = {"type": "income"}, {"type": "banker"}, {"type": "reporter"}
    base = [0.5] * 20
    bluff = [0.5 + 0.1 + (0.1 if i % 2 else -0.1) for i in range(20)]
    sure = [0.5 + 0.06 + (0.01 if i % 2 else -0.01) for i in range(20)]
    cands, results = [income, banker, reporter], [base, bluff, sure]
    means = [sum(r) / 20 for r in results]

    def pick(spec: str, results: list[list[float]] = results) -> dict[str, Any]:
        bot = bots.make(spec, GAME, 0, seed=1)
        means = [sum(r) / 20 for r in results]
        action: dict[str, Any] = _overrule(bot, view, cands, results, means, 0, 0.02, 2.0)  # type: ignore[arg-type]
        return action

    assert means[1] > means[2] > means[0]
    assert pick("hard:bluff_z=0") == banker
    assert pick("hard:bluff_z=1") == banker
    assert pick("hard:bluff_z=2") == reporter
    assert pick("hard:bluff_z=2", [base, bluff, base]) == income
