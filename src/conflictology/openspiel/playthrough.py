"""OpenSpiel-style playthroughs of both games: ``python -m conflictology.openspiel.playthrough``.

A playthrough pins a game's behaviour in a text file (as OpenSpiel's
``integration_tests/playthroughs`` do): the game and its type, then for every state the history, who
moves, each seat's information state, digests of its observation string and tensor, the legal actions
with their names, the returns and the action applied. The actions are drawn from a fixed seed, so the
same code writes the same file; ``tests/openspiel/test_playthroughs.py`` regenerates every file and
fails on any difference.

Information states only ever grow (a seat's trace, see memory.py), so after the first state each is
written as the lines it gained (``InformationStateString(p) +=``); the full string is the first one
followed by every addition. Observations are written as digests (the first 16 hex digits of SHA-256)
to keep the files small while still pinning them.

``--write`` renews the files in ``corpus/playthroughs/`` (do it on purpose, when a behaviour change is
meant, and read the diff); ``--check`` (the default) reports the files that differ.
"""

from __future__ import annotations

import argparse
import hashlib
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyspiel

from conflictology.engine import Rng
from conflictology.openspiel import game as _registers  # noqa: F401  (the games, registered)

DIRECTORY = Path(__file__).resolve().parents[3] / "corpus" / "playthroughs"


@dataclass(frozen=True)
class Playthrough:
    file: str
    game: str
    params: dict[str, Any]
    seed: int  # of the actions drawn; the deal is the ``seed`` parameter's
    max_states: int  # a cut, so that no file grows past a couple of hundred kilobytes


PLAYTHROUGHS = (
    Playthrough("capitol_2p.txt", "python_conflictology_capitol", {"players": 2, "seed": 1}, 1, 80),
    Playthrough("capitol_3p.txt", "python_conflictology_capitol", {"players": 3, "seed": 2}, 2, 80),
    Playthrough("capitol_4p.txt", "python_conflictology_capitol", {"players": 4, "seed": 3}, 3, 80),
    Playthrough("capitol_6p.txt", "python_conflictology_capitol", {"players": 6, "seed": 4}, 4, 60),
    Playthrough(
        "capitol_4p_options.txt",
        "python_conflictology_capitol",
        {"players": 4, "seed": 5, "steal_blockers": "mafia+reporter", "anyone_challenges_block": True},
        5,
        80,
    ),
    Playthrough("capitol_mini.txt", "python_conflictology_capitol_mini", {}, 6, 80),
    Playthrough("conspiranoicos.txt", "python_conflictology_conspiranoicos", {"seed": 1}, 1, 80),
    Playthrough(
        "conspiranoicos_turn_based.txt",
        "python_conflictology_conspiranoicos",
        {"seed": 2, "turn_based": True},
        2,
        80,
    ),
)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def quoted(items: list[str]) -> str:
    return "[" + ", ".join(f'"{s}"' for s in items) + "]"


def header(game: Any) -> list[str]:
    kind = game.get_type()
    lines = [f"game: {game}", ""]
    for field in (
        "short_name", "long_name", "dynamics", "chance_mode", "information", "utility", "reward_model",
        "min_num_players", "max_num_players", "provides_information_state_string",
        "provides_information_state_tensor", "provides_observation_string", "provides_observation_tensor",
    ):
        lines.append(f"GameType.{field} = {getattr(kind, field)}")
    lines.append(f"GameType.parameter_specification = {sorted(kind.parameter_specification)}")
    lines += [
        "",
        f"NumDistinctActions() = {game.num_distinct_actions()}",
        f"NumPlayers() = {game.num_players()}",
        f"MinUtility() = {game.min_utility()}",
        f"MaxUtility() = {game.max_utility()}",
        f"UtilitySum() = {game.utility_sum()}",
        f"MaxGameLength() = {game.max_game_length()}",
        f"ObservationTensorShape() = {game.observation_tensor_shape()}",
        "ToString() = " + str(game),
    ]
    return lines


def render(spec: Playthrough) -> str:
    """The playthrough's text (the same for the same code, on every machine)."""
    game = pyspiel.load_game(spec.game, spec.params)
    n = game.num_players()
    rng = Rng(spec.seed)
    state = game.new_initial_state()
    out = header(game)
    infos = [""] * n
    for index in range(spec.max_states):
        out += ["", f"# State {index}", f"History() = {state.history()}"]
        out.append(f"IsTerminal() = {state.is_terminal()}")
        out.append(f"CurrentPlayer() = {state.current_player()}")
        for p in range(n):
            info = state.information_state_string(p)
            if infos[p] and info.startswith(infos[p] + "\n"):
                out.append(f"InformationStateString({p}) +=")
                added = info[len(infos[p]) + 1 :]
            else:
                out.append(f"InformationStateString({p}) =")
                added = info
            out += [f"  {line}" for line in added.split("\n")]
            infos[p] = info
        for p in range(n):
            tensor = struct.pack(f"<{game.observation_tensor_size()}f", *state.observation_tensor(p))
            text = state.observation_string(p).encode()
            out.append(f"Observation({p}): string {digest(text)}, tensor {digest(tensor)}")
        out.append(f"Returns() = {state.returns()}")
        if state.is_terminal():
            break
        if state.is_simultaneous_node():
            move = []
            for p in range(n):
                legal = state.legal_actions(p)
                out.append(f"LegalActions({p}) = {legal}")
                named = quoted([state.action_to_string(p, a) for a in legal])
                out.append(f"StringLegalActions({p}) = {named}")
                move.append(rng.choice(legal))
            names = [state.action_to_string(p, a) for p, a in enumerate(move)]
            out += ["", f"# Apply joint action {quoted(names)}", f"actions: {move}"]
            state.apply_actions(move)
        else:
            player, legal = state.current_player(), state.legal_actions()
            out.append(f"LegalActions() = {legal}")
            out.append(f"StringLegalActions() = {quoted([state.action_to_string(player, a) for a in legal])}")
            action = rng.choice(legal)
            out += ["", f'# Apply action "{state.action_to_string(player, action)}"', f"action: {action}"]
            state.apply_action(action)
    else:
        out += ["", f"# Cut after {spec.max_states} states"]
    return "\n".join(out) + "\n"


def differences(directory: Path = DIRECTORY) -> list[str]:
    """The files that are missing or differ from what the code writes now."""
    return [
        spec.file
        for spec in PLAYTHROUGHS
        if not (directory / spec.file).exists() or (directory / spec.file).read_text("utf-8") != render(spec)
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--write", action="store_true", help="renew the files in corpus/playthroughs/")
    parser.add_argument("--dir", type=Path, default=DIRECTORY, help="where the files are")
    args = parser.parse_args(argv)
    if args.write:
        args.dir.mkdir(parents=True, exist_ok=True)
        for spec in PLAYTHROUGHS:
            (args.dir / spec.file).write_text(render(spec), "utf-8")
            print(f"wrote {args.dir / spec.file}")
        return 0
    changed = differences(args.dir)
    for name in changed:
        print(f"differs: {args.dir / name}")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
