"""Where an engine's time goes: cProfile over random playouts, the top functions by own time.

    python -m benchmarks.profile_engine [capitol|conspiranoicos] [--players 6] [--games 3000]
    python -m benchmarks.profile_engine capitol --players 6 --games 200 --opcodes

``--opcodes`` counts instead the bytecodes each Python function executes and its calls, per decision
(``sys.settrace`` opcode events, after 50 untraced warm-up games): the interpreter's share, which
callgrind (benchmarks.engine_instructions) lumps into one C function. A trace runs far slower than the
game, so keep ``--games`` small.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import pstats
import random
import sys
from types import FrameType
from typing import Any

from benchmarks.engine import play_random
from conflictology import games


def playouts(game_name: str, players: int, count: int, chooser: random.Random | None = None) -> int:
    game = games.get(game_name)
    chooser = chooser or random.Random(1)
    total = 0
    for _ in range(count):
        total += play_random(game.new_game(players=players, seed=chooser.getrandbits(64)), chooser)
    return total


def opcodes(game_name: str, players: int, count: int, top: int) -> None:
    chooser = random.Random(1)
    playouts(game_name, players, 50, chooser)  # the memos filled, as in a long run
    ops: collections.Counter[str] = collections.Counter()
    calls: collections.Counter[str] = collections.Counter()

    def called(frame: FrameType, event: str, arg: Any) -> Any:
        code = frame.f_code
        name = f"{code.co_filename.rsplit('/', 1)[-1]}:{code.co_name}"
        calls[name] += 1
        frame.f_trace_opcodes = True

        def step(frame: FrameType, event: str, arg: Any) -> Any:
            if event == "opcode":
                ops[name] += 1
            return step

        return step

    sys.settrace(called)
    try:
        decisions = playouts(game_name, players, count, chooser)
    finally:
        sys.settrace(None)
    print(
        f"{game_name}, {players} players: {count} games, {decisions} decisions; per decision "
        f"{sum(ops.values()) / decisions:.1f} bytecodes, {sum(calls.values()) / decisions:.2f} Python calls"
    )
    print(f"{'bytecodes':>10} {'calls':>7}  function (per decision)")
    for name, n in ops.most_common(top):
        print(f"{n / decisions:10.2f} {calls[name] / decisions:7.3f}  {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("game", nargs="?", default="capitol")
    parser.add_argument("--players", type=int, default=6)
    parser.add_argument("--games", type=int, default=3000)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--opcodes", action="store_true", help="bytecodes and calls a decision, by function")
    args = parser.parse_args()
    players = 2 if args.game == "conspiranoicos" else args.players
    if args.opcodes:
        opcodes(args.game, players, args.games, args.top)
        return
    profiler = cProfile.Profile()
    profiler.enable()
    decisions = playouts(args.game, players, args.games)
    profiler.disable()
    print(f"{args.game}, {players} players: {args.games} games, {decisions} decisions")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
