"""Bot-versus-bot matches: the engine of ``conflictology simulate`` (and of the arena)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from conflictology import bots, games
from conflictology.engine import Rng

# A Capitol or Conspiranoicos game between bots takes at most a few hundred decisions (361 at most in
# 150 six-player games of the outside AI); two bots that never attack can loop forever (two seats of
# coupml's port with Mafias and no money steal $0 from each other): such a game is stopped here.
MAX_DECISIONS = 2000


@dataclass
class SimulationResult:
    games: int
    wins: dict[str, float]
    draws: int
    decisions: int
    seconds: float
    per_game: list[dict[str, Any]] = field(default_factory=list)
    # Per bot name: decisions asked (with more than one legal action) and their wall and CPU seconds.
    bot_decisions: dict[str, int] = field(default_factory=dict)
    bot_seconds: dict[str, float] = field(default_factory=dict)
    bot_cpu_seconds: dict[str, float] = field(default_factory=dict)
    bot_max_seconds: dict[str, float] = field(default_factory=dict)
    # Games stopped at ``max_decisions`` (no winner; counted among the draws).
    unfinished: int = 0

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds if self.seconds > 0 else float("inf")

    def to_json(self) -> dict[str, Any]:
        return {
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "games_per_second": round(self.games_per_second, 3),
        }


def simulate(
    game_name: str,
    players: int,
    n_games: int,
    bot_names: Sequence[str],
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    on_game: Callable[[int], None] | None = None,
    max_decisions: int = MAX_DECISIONS,
) -> SimulationResult:
    """Play ``n_games`` games; seat i of game g is held by ``bot_names[(i + g) % players]``.

    A game with one winner counts a win for the bot that held the winning seat; a shared victory
    counts as a draw, and so does a game stopped after ``max_decisions`` (``unfinished``).
    """
    game = games.get(game_name)
    game.check_players(players)
    if len(bot_names) != players:
        raise ValueError(f"need one bot name per seat: {players} seats, {len(bot_names)} names")
    for name in bot_names:
        bots.check(name, game)  # a name, a level or a spec such as "ismcts:iterations=300"
    master = Rng(Rng.fresh_seed() if seed is None else seed)
    wins: dict[str, float] = {name: 0 for name in bot_names}
    draws = 0
    unfinished = 0
    decisions = 0
    per_game: list[dict[str, Any]] = []
    timing = SimulationResult(0, {}, 0, 0, 0.0)
    start = time.perf_counter()
    for g in range(n_games):
        holders = [bot_names[(i + g) % players] for i in range(players)]
        state = game.new_game(players=players, seed=master.next64(), options=options)
        seated: list[bots.Bot] = [
            _Timed(bots.make(name, game, seat, seed=master.next64()), name, timing)
            for seat, name in enumerate(holders)
        ]
        try:
            decisions += bots.play_game(state, seated, max_decisions=max_decisions)
        except bots.GameTooLong:
            decisions += max_decisions
            unfinished += 1
        winners = state.winners()
        if len(winners) == 1:
            wins[holders[winners[0]]] += 1
        else:
            draws += 1
        per_game.append({"holders": holders, "winners": winners})
        if on_game is not None:
            on_game(g)
    return SimulationResult(
        n_games, wins, draws, decisions, time.perf_counter() - start, per_game,
        timing.bot_decisions, timing.bot_seconds, timing.bot_cpu_seconds, timing.bot_max_seconds,
        unfinished,
    )


class _Timed(bots.Bot):
    """Times a bot's decisions (those with a real choice) into a result's per-bot counters."""

    def __init__(self, inner: bots.Bot, name: str, into: SimulationResult) -> None:
        self.inner = inner
        self.name = name
        self.seat = inner.seat
        self.game = inner.game
        self.into = into

    def act(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
        if len(legal) < 2:
            return self.inner.act(view, legal)
        wall, cpu = time.perf_counter(), time.process_time()
        action = self.inner.act(view, legal)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        r, name = self.into, self.name
        r.bot_decisions[name] = r.bot_decisions.get(name, 0) + 1
        r.bot_seconds[name] = r.bot_seconds.get(name, 0.0) + wall
        r.bot_cpu_seconds[name] = r.bot_cpu_seconds.get(name, 0.0) + cpu
        r.bot_max_seconds[name] = max(r.bot_max_seconds.get(name, 0.0), wall)
        return action
