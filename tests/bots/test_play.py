"""Bots on the real games: always legal, deciding only from what their seat may know.

Every check runs over every registered game. Search bots use iteration budgets (never seconds), so
their decisions are reproducible under a seed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest

from bot_helpers import Checked, midgame_states
from conflictology import bots, games
from conflictology.engine import Action, Game, GameState, Rng

GAME_NAMES = games.names()
# Cheap bots, every personality and level, mixed at tables of every size.
FAST_BOTS = ["random", "heuristic", "easy", "normal"]
CAPITOL_PERSONALITIES = [
    "heuristic-honest",
    "heuristic-bluffer",
    "heuristic-sceptic",
    "heuristic-aggressive",
]


def fast_bots(game: Game) -> list[str]:
    return FAST_BOTS + (CAPITOL_PERSONALITIES if game.name == "capitol" else [])


@pytest.fixture(params=GAME_NAMES)
def game(request: pytest.FixtureRequest) -> Game:
    return games.get(request.param)


def test_fast_bots_never_act_illegally(game: Game) -> None:
    names = fast_bots(game)
    master = Rng(2024)
    counts = range(game.min_players, game.max_players + 1)
    decisions = 0
    n_games = 1200 if game.name == "capitol" else 250
    for g in range(n_games):
        players = list(counts)[g % len(counts)]
        state = game.new_game(players=players, seed=master.next64())
        seated = [
            Checked(bots.make(master.choice(names), game, seat, seed=master.next64()))
            for seat in range(players)
        ]
        bots.play_game(state, seated, max_decisions=20_000)
        assert state.is_over() and state.winners()
        decisions += sum(b.decisions for b in seated)
    assert decisions > n_games * 10


@pytest.mark.parametrize(
    "spec", ["ismcts:iterations=25", "ismcts:iterations=40:widen=1", "pimc:iterations=8"]
)
def test_ismcts_never_acts_illegally(game: Game, spec: str) -> None:
    master = Rng(7)
    for g in range(12):
        players = game.min_players + g % 3 if game.max_players > game.min_players else game.min_players
        state = game.new_game(players=players, seed=master.next64())
        seated = [
            Checked(bots.make(spec, game, seat, seed=master.next64()))
            if seat == g % players
            else Checked(bots.make("heuristic", game, seat, seed=master.next64()))
            for seat in range(players)
        ]
        bots.play_game(state, seated, max_decisions=20_000)
        assert state.is_over()


def test_determinizations_are_consistent_with_the_seat(game: Game) -> None:
    rng = Rng(99)
    for state, seat in midgame_states(game, 150, seed=5):
        view = state.view(seat)
        for _ in range(3):
            world = game.determinize(view, rng)
            # Everything the seat knows (its view, the public log included) comes back unchanged.
            assert world.view(seat) == view
            assert world.legal_actions(seat) == state.legal_actions(seat)
            assert world.waiting_for() == state.waiting_for()
            # The world explains the public record: a spectator sees the same log and table.
            assert world.view(None) == state.view(None)
            if game.name == "capitol":
                check_capitol_world(view, world)
            # A sampled world is a playable game.
            finish = world.clone()
            chooser = Rng(rng.next64())
            while not finish.is_over():
                s = chooser.choice(finish.waiting_for())
                finish.apply(s, chooser.choice(finish.legal_actions(s)))


def check_capitol_world(view: dict, world: GameState) -> None:
    """The sampled cards: 18 in all, three of each role (a big table: its copies of each role), the
    seat's own hand and known cards kept."""
    me = view["you"]
    full = [world.view(s) for s in range(world.num_players)]
    cards: Counter[str] = Counter()
    for s, v in enumerate(full):
        cards.update(v["players"][s]["hidden"])
        cards.update(v["players"][s]["revealed"])
        assert len(v["players"][s]["hidden"]) == (
            view["players"][s]["hidden"] if s != me else len(view["players"][s]["hidden"])
        )
    copies = view["options"].get("copies", 3)
    assert sum(cards.values()) + view["deck"] == 6 * copies
    assert all(n <= copies for n in cards.values())
    for k in view.get("known", []):
        assert k["card"] in full[k["seat"]]["players"][k["seat"]]["hidden"]


def decide(name: str, game: Game, state: GameState, seat: int, seed: int) -> Action:
    bot = bots.make(name, game, seat, seed=seed)
    return bot.act(state.view(seat), state.legal_actions(seat))


# The search bots with the clock out of reach: only their iteration budgets end a decision.
@pytest.mark.parametrize(
    "name", ["heuristic", "easy", "ismcts:iterations=40:seconds=600", "pimc:iterations=6:seconds=600"]
)
def test_decisions_depend_only_on_what_the_seat_may_know(game: Game, name: str) -> None:
    """Two states that differ only in cards the seat cannot see get the same decision."""
    rng = Rng(3)
    compared = 0
    count = 40 if name.startswith(("ismcts", "pimc")) else 150
    for state, seat in midgame_states(game, count, seed=11):
        other = game.determinize(state.view(seat), rng)  # the same view, other hidden cards
        assert other.view(seat) == state.view(seat)
        if other.to_json() == state.to_json():
            continue
        seed = rng.next64()
        assert decide(name, game, state, seat, seed) == decide(name, game, other, seat, seed)
        compared += 1
    assert compared >= count // 2


