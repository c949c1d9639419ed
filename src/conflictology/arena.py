"""A round robin between bots, rated with OpenSkill (Plackett–Luce): ``conflictology arena``.

Every table of ``players`` distinct bots drawn from the list meets (all combinations; with fewer bots
than seats, one table where the bots fill the seats in turn), and plays ``games`` games with the
seats rotated from game to game, so each bot holds each seat equally often. After every game the
bots at the table are rated: a bot that held a winning seat ranks first, the rest tie behind.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from openskill.models import PlackettLuce

from conflictology import bots, games
from conflictology.engine import Rng
from conflictology.simulate import MAX_DECISIONS


@dataclass
class Standing:
    bot: str
    games: int = 0
    wins: float = 0.0
    mu: float = 0.0
    sigma: float = 0.0
    decisions: int = 0
    seconds: float = 0.0

    @property
    def ordinal(self) -> float:
        """The conservative rating (mu − 3 sigma) the table is sorted by."""
        return self.mu - 3 * self.sigma

    @property
    def win_share(self) -> float:
        return self.wins / self.games if self.games else 0.0

    def to_json(self) -> dict[str, Any]:
        lo, hi = wilson(self.wins, self.games)
        return {
            "bot": self.bot,
            "games": self.games,
            "wins": self.wins,
            "win_share": round(self.win_share, 4),
            "win_share_95": [round(lo, 4), round(hi, 4)],
            "mu": round(self.mu, 3),
            "sigma": round(self.sigma, 3),
            "ordinal": round(self.ordinal, 3),
            "seconds_per_decision": round(self.seconds / self.decisions, 5) if self.decisions else 0.0,
        }


@dataclass
class ArenaResult:
    game: str
    players: int
    games: int
    standings: list[Standing]
    # pairwise[a][b]: games a won at a table where b sat (a's wins "against" b)
    pairwise: dict[str, dict[str, float]] = field(default_factory=dict)
    meetings: dict[str, dict[str, int]] = field(default_factory=dict)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "players": self.players,
            "games": self.games,
            "standings": [s.to_json() for s in self.standings],
            "pairwise": self.pairwise,
            "meetings": self.meetings,
            "seconds": round(self.seconds, 2),
        }


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval (95 %) of a win share."""
    if n <= 0:
        return 0.0, 1.0
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def tables(bot_names: Sequence[str], players: int) -> list[list[str]]:
    """The line-ups of the round robin, in a stable order."""
    distinct = list(dict.fromkeys(bot_names))
    if len(distinct) < 2:
        raise ValueError("an arena needs at least two different bots")
    if len(distinct) <= players:
        return [[distinct[i % len(distinct)] for i in range(players)]]
    return [list(combo) for combo in itertools.combinations(distinct, players)]


class _TimedBot(bots.Bot):
    """Wraps a bot to count its decisions and the time they took."""

    def __init__(self, inner: bots.Bot, standing: Standing) -> None:
        self.inner = inner
        self.standing = standing
        self.name = inner.name
        self.seat = inner.seat
        self.game = inner.game

    def act(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
        start = time.perf_counter()
        action = self.inner.act(view, legal)
        self.standing.seconds += time.perf_counter() - start
        self.standing.decisions += 1
        return action


def run_arena(
    game_name: str,
    bot_names: Sequence[str],
    games_per_table: int,
    players: int | None = None,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    on_game: Callable[[int, int], None] | None = None,
    max_decisions: int = MAX_DECISIONS,
) -> ArenaResult:
    """Play the round robin; ``on_game(done, total)`` is called after each game (a progress bar).
    A game stopped after ``max_decisions`` has no winner and rates nobody."""
    game = games.get(game_name)
    players = game.min_players if players is None else players
    game.check_players(players)
    if games_per_table < 1:
        raise ValueError("games must be at least 1")
    for name in bot_names:
        bots.check(name, game)
    line_ups = tables(bot_names, players)
    model = PlackettLuce()
    ratings = {name: model.rating(name=name) for name in dict.fromkeys(bot_names)}
    standings = {name: Standing(name) for name in ratings}
    pairwise = {a: {b: 0.0 for b in ratings if b != a} for a in ratings}
    meetings = {a: {b: 0 for b in ratings if b != a} for a in ratings}
    master = Rng(Rng.fresh_seed() if seed is None else seed)
    total = len(line_ups) * games_per_table
    done = 0
    start = time.perf_counter()
    for line_up in line_ups:
        for g in range(games_per_table):
            holders = [line_up[(i + g) % players] for i in range(players)]
            state = game.new_game(players=players, seed=master.next64(), options=options)
            seated: list[bots.Bot] = [
                _TimedBot(bots.make(name, game, seat, seed=master.next64()), standings[name])
                for seat, name in enumerate(holders)
            ]
            with contextlib.suppress(bots.GameTooLong):  # no winner (simulate.MAX_DECISIONS)
                bots.play_game(state, seated, max_decisions=max_decisions)
            winners = state.winners()
            at_table = list(dict.fromkeys(holders))
            won = {holders[w] for w in winners}
            for name in at_table:
                standings[name].games += 1
                if name in won:
                    standings[name].wins += 1 / len(won)
                for other in at_table:
                    if other != name:
                        meetings[name][other] += 1
                        if name in won:
                            pairwise[name][other] += 1 / len(won)
            if 0 < len(won) < len(at_table):
                ranks = [1.0 if name in won else 2.0 for name in at_table]
                rated = model.rate([[ratings[name]] for name in at_table], ranks=ranks)
                for name, team in zip(at_table, rated, strict=True):
                    ratings[name] = team[0]
            done += 1
            if on_game is not None:
                on_game(done, total)
    for name, rating in ratings.items():
        standings[name].mu = rating.mu
        standings[name].sigma = rating.sigma
    ordered = sorted(standings.values(), key=lambda s: s.ordinal, reverse=True)
    return ArenaResult(
        game_name, players, done, ordered, pairwise, meetings, time.perf_counter() - start
    )
