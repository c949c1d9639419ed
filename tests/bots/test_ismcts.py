"""ISMCTS is game-agnostic: it is checked here on two toy games written against the engine contract.

* Kuhn poker (three cards J Q K, one each, one hidden card per seat): the search must call a bet with
  the K, and its decision may depend only on the view.
* Kuhn poker with a prior that folds every bet: the paired search (the root's candidates compared on
  the same worlds, the prior kept unless clearly beaten) must overrule it with the K and keep it when
  calling is no better.
* Simultaneous guess: both seats pick 0–2 at once, seat 1 wins if it matches seat 0. A search that
  let seat 1 see seat 0's hidden pick would value every pick at 1; decoupled selection values them
  at about 1/3.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from conflictology import bots
from conflictology.bots.ismcts import FlatSearchBot, ISMCTSBot, SearchPolicy, register_policy
from conflictology.engine import Action, ActionTable, Game, GameState, IllegalAction, Rng, View

CARDS = ("J", "Q", "K")


class KuhnState(GameState):
    def __init__(self, hands: list[str], history: list[str]) -> None:
        self.hands = hands
        self.history = history

    @property
    def num_players(self) -> int:
        return 2

    def _to_act(self) -> int | None:
        h = self.history
        if not h:
            return 0
        if h[-1] in ("fold", "call") or h == ["check", "check"]:
            return None
        return len(h) % 2

    def waiting_for(self) -> list[int]:
        seat = self._to_act()
        return [] if seat is None else [seat]

    def legal_actions(self, seat: int) -> list[Action]:
        if seat not in self.waiting_for():
            return []
        if self.history and self.history[-1] == "bet":
            return [{"type": "call"}, {"type": "fold"}]
        return [{"type": "check"}, {"type": "bet"}]

    def apply(self, seat: int, action: Mapping[str, Any]) -> None:
        if dict(action) not in self.legal_actions(seat):
            raise IllegalAction(f"{action!r}")
        self.history.append(action["type"])

    def clone(self) -> KuhnState:
        return KuhnState(list(self.hands), list(self.history))

    def is_over(self) -> bool:
        return not self.waiting_for()

    def winners(self) -> list[int]:
        if not self.is_over():
            return []
        if self.history[-1] == "fold":
            return [len(self.history) % 2]  # the seat after the folder
        return [max((0, 1), key=lambda s: CARDS.index(self.hands[s]))]

    def view(self, seat: int | None) -> View:
        show = self.is_over() and self.history[-1] != "fold"
        return {
            "you": seat,
            "hand": self.hands[seat] if seat is not None else None,
            "shown": list(self.hands) if show else None,
            "history": list(self.history),
        }

    def to_json(self) -> str:
        return json.dumps({"hands": self.hands, "history": self.history})


class Kuhn(Game):
    name = "kuhn"
    title = "Kuhn poker"
    min_players = 2
    max_players = 2
    _table = ActionTable([{"type": t} for t in ("check", "bet", "call", "fold")])

    @property
    def action_table(self) -> ActionTable:
        return self._table

    def default_options(self) -> dict[str, Any]:
        return {}

    def new_game(
        self,
        players: int,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
        deck: Sequence[str] | None = None,
    ) -> KuhnState:
        cards = list(deck) if deck else list(CARDS)
        if not deck:
            Rng(seed or 0).shuffle(cards)
        return KuhnState(cards[:2], [])

    def from_json(self, text: str) -> KuhnState:
        data = json.loads(text)
        return KuhnState(data["hands"], data["history"])

    def determinize(self, view: View, rng: Rng) -> KuhnState:
        me = view["you"]
        other = rng.choice([c for c in CARDS if c != view["hand"]])
        hands = [view["hand"], other] if me == 0 else [other, view["hand"]]
        return KuhnState(hands, list(view["history"]))


KuhnState.game = Kuhn()


class GuessState(GameState):
    def __init__(self, picks: list[int | None]) -> None:
        self.picks = picks

    @property
    def num_players(self) -> int:
        return 2

    def waiting_for(self) -> list[int]:
        return [s for s in (0, 1) if self.picks[s] is None]

    def legal_actions(self, seat: int) -> list[Action]:
        return [{"type": "pick", "n": n} for n in range(3)] if seat in self.waiting_for() else []

    def apply(self, seat: int, action: Mapping[str, Any]) -> None:
        if dict(action) not in self.legal_actions(seat):
            raise IllegalAction(f"{action!r}")
        self.picks[seat] = action["n"]

    def clone(self) -> GuessState:
        return GuessState(list(self.picks))

    def is_over(self) -> bool:
        return not self.waiting_for()

    def winners(self) -> list[int]:
        if not self.is_over():
            return []
        return [1] if self.picks[0] == self.picks[1] else [0]

    def view(self, seat: int | None) -> View:
        done = self.is_over()
        picks = [p if done or s == seat else (p is not None) for s, p in enumerate(self.picks)]
        return {"you": seat, "picks": picks}

    def to_json(self) -> str:
        return json.dumps(self.picks)


class Guess(Game):
    name = "guess"
    title = "Simultaneous guess"
    min_players = 2
    max_players = 2
    _table = ActionTable([{"type": "pick", "n": n} for n in range(3)])

    @property
    def action_table(self) -> ActionTable:
        return self._table

    def default_options(self) -> dict[str, Any]:
        return {}

    def new_game(
        self,
        players: int,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
        deck: Sequence[str] | None = None,
    ) -> GuessState:
        return GuessState([None, None])

    def from_json(self, text: str) -> GuessState:
        return GuessState(json.loads(text))

    def determinize(self, view: View, rng: Rng) -> GuessState:
        picks: list[int | None] = []
        for s, p in enumerate(view["picks"]):
            if s == view["you"] or p is False:
                picks.append(None if p is False else p)
            else:
                picks.append(rng.randrange(3))  # a hidden pick: any of the three
        return GuessState(picks)


GuessState.game = Guess()


def test_kuhn_calls_a_bet_with_the_king() -> None:
    game = Kuhn()
    state = game.new_game(2, deck=["Q", "K", "J"])
    state.apply(0, {"type": "bet"})
    bot = ISMCTSBot(game, 1, seed=3, iterations=300)
    assert bot.act(state.view(1), state.legal_actions(1)) == {"type": "call"}
    assert bot.last_iterations == 300
    visits = {game.action_table.action(i)["type"]: v for i, (v, _) in bot.last_root_stats.items()}
    assert visits["call"] > visits["fold"]


def test_flat_search_calls_with_the_king() -> None:
    """The flat search plays every world once per candidate: with the K a call wins every world,
    a fold loses every one."""
    game = Kuhn()
    state = game.new_game(2, deck=["Q", "K", "J"])
    state.apply(0, {"type": "bet"})
    bot = FlatSearchBot(game, 1, seed=3, iterations=60)
    assert bot.act(state.view(1), state.legal_actions(1)) == {"type": "call"}
    assert bot.last_iterations == 60  # worlds, each played after both candidates
    means = {game.action_table.action(i)["type"]: m for i, (_, m) in bot.last_root_stats.items()}
    assert means == {"call": 1.0, "fold": 0.0}


def test_simultaneous_moves_are_not_seen_by_the_other_seat() -> None:
    game = Guess()
    state = game.new_game(2)
    state.apply(0, {"type": "pick", "n": 2})  # seat 0 submitted; seat 1 sees only that it did
    bot = ISMCTSBot(game, 1, seed=5, iterations=600)
    bot.act(state.view(1), state.legal_actions(1))
    means = [mean for _, mean in bot.last_root_stats.values()]
    assert len(means) == 3 and all(0.15 < m < 0.55 for m in means), means
    # With both seats still to pick, seat 0's search must not see seat 1's pick either.
    fresh = game.new_game(2)
    bot0 = ISMCTSBot(game, 0, seed=5, iterations=600)
    bot0.act(fresh.view(0), fresh.legal_actions(0))
    assert all(0.45 < m < 0.85 for _, m in bot0.last_root_stats.values())


def test_iteration_budget_and_single_legal_action() -> None:
    game = Kuhn()
    state = game.new_game(2, deck=["K", "J", "Q"])
    bot = ISMCTSBot(game, 0, seed=1, iterations=50)
    bot.act(state.view(0), state.legal_actions(0))
    assert bot.last_iterations == 50
    with pytest.raises(ValueError):
        ISMCTSBot(game, 0, iterations=0)


def test_specs_and_levels_parse() -> None:
    assert bots.parse_spec("ismcts:iterations=200:seconds=0.5") == (
        "ismcts",
        {"iterations": 200, "seconds": 0.5},
    )
    assert bots.parse_spec("hard:seconds=2")[1]["seconds"] == 2
    for level in ("easy", "normal", "hard"):
        assert level in bots.names()
    with pytest.raises(ValueError):
        bots.parse_spec("ismcts:iterations")
    with pytest.raises(ValueError):
        bots.make("no-such-bot", Kuhn(), 0)
    bot = bots.make("ismcts:iterations=7", Kuhn(), 0, seed=1)
    assert isinstance(bot, ISMCTSBot) and bot.iterations == 7


class FoldPrior(SearchPolicy):
    """A paired search whose prior folds every bet and otherwise checks (wrong with the K)."""

    paired_root = True
    prior_margin = 0.02

    def prior(self, bot: ISMCTSBot, view: View, legal: list[Action]) -> Action | None:
        return next((a for a in legal if a["type"] in ("fold", "check")), legal[0])


class KuhnFold(Kuhn):
    name = "kuhn-fold"


register_policy("kuhn-fold", FoldPrior())


def facing_a_bet(deck: list[str]) -> KuhnState:
    state = KuhnFold().new_game(2, deck=deck)
    state.apply(0, {"type": "bet"})
    return state


def test_paired_root_overrules_the_prior_only_when_clearly_better() -> None:
    game = KuhnFold()
    # With the K a call wins every world and a fold loses every one: the prior is overruled...
    state = facing_a_bet(["Q", "K", "J"])
    bot = ISMCTSBot(game, 1, seed=3, iterations=40)
    assert bot.paired
    assert bot.act(state.view(1), state.legal_actions(1)) == {"type": "call"}
    means = {game.action_table.action(i)["type"]: m for i, (_, m) in bot.last_root_stats.items()}
    assert means == {"call": 1.0, "fold": 0.0}
    # ...unless the margin asks for more than the search can show.
    strict = ISMCTSBot(game, 1, seed=3, iterations=40, margin=1.5)
    assert strict.act(state.view(1), state.legal_actions(1)) == {"type": "fold"}
    # With the J a call loses every world too: no candidate is better, the prior stands.
    state = facing_a_bet(["Q", "J", "K"])
    bot = ISMCTSBot(game, 1, seed=3, iterations=40)
    assert bot.act(state.view(1), state.legal_actions(1)) == {"type": "fold"}
    # Without the prior (paired search, no policy prior) the best mean is taken: with the Q, a call
    # wins half the worlds (against the J) and a fold none.
    plain = ISMCTSBot(Kuhn(), 1, seed=3, iterations=40, paired=1)
    state = Kuhn().new_game(2, deck=["J", "Q", "K"])
    state.apply(0, {"type": "bet"})
    assert plain.act(state.view(1), state.legal_actions(1)) == {"type": "call"}


def test_paired_root_plays_every_world_after_every_candidate() -> None:
    game = KuhnFold()
    state = facing_a_bet(["K", "Q", "J"])
    bot = ISMCTSBot(game, 1, seed=8, iterations=30)
    bot.act(state.view(1), state.legal_actions(1))
    assert bot.last_iterations == 30  # 15 worlds, each after both candidates
    assert sorted(v for v, _ in bot.last_root_stats.values()) == [15, 15]
    tree = bot.last_tree
    assert tree is not None and tree.visits == 30
    # availability: both candidates were open in every world
    assert all(entry[2] == 30 for entry in tree.stats[1].values())


def test_paired_tree_learns_the_searchers_later_decision() -> None:
    """Seat 0 holds the K and checks or bets; after a check and a bet by seat 1 it decides again.
    That later decision is a node of its tree, with its own statistics: a call wins, a fold loses."""
    game = KuhnFold()
    state = game.new_game(2, deck=["K", "Q", "J"])
    bot = ISMCTSBot(game, 0, seed=4, iterations=400, widen=2)
    bot.act(state.view(0), state.legal_actions(0))
    tree = bot.last_tree
    assert tree is not None
    check = game.action_table.index({"type": "check"})
    bet = game.action_table.index({"type": "bet"})
    later = tree.children[((0, check), (1, bet))]
    stats = {game.action_table.action(i)["type"]: e for i, e in later.stats[0].items()}
    assert set(stats) == {"call", "fold"}
    assert stats["call"][1] == stats["call"][0] > 0  # every call won
    assert stats["fold"][1] == 0  # every fold lost
    assert stats["call"][0] > stats["fold"][0]  # UCB settled on the call once it widened
    for entry in stats.values():
        assert entry[2] >= entry[0]  # available at least as often as chosen


@pytest.mark.parametrize(
    ("make_game", "bot_class", "iterations"),
    [(Kuhn, ISMCTSBot, 200), (Kuhn, FlatSearchBot, 40), (KuhnFold, ISMCTSBot, 40)],
    ids=["ismcts", "flat", "paired"],
)
def test_a_decision_depends_only_on_the_view_and_the_seed(
    make_game: Callable[[], Game], bot_class: type[ISMCTSBot], iterations: int
) -> None:
    """Seat 1 holds the Q in both deals; seat 0's hidden card differs (J or K) and seat 1 cannot know
    which: the same action and the same root statistics, twice over under the same seed."""
    game = make_game()
    decisions = set()
    for deck in (["J", "Q", "K"], ["K", "Q", "J"]):
        state = game.new_game(2, deck=deck)
        state.apply(0, {"type": "bet"})
        for _ in range(2):
            bot = bot_class(game, 1, seed=11, iterations=iterations)
            decisions.add(json.dumps(bot.act(state.view(1), state.legal_actions(1))))
            decisions.add(json.dumps(bot.last_root_stats, sort_keys=True))
    assert len(decisions) == 2  # one action, one set of root statistics, for both worlds