def test_levels_and_default_make_bots_for_every_game(game: Game) -> None:
    for level in ("easy", "normal", "hard", bots.DEFAULT_LEVEL, "random", "heuristic", "ismcts"):
        bot = bots.make(level, game, 0, seed=1)
        assert isinstance(bot, bots.Bot)
    if game.name == "capitol":
        with pytest.raises(ValueError):
            bots.make("heuristic:personality=nonsense", game, 0)


def test_capitol_log_memo_reads_the_log_like_a_full_read() -> None:
    """The rollouts' incremental log reading (LogMemo) knows what a full read of the log knows."""
    from conflictology.bots.capitol_knowledge import Knowledge, LogMemo

    game = games.get("capitol")
    compared = 0
    for g in range(6):
        state = game.new_game(players=3 + g % 3, seed=40 + g)
        seated = [bots.make("heuristic-bluffer", game, s, seed=g * 7 + s) for s in range(state.num_players)]
        memo = LogMemo()
        while not state.is_over():
            seat = state.waiting_for()[0]
            view = state.view(seat)
            full = Knowledge(view)
            part = Knowledge({**view, "log": view["log"][memo.n :]}, memo)
            for p, q in zip(full.players, part.players, strict=True):
                assert (p.claims, p.caught, p.bluffs_caught, p.claims_checked, p.challenges) == (
                    q.claims,
                    q.caught,
                    q.bluffs_caught,
                    q.claims_checked,
                    q.challenges,
                )
            compared += 1
            state.apply(seat, seated[seat].act(view, state.legal_actions(seat)))
    assert compared > 100


def test_hard_is_each_games_search_bot() -> None:
    from conflictology.bots.ismcts import FlatSearchBot, ISMCTSBot

    capitol = bots.make("hard", games.get("capitol"), 0, seed=1)
    consp = bots.make("hard", games.get("conspiranoicos"), 0, seed=1)
    assert isinstance(capitol, FlatSearchBot) and capitol.seconds == 0.3
    assert type(consp) is ISMCTSBot and consp.seconds == 0.3


def capitol_turns(count: int, seed: int) -> Iterator[tuple[GameState, int]]:
    """Four-player Capitol turns (heuristic play) where some kind of action takes a target."""
    game = games.get("capitol")
    master = Rng(seed)
    found = 0
    while found < count:
        state = game.new_game(players=4, seed=master.next64())
        seated = [bots.make("heuristic", game, s, seed=master.next64()) for s in range(4)]
        stop = master.randrange(40)
        steps = 0
        while not state.is_over():
            seat = state.waiting_for()[0]
            legal = state.legal_actions(seat)
            if steps >= stop and len(legal) > 8 and {"income", "foreign_aid"} <= {a["type"] for a in legal}:
                yield state, seat
                found += 1
                break
            state.apply(seat, seated[seat].act(state.view(seat), legal))
            steps += 1


def test_capitol_ismcts_root_compares_the_heuristics_candidates() -> None:
    """On its turn the tree search compares one action per kind (the heuristic's target), every
    sampled world played after each of them, and keeps the heuristic's choice unless beaten."""
    from conflictology.bots.capitol_search import CapitolSearch

    game = games.get("capitol")
    policy = CapitolSearch()
    for state, seat in capitol_turns(4, seed=21):
        view, legal = state.view(seat), state.legal_actions(seat)
        bot = bots.make("ismcts:iterations=48:seconds=600", game, seat, seed=5)
        action = bot.act(view, legal)
        assert action in legal
        twin = bots.make("ismcts:iterations=48:seconds=600", game, seat, seed=5)
        prior = policy.prior(twin, view, legal)  # the same helper seed as the bot's own
        cands = policy.candidates(twin, view, legal, prior)
        kinds = [a["type"] for a in cands]
        assert len(kinds) == len(set(kinds)) < len(legal)
        table = game.action_table
        stats = bot.last_root_stats
        assert set(stats) == {table.index(a) for a in cands}
        visits = {v for v, _ in stats.values()}
        assert len(visits) == 1 and visits.pop() == bot.last_iterations // len(cands)
        # A margin nothing can clear: the heuristic's choice stands.
        stubborn = bots.make("ismcts:iterations=48:margin=2:seconds=600", game, seat, seed=5)
        assert stubborn.act(view, legal) == prior


def test_capitol_tree_hides_other_seats_card_choices() -> None:
    """The tree is keyed by what the searcher observes: another seat's kept, returned or shown
    cards are hidden from it, its own choices and public actions are not."""
    from conflictology.bots.capitol_search import CapitolSearch

    policy = CapitolSearch()
    keep = {"type": "keep", "cards": ["banker", "judge"]}
    other = {"type": "keep", "cards": ["hacker", "mafia"]}
    assert policy.observe(0, 2, keep, 5) == policy.observe(0, 2, other, 6)
    assert policy.observe(0, 0, keep, 5) != policy.observe(0, 0, other, 6)
    for kind in ("return", "show"):
        assert policy.observe(1, 3, {"type": kind, "card": "judge"}, 9) == kind
    lose = {"type": "lose", "card": "judge"}
    assert policy.observe(1, 3, lose, 9) == 9


