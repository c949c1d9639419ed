"""CFR on Capitol's mini variant, and the exploitability of our bots there: ``python -m
conflictology.openspiel.cfr_mini``.

The mini variant (``python_conflictology_capitol_mini``, docs/rules/capitol.md "Small variants") is
small enough to hold whole: its explicit-chance OpenSpiel game is walked once, every history, and
written as an extensive-form game (Gambit's EFG text, which ``pyspiel.load_efg_game`` reads), one
information set per distinct ``information_state_string``. OpenSpiel's own C++ ``CFRSolver`` /
``CFRPlusSolver`` and ``nash_conv`` then run on that table at C++ speed; walking the Python game
itself costs about a minute per pass, and CFR needs hundreds of passes. The table is the game: the
same histories, chance probabilities, information sets, legal actions and returns (``tests``
check it against the Python game).

A bot is turned into a policy of the game by asking it, at every information set, what it plays in
the seat's view there (any history of the set: the view is the same), ``samples`` times with
different seeds; its policy is how often it chose each action (a random bot: uniform). NashConv is
then OpenSpiel's: the sum over both seats of what a best response gains against the policy, 0 for
a Nash equilibrium; returns are +1 / -1 (a shared win 0 / 0), so NashConv is at most 2 (a best
response that wins every game from both seats).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import pyspiel

from conflictology import bots
from conflictology.openspiel import game as _registers  # noqa: F401  (the games, registered)
from conflictology.openspiel.game import ConflictologyState, table_of

GAME = "python_conflictology_capitol_mini"


@dataclass
class InfoSet:
    number: int  # the EFG information set's number among its player's (1, 2, …)
    player: int
    actions: list[int]  # the Python game's action indices, legal here
    names: list[str]  # their names (the EFG's action labels)
    state: ConflictologyState  # one history of the set (its seat's view is the set's)


@dataclass
class Tree:
    efg: str
    infosets: dict[str, InfoSet] = field(default_factory=dict)  # by information_state_string
    histories: int = 0
    terminals: int = 0


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _prob(p: float) -> str:
    return str(Fraction(p).limit_denominator(1 << 20))


def build(game: Any) -> Tree:
    """The whole game as an EFG text, with its information sets."""
    tree = Tree(efg="")
    lines = [f'EFG 2 R {_quoted(str(game))} {{ "Seat 0" "Seat 1" }}', ""]
    chance_sets = [0]
    per_player = [0, 0]

    def walk(state: ConflictologyState, depth: int) -> None:
        tree.histories += 1
        pad = "  " * depth
        if state.is_terminal():
            tree.terminals += 1
            returns = " ".join(repr(float(r)) for r in state.returns())
            lines.append(f'{pad}t "" {tree.terminals} "" {{ {returns} }}')
            return
        if state.is_chance_node():
            chance_sets[0] += 1
            outcomes = state.chance_outcomes()
            labels = " ".join(f'"c{a}" {_prob(p)}' for a, p in outcomes)
            lines.append(f'{pad}c "" {chance_sets[0]} "" {{ {labels} }} 0')
            for a, _ in outcomes:
                walk(state.child(a), depth + 1)
            return
        player = state.current_player()
        key = state.information_state_string(player)
        info = tree.infosets.get(key)
        legal = state.legal_actions()
        if info is None:
            names = [state.action_to_string(player, a) for a in legal]
            per_player[player] += 1
            info = InfoSet(per_player[player], player, legal, names, state.clone())
            tree.infosets[key] = info
        elif info.actions != legal:
            raise RuntimeError(f"two histories of one information set have different actions: {key!r}")
        labels = " ".join(_quoted(n) for n in info.names)
        lines.append(f'{pad}p "" {player + 1} {info.number} "{info.number}" {{ {labels} }} 0')
        for a in legal:
            walk(state.child(a), depth + 1)

    walk(game.new_initial_state(), 0)
    tree.efg = "\n".join(lines) + "\n"
    return tree


def efg_actions(efg_game: Any) -> dict[str, dict[str, int]]:
    """The EFG game's information state strings, each with its actions' ids by label."""
    out: dict[str, dict[str, int]] = {}
    stack = [efg_game.new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            continue
        if not state.is_chance_node():
            key = state.information_state_string()
            if key not in out:
                out[key] = {state.action_to_string(a): a for a in state.legal_actions()}
        stack += [state.child(a) for a in state.legal_actions()]
    return out


def efg_key(info: InfoSet) -> str:
    """The EFG game's information state string of a set: player, player, number, name."""
    return f"{info.player}-{info.player}-{info.number}-{info.number}"


