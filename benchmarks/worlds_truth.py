"""How true `hard`'s sampled worlds are to the claims (docs/bots.md, "How the bots play beside people").

    python -m benchmarks.worlds_truth --players 4 --games 200 --seed 2026
    python -m benchmarks.worlds_truth --players 4 --games 60 --seed 2026 --tries 400 --worlds 30
    python -m benchmarks.worlds_truth --players 4 --games 200 --seed 2026 --params :worlds=reject:claims=flat

Seated `normal` bots play Capitol with the engine directly. At each chance seat 0 has to challenge
(a claim's window or a block's, as ``bots_like_people.census_key`` reads it), worlds are drawn from
seat 0's view as `hard`'s flat search draws them, and the share of them in which the claimant holds
the claimed role is set beside the truth (whether the claimant holds it). Printed as a table by
window and role, and by window and cards (seat 0's against the claimant's), with every chance
counted once more in the row ``all``. ``--tries`` sets how many draws a world gets before it is taken
whatever its weight, or by its weight among them (``CapitolSearch.tries``); ``--params`` are added to
the search's spec (``:worlds=reject``, ``:claims=flat``, ``:bluff_scale=0.3``…).
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from typing import Any

from benchmarks.bots_like_people import census_key
from conflictology import bots, games
from conflictology.bots.capitol_search import CapitolSearch
from conflictology.engine import Rng


def measure(
    players: int, n_games: int, seed: int, worlds: int, params: str = ""
) -> dict[tuple[str, str], list[float]]:
    """(window, role or cards) -> [chances, claimant held it, held in the worlds (sum of shares)]."""
    game = games.get("capitol")
    master = Rng(seed)
    counts: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0, 0.0])
    for g in range(n_games):
        state: Any = game.new_game(players=players, seed=master.next64())
        seated = [bots.make("normal", game, s, seed=master.next64()) for s in range(players)]
        hard: Any = bots.make("hard:iterations=200:seconds=9" + params, game, 0, seed=master.next64())
        while waiting := state.waiting_for():
            seat = waiting[0]
            legal = state.legal_actions(seat)
            chance = seat == 0 and any(a["type"] == "challenge" for a in legal)
            kind = census_key(state, 0) if chance else None
            if kind is not None:
                key, truth = kind
                if state.phase == "challenge":
                    claimant, role = state.actor, state.claim
                else:
                    claimant, role = state.blocker, state.block_claim
                draw = hard.policy.sampler(hard, state.view(0))
                rng = Rng(g)
                held = sum(role in draw(rng).hidden[claimant] for _ in range(worlds)) / worlds
                window, claimed, cards, _alive = key.split("|")
                for row in ((window, claimed), (window, cards), ("all", "all")):
                    c = counts[row]
                    c[0] += 1
                    c[1] += truth == "held"
                    c[2] += held
            state.apply(seat, seated[seat].act(state.view(seat), legal))
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--worlds", type=int, default=100, help="worlds drawn at each chance")
    ap.add_argument("--tries", type=int, help="draws before a world is taken whatever its weight")
    ap.add_argument("--params", default="", help="the search's params, e.g. ':worlds=resample:claims=role'")
    ap.add_argument("--min", type=int, default=20, help="rows with fewer chances are left out")
    args = ap.parse_args()
    if args.tries is not None:
        CapitolSearch.tries = args.tries
    counts = measure(args.players, args.games, args.seed, args.worlds, args.params)
    print(f"{args.players} players, {args.games} games, seed {args.seed}, {CapitolSearch.tries} tries"
          f"{args.params}: seat 0's chances to challenge (normal)")
    print("| window | role / cards | chances | claimant holds it, % (truth) | in hard's worlds, % |")
    print("|---|---|---|---|---|")
    for (window, what), (n, held, shares) in sorted(counts.items(), key=lambda kv: -kv[1][0]):
        if n >= args.min:
            print(f"| {window} | {what} | {n:.0f} | {100 * held / n:.0f} | {100 * shares / n:.0f} |")


if __name__ == "__main__":
    main()