def test_capitol_search_plays_each_seat_as_it_has_been_seen_to_play() -> None:
    """The flat search's rollouts play every other seat with dials fitted to its record: a seat
    caught bluffing often is played less honest, one that challenges often more sceptical, a seat
    with no record as the default heuristic; the searcher's own seat plays with its prior's dials
    (``prior_honesty``, ``prior_scepticism``: 0.97 and 0.6 by default with three or more in)."""
    from conflictology.bots.capitol_knowledge import PERSONALITIES, Knowledge
    from conflictology.bots.capitol_search import CapitolSearch

    game = games.get("capitol")
    state = game.new_game(players=3, seed=5)
    k = Knowledge(state.view(0))
    base = PERSONALITIES["heuristic"]
    fresh = CapitolSearch.dials(k)
    assert set(fresh) == {1, 2}
    assert fresh[1]["honesty"] == pytest.approx(base["honesty"])
    assert fresh[1]["scepticism"] == pytest.approx(base["scepticism"])
    me, liar, caller = k.players
    me.bluffs_caught, me.claims_checked = 2, 8
    me.challenges, me.chances_to_challenge = 2, 20
    me.habits.turns, me.habits.attacks = 10, 3
    liar.bluffs_caught, liar.claims_checked = 6, 8
    liar.habits.turns, liar.habits.attacks = 10, 7
    caller.bluffs_caught, caller.claims_checked = 2, 8
    caller.challenges, caller.chances_to_challenge = 9, 20
    caller.habits.turns, caller.habits.attacks = 10, 3
    fitted = CapitolSearch.dials(k)
    assert fitted[1]["honesty"] < base["honesty"] - 0.1
    assert fitted[1]["aggression"] > base["aggression"] + 0.1
    assert fitted[2]["scepticism"] > 1.4 * base["scepticism"]
    assert fitted[2]["honesty"] == pytest.approx(base["honesty"])
    assert fitted[2]["aggression"] == pytest.approx(base["aggression"])
    # rates are read against the searcher's own record: a table that challenges as it does is default
    caller.challenges = me.challenges
    assert CapitolSearch.dials(k)[2]["scepticism"] == pytest.approx(base["scepticism"])

    bot = bots.make("hard:iterations=3", game, 0, seed=1)
    policy = bot.policy  # type: ignore[attr-defined]
    policy.sampler(bot, state.view(0))
    bot.policy_memo.seat_dials = fitted  # type: ignore[attr-defined]
    policy.actor(bot, Rng(1))
    players = bot.policy_memo.rollout_players  # type: ignore[attr-defined]
    assert players[1].honesty == fitted[1]["honesty"]
    assert players[2].scepticism == fitted[2]["scepticism"]
    assert (players[0].honesty, players[0].scepticism) == (0.97, 0.6)
    assert players[0].aggression == base["aggression"]
    old = bots.make("hard:iterations=3:prior_honesty=0.7:prior_scepticism=1", game, 0, seed=1)
    old.policy.sampler(old, state.view(0))  # type: ignore[attr-defined]
    old.policy.actor(old, Rng(1))  # type: ignore[attr-defined]
    me_old = old.policy_memo.rollout_players[0]  # type: ignore[attr-defined]
    assert (me_old.honesty, me_old.scepticism) == (base["honesty"], base["scepticism"])
    off = bots.make("hard:iterations=3:model=0", game, 0, seed=1)
    off.policy.sampler(off, state.view(0))  # type: ignore[attr-defined]
    assert off.policy_memo.seat_dials == {}  # type: ignore[attr-defined]


# Big tables (Capitol at 7-10 seats, docs/rules/capitol.md): every bot of every level, a few games per
# size, the search ones on iteration budgets; the rule players that can fall back count none.
BIG_TABLE_BOTS = [
    "random", "easy", "normal", *CAPITOL_PERSONALITIES, "outside-treason", "outside-treason-js",
    "hard:seconds=0:iterations=12", "ismcts:seconds=0:iterations=15", "pimc:seconds=0:iterations=6",
]


@pytest.mark.parametrize("players", [7, 8, 9, 10])
def test_every_bot_plays_legal_games_at_big_tables(players: int) -> None:
    game = games.get("capitol")
    master = Rng(players)
    for g in range(2):
        state = game.new_game(players=players, seed=master.next64())
        names = [BIG_TABLE_BOTS[(g * players + seat) % len(BIG_TABLE_BOTS)] for seat in range(players)]
        seated = [Checked(bots.make(n, game, seat, seed=master.next64())) for seat, n in enumerate(names)]
        bots.play_game(state, seated, max_decisions=20_000)
        assert state.is_over() and len(state.winners()) == 1
        assert all(b.decisions > 0 for b in seated)
        for b in seated:
            assert getattr(b.inner, "fallbacks", 0) == 0, f"{b.inner.name} fell back"
