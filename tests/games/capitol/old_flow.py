"""The decision sequences of games played under the two-prompt flow (before the target of a Hacker or a
Mafia answered once), kept to check that the one-prompt flow rules the same choices the same way.

``python tests/games/capitol/old_flow.py`` wrote ``data/old_flow_games.json`` at commit 7d0c876 (the
last commit of the two-prompt flow): random games with a biased random player (it challenges and blocks
often, so that every path of the windows is taken), at 2-6 seats, with and without ``steal_blockers``
and ``anyone_challenges_block``. Each game: its seed, seats and options, its decisions as
``[seat, action index, phase]`` (the phase's initial,
``k`` for ``block_challenge``) and its outcome (``outcome``: a digest of the final log, hands, money
and deck; ``log``: the log's length).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from conflictology.engine import Rng
from conflictology.games.capitol.game import CapitolGame

HERE = Path(__file__).parent / "data" / "old_flow_games.json"

CONFIGS: list[dict[str, Any]] = [
    {},
    {"steal_blockers": ["mafia", "reporter"]},
    {"steal_blockers": ["mafia", "police", "reporter"], "anyone_challenges_block": True},
    {"anyone_challenges_block": True},
]


OUTCOME = ("log", "money", "hidden", "revealed", "alive", "deck", "treasury", "winner", "tied", "honesty")


def outcome(state: Any) -> str:
    """What a game's choices decided, as a digest: the log, the hands, the money, the deck (not the
    count of decisions asked, which the one-prompt flow lowers)."""
    doc = json.loads(state.to_json())
    text = json.dumps({k: doc[k] for k in OUTCOME}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def play(seed: int, players: int, options: dict[str, Any]) -> dict[str, Any]:
    game = CapitolGame()
    state = game.new_game(players, seed=seed, options=options)
    rng = Rng(seed * 7919 + 1)
    table = state.action_table
    moves: list[list[Any]] = []
    while not state.is_over():
        for seat in state.waiting_for():
            if state.is_over() or seat not in state.waiting_for():
                continue
            legal = state.legal_actions(seat)
            phase = str(state.phase)
            types = [a["type"] for a in legal]
            if phase in ("challenge", "block_challenge"):
                action = legal[types.index("challenge")] if rng.random() < 0.3 else legal[types.index("pass")]
            elif phase == "block":
                blocks = [a for a in legal if a["type"] == "block"]
                action = rng.choice(blocks) if rng.random() < 0.6 else legal[types.index("pass")]
            else:
                action = rng.choice(legal)
            moves.append([seat, table.index(action), phase[0] if phase != "block_challenge" else "k"])
            state.apply(seat, action)
            break
    return {"seed": seed, "players": players, "options": options, "moves": moves, "outcome": outcome(state),
            "log": len(state.log)}


def main() -> None:
    games = []
    seed = 0
    for players in range(2, 7):
        for options in CONFIGS:
            for _ in range(5):
                seed += 1
                g = play(seed, players, options)
                if g["moves"] and len(g["moves"]) >= 1900:  # near the decision cap, which counts prompts
                    continue
                games.append(g)
    HERE.parent.mkdir(exist_ok=True)
    HERE.write_text(json.dumps(games, separators=(",", ":")) + "\n")
    decisions = sum(len(g["moves"]) for g in games)
    print(f"{len(games)} games, {decisions} decisions, {HERE.stat().st_size} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
