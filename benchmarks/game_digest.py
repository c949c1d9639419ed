"""A digest of many seeded random Capitol games, to show that a change to the engine plays the same
games: every legal list handed out, every final state's JSON (and its clone's) and its spectator view.

    python -m benchmarks.game_digest [--seeds 300]             # this tree
    PYTHONPATH=other/src python -m benchmarks.game_digest      # another tree: the same line, or not

Games at 2 to 10 seats, ``--seeds`` of each, chosen by the driver every engine benchmark uses.
"""

from __future__ import annotations

import argparse
import hashlib
import random

from conflictology import games


def digest(seeds: int) -> tuple[int, str]:
    game = games.get("capitol")
    h = hashlib.sha256()
    decisions = 0
    for players in range(2, 11):
        for seed in range(seeds):
            chooser = random.Random(seed * 100 + players)
            state = game.new_game(players=players, seed=chooser.getrandbits(64))
            waiting = state.waiting_for()
            while waiting:
                seat = waiting[0] if len(waiting) == 1 else chooser.choice(waiting)
                legal = state.legal_actions(seat)
                h.update(repr(legal).encode())
                state.apply(seat, chooser.choice(legal))
                decisions += 1
                waiting = state.waiting_for()
            h.update(state.to_json().encode())
            h.update(state.clone().to_json().encode())
            h.update(repr(state.view(None)).encode())
    return decisions, h.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--seeds", type=int, default=300, help="games at each table size")
    decisions, text = digest(parser.parse_args().seeds)
    print(f"{decisions} decisions, sha256 {text}")


if __name__ == "__main__":
    main()
