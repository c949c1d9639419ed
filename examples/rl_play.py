"""Play the PettingZoo environments with a random policy and with our heuristic bot; print win rates.

    python examples/rl_play.py                 # both games, 200 games per match-up
    python examples/rl_play.py --game capitol --players 4 --games 500 --seed 7

Two match-ups per game, through the AEC loop exactly as a learning agent would see it:
  1. every seat plays the random policy (it picks uniformly among the action mask's legal actions);
  2. one seat (rotated from game to game, so no seat is favoured) plays the heuristic bot through
     ``rl.BotPolicy``, the other seats the random policy.
The heuristic bot decides from the agent's own view (``env.view(agent)``) and legal actions, never
from the full state. Needs the rl extra: ``pip install "conflictology[rl]"``.
"""

from __future__ import annotations

import argparse
import time

from conflictology import bots, games, rl
from conflictology.engine import Rng

FALLBACK = "ismcts:iterations=40"


def pick_bot(game_name: str, wanted: str) -> str:
    try:
        bots.check(wanted, games.get(game_name))
        return wanted
    except ValueError:
        print(f"  note: no {wanted!r} bot for {game_name} yet; using {FALLBACK!r} in its place")
        return FALLBACK


def play(game_name: str, players: int, n_games: int, seed: int, bot: str | None) -> tuple[list[float], float]:
    """Wins per seat role: index 0 is the bot's seat (or seat 0 when every seat is random)."""
    env = rl.env(game_name, players)
    rng = Rng(seed)
    wins = [0.0] * players  # wins[k]: the seat k places after the featured seat
    start = time.perf_counter()
    for g in range(n_games):
        env.reset(seed=seed * 100_003 + g)
        featured = g % players
        policy = rl.BotPolicy(bot, seed=rng.next64()) if bot else None
        final: dict[str, float] = {}
        for agent in env.agent_iter():
            obs, reward, terminated, truncated, _ = env.last()
            if terminated or truncated:
                final[agent] = reward
                env.step(None)
            elif policy is not None and agent == f"player_{featured}":
                env.step(policy(env, agent))
            else:
                env.step(rl.random_policy(obs, rng))
        for agent, reward in final.items():
            seat = int(agent.split("_")[1])
            if reward > 0:
                wins[(seat - featured) % players] += 1
            elif reward == 0:  # a shared victory: half a win each (two-player games)
                wins[(seat - featured) % players] += 0.5
    return [w / n_games for w in wins], time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--game", choices=games.names(), help="one game (default: both)")
    parser.add_argument("--players", type=int, default=3, help="Capitol seats (Conspiranoicos is 2)")
    parser.add_argument("--games", type=int, default=200, help="games per match-up")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bot", default="heuristic", help="the bot to compare (default: heuristic)")
    args = parser.parse_args()
    for name in [args.game] if args.game else games.names():
        game = games.get(name)
        players = min(max(args.players, game.min_players), game.max_players)
        print(f"{game.title}: {players} players, {args.games} games per match-up")
        rates, secs = play(name, players, args.games, args.seed, None)
        print(f"  random everywhere       one seat wins {rates[0]:6.1%}   (fair share {1 / players:.1%})"
              f"   {args.games / secs:6.0f} games/s")
        bot = pick_bot(name, args.bot)
        rates, secs = play(name, players, args.games, args.seed, bot)
        print(f"  {bot:<22}  wins     {rates[0]:6.1%}   against random opponents"
              f"   {args.games / secs:6.0f} games/s")


if __name__ == "__main__":
    main()
