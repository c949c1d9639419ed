"""Where an engine's time goes: cProfile over random playouts, the top functions by own time.

    python -m benchmarks.profile_engine [capitol|conspiranoicos] [--players 6] [--games 3000]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random

from benchmarks.engine import play_random
from conflictology import games


def playouts(game_name: str, players: int, count: int) -> int:
    game = games.get(game_name)
    chooser = random.Random(1)
    total = 0
    for _ in range(count):
        total += play_random(game.new_game(players=players, seed=chooser.getrandbits(64)), chooser)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("game", nargs="?", default="capitol")
    parser.add_argument("--players", type=int, default=6)
    parser.add_argument("--games", type=int, default=3000)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    players = 2 if args.game == "conspiranoicos" else args.players
    profiler = cProfile.Profile()
    profiler.enable()
    decisions = playouts(args.game, players, args.games)
    profiler.disable()
    print(f"{args.game}, {players} players: {args.games} games, {decisions} decisions")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