def bot_policy(tree: Tree, spec: str, samples: int, seed: int = 1) -> dict[str, list[tuple[int, float]]]:
    """A bot as a policy of the game: at each information set, how often it chose each legal
    action (Python game action indices), over ``samples`` questions with different seeds."""
    out: dict[str, list[tuple[int, float]]] = {}
    engine = tree_engine(tree)
    for key, info in tree.infosets.items():
        if spec == "random":
            out[key] = [(a, 1 / len(info.actions)) for a in info.actions]
            continue
        state = info.state.engine_state
        table = table_of(state)
        view = state.view(info.player)
        chosen: Counter[int] = Counter()
        for k in range(samples):
            bot = bots.make(spec, engine, info.player, seed=seed + 7919 * k + 2 * info.number + info.player)
            action = table.index(bot.act(view, state.legal_actions(info.player)))
            if action not in info.actions:
                raise RuntimeError(f"{spec} played an illegal action {action} at {key!r}")
            chosen[action] += 1
        out[key] = [(a, chosen[a] / samples) for a in info.actions]
    return out


def tree_engine(tree: Tree) -> Any:
    first = next(iter(tree.infosets.values()))
    return first.state.engine_state.game


def as_efg_policy(
    tree: Tree, policy: dict[str, list[tuple[int, float]]], efg_ids: dict[str, dict[str, int]]
) -> Any:
    """A policy of the Python game's information sets as a policy of the EFG game."""
    table: dict[str, list[tuple[int, float]]] = {}
    for key, info in tree.infosets.items():
        ids = efg_ids[efg_key(info)]
        names = dict(zip(info.actions, info.names, strict=True))
        table[efg_key(info)] = [(ids[names[a]], p) for a, p in policy[key]]
    return pyspiel.TabularPolicy(table)


def cfr(efg_game: Any, checkpoints: Sequence[int], plus: bool = False) -> list[tuple[int, float, float]]:
    """(iterations, NashConv of the average policy, seconds so far) at each checkpoint."""
    solver = pyspiel.CFRPlusSolver(efg_game) if plus else pyspiel.CFRSolver(efg_game)
    out = []
    start = time.perf_counter()
    done = 0
    for target in sorted(checkpoints):
        for _ in range(target - done):
            solver.evaluate_and_update_policy()
        done = target
        nash = pyspiel.nash_conv(efg_game, solver.average_policy())
        out.append((target, nash, time.perf_counter() - start))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--iterations", default="1,10,100,1000", help="CFR checkpoints, comma-separated")
    parser.add_argument("--bots", default="random,normal,hard:seconds=0.02", help="bots, comma-separated")
    parser.add_argument("--samples", type=int, default=16, help="questions per information set (a bot)")
    parser.add_argument("--hard-samples", type=int, default=1, help="questions per set for a search bot")
    parser.add_argument("--stalemate-turns", type=int, default=0, help="override the mini's 4 turns")
    args = parser.parse_args(argv)
    params: dict[str, Any] = {}
    if args.stalemate_turns:
        params["stalemate_turns"] = args.stalemate_turns
    game = pyspiel.load_game(GAME, params)
    start = time.perf_counter()
    tree = build(game)
    counts = Counter(i.player for i in tree.infosets.values())
    print(f"{game}")
    print(
        f"histories {tree.histories:,}, terminal {tree.terminals:,}, information sets "
        f"{len(tree.infosets):,} (seat 0: {counts[0]:,}, seat 1: {counts[1]:,}); "
        f"walked in {time.perf_counter() - start:.1f} s"
    )
    efg_game = pyspiel.load_efg_game(tree.efg)
    ids = efg_actions(efg_game)
    checkpoints = [int(x) for x in args.iterations.split(",")]
    print("\n| solver | iterations | NashConv | seconds |\n|---|---|---|---|")
    for plus in (False, True):
        for it, nash, secs in cfr(efg_game, checkpoints, plus=plus):
            print(f"| {'CFR+' if plus else 'CFR'} | {it:,} | {nash:.4f} | {secs:.1f} |")
    print("\n| bot | questions per set | NashConv | seconds |\n|---|---|---|---|")
    for spec in args.bots.split(","):
        begin = time.perf_counter()
        search = bots.cost(spec, tree_engine(tree)) == "search"
        samples = 1 if spec == "random" else args.hard_samples if search else args.samples
        policy = as_efg_policy(tree, bot_policy(tree, spec, samples), ids)
        nash = pyspiel.nash_conv(efg_game, policy)
        print(f"| `{spec}` | {samples} | {nash:.4f} | {time.perf_counter() - begin:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
