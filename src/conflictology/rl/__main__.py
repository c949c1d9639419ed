"""``python -m conflictology.rl [GAME [PLAYERS]]``: print observation layouts as Markdown (for docs/rl.md)."""

from __future__ import annotations

import sys

from conflictology import games
from conflictology.rl.encoding import encoder_for


def main(argv: list[str]) -> None:
    names = argv[:1] or games.names()
    for name in names:
        game = games.get(name)
        counts = [int(argv[1])] if len(argv) > 1 else range(game.min_players, game.max_players + 1)
        for players in counts:
            layout = encoder_for(name).layout(players)
            print(f"#### {name}, {players} players: {layout.size} floats\n")
            print(layout.markdown())
            print()


if __name__ == "__main__":
    main(sys.argv[1:])
