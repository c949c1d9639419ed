"""Bot-versus-bot matches: the engine of ``conflictology simulate`` (and of the arena)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from conflictology import bots, games
from conflictology.engine import Rng


@dataclass
class SimulationResult:
    games: int
    wins: dict[str, float]
    draws: int
    decisions: int
    seconds: float
    per_game: list[dict[str, Any]] = field(default_factory=list)

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
) -> SimulationResult:
    """Play ``n_games`` games; seat i of game g is held by ``bot_names[(i + g) % players]``.

    A game with one winner counts a win for the bot that held the winning seat; a shared victory
    counts as a draw.
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
    decisions = 0
    per_game: list[dict[str, Any]] = []
    start = time.perf_counter()
    for g in range(n_games):
        holders = [bot_names[(i + g) % players] for i in range(players)]
        state = game.new_game(players=players, seed=master.next64(), options=options)
        seated = [bots.make(name, game, seat, seed=master.next64()) for seat, name in enumerate(holders)]
        decisions += bots.play_game(state, seated)
        winners = state.winners()
        if len(winners) == 1:
            wins[holders[winners[0]]] += 1
        else:
            draws += 1
        per_game.append({"holders": holders, "winners": winners})
        if on_game is not None:
            on_game(g)
    return SimulationResult(n_games, wins, draws, decisions, time.perf_counter() - start, per_game)
