"""The server's own work per move, without sockets or HTTP: CPU per move of the hub alone.

    .venv/bin/python -m benchmarks.hub_moves --rooms 100 --moves 20000 [--v1] [--profile FILE]
    .venv/bin/python -m benchmarks.hub_moves --moves 20000 --game-only
    .venv/bin/python -m benchmarks.hub_moves --instructions 1000 3000

A hub on a throwaway SQLite file (rooms in memory, as ``serve``) with ``--rooms`` rooms of four
seats, each seat's socket a stand-in that takes its texts and drops them; every room's seats play
random legal moves through ``Hub.change`` as fast as it answers (all rooms at once, so batches
form as under the load test), rematches included. Counts CPU seconds (``time.process_time``) over
the moves after a warm-up: everything a move costs the server but the transport (the game, the
views, the messages, the snapshot batches, the clocks, the metrics of the hub). With ``--profile``,
cProfile's top functions by their own time.

``--game-only`` makes the same calls into the game a move makes on the server (the move on a
clone, the awaited seats' legal actions and clock kinds, the four seats' views and legal actions,
the state's JSON) and nothing else: the game's share of a move.

``--instructions A B`` runs it twice under valgrind's callgrind, with ``A`` and then ``B`` moves
after the same warm-up, and prints the difference of the two totals per move of the difference:
instructions, which the machine's load does not move (CPU time here moves by ±10-15 % from one run
to the next on a quiet machine), for an A/B of two trees (``PYTHONPATH=that/tree/src``). The rooms'
batches still form by time, so two runs of one tree differ by a few tenths of a percent.

benchmarks/server_floor.py measures the whole server against the transport floor; this one says
how much of it is the server's own, and how much the game's.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import random
import re
import sys
import tempfile
import time
from pathlib import Path

from conflictology import games, native
from conflictology.server.cli import tune_gc
from conflictology.server.config import ServerConfig
from conflictology.server.hub import Connection, Hub
from conflictology.server.protocol import RoomSettings
from conflictology.server.rooms import Room, RoomError, RoomStatus
from conflictology.server.store import Store


class Sink:
    """A socket's far end that reads nothing: it counts what it was sent."""

    messages = 0
    chars = 0

    async def send_text(self, text: str) -> None:
        Sink.messages += 1
        Sink.chars += len(text)

    async def close(self) -> None:
        pass


async def play(hub: Hub, code: str, rng: random.Random, budget: list[int]) -> None:
    """One room's seats answer every state at once, until the moves are spent."""
    while budget[0] > 0:
        room = await hub.room(code)
        if room.status is not RoomStatus.PLAYING or room.state is None:
            await hub.change(code, lambda r: r.rematch() if r.status is RoomStatus.OVER else None)
            await hub.change(code, lambda r: r.start(time.time()))
            continue
        seat = rng.choice(room.state.waiting_for())
        action = rng.choice(room.state.legal_actions(seat))
        seq = room.seq

        def act(r: Room, seat: int = seat, action: dict[str, object] = action, seq: int = seq) -> None:
            r.act(seat, action, seq, time.time())

        try:
            await hub.change(code, act)
            budget[0] -= 1
        except RoomError:
            pass  # (another seat's answer came first: stale)


def game_only(args: argparse.Namespace) -> None:
    """What the server asks of the game for each move, alone: the move applied to a clone, the
    awaited seats' legal actions and clock kind, every seat's view and legal actions (its message),
    and the state's JSON (its snapshot). The same random 4-seat games, without the server."""
    game = games.get("capitol")
    rng = random.Random(1)
    state = game.new_game(players=4, seed=1)
    cpu0 = time.process_time()
    for _ in range(args.moves):
        if state.is_over():
            state = game.new_game(players=4, seed=rng.getrandbits(32))
        seat = rng.choice(state.waiting_for())
        trial = state.clone()
        trial.apply(seat, rng.choice(state.legal_actions(seat)))
        state = trial
        for s in state.waiting_for():
            state.legal_actions(s)
            state.decision_kind(s)
        for s in range(4):
            state.view(s)
            state.legal_actions(s)
        state.to_json()
    cpu = time.process_time() - cpu0
    print(
        f"{args.moves} moves: {cpu * 1e6 / args.moves:.0f} µs of CPU per move in the game alone "
        f"(the rules {native.running})"
    )


async def main_async(args: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="cfy-hub-"))
    store = Store(f"sqlite:///{tmp / 'hub.sqlite3'}")
    hub = Hub(ServerConfig(), store)
    await hub.start()
    codes = []
    for i in range(args.rooms):
        room, _ = Room.create(f"B{i:05d}", "capitol", "P0", {}, RoomSettings())
        for n in range(1, 4):
            room.join(f"P{n}")
        await hub.backend.insert(room)
        codes.append(room.code)
    await hub.until_durable()
    for code in codes:
        room = await hub.room(code)
        for seat in room.seats:
            await hub.attach(Connection(Sink(), code, seat.id, hub.config, deltas=not args.v1))
        await hub.change(code, lambda r: r.start(time.time()))
    rng = random.Random(1)
    warm = [args.moves // 5 if args.warmup is None else args.warmup]
    await asyncio.gather(*(play(hub, c, rng, warm) for c in codes))
    profile = cProfile.Profile() if args.profile else None
    budget = [args.moves]
    Sink.messages = Sink.chars = 0
    cpu0 = time.process_time()
    if profile:
        profile.enable()
    await asyncio.gather(*(play(hub, c, rng, budget) for c in codes))
    await asyncio.sleep(0.05)  # the writer tasks drain their queues
    if profile:
        profile.disable()
    cpu = time.process_time() - cpu0
    moves = args.moves - budget[0]
    print(
        f"{moves} moves: {cpu * 1e6 / moves:.0f} µs of CPU per move "
        f"({Sink.messages / moves:.1f} messages per move, "
        f"{Sink.chars / max(1, Sink.messages):,.0f} characters each; the rules {native.running})"
    )
    await hub.stop()
    store.close()
    if profile:
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(args.top)
        Path(args.profile).write_text(out.getvalue())
        profile.dump_stats(args.profile + ".prof")


def instructions_per_move(args: argparse.Namespace) -> None:
    from benchmarks.engine_instructions import callgrind

    warmup = args.warmup if args.warmup is not None else 200
    runs = []
    for moves in args.instructions:
        argv = [sys.executable, "-m", "benchmarks.hub_moves", "--rooms", str(args.rooms)]
        argv += ["--moves", str(moves)]
        argv += ["--warmup", str(warmup), *(["--v1"] if args.v1 else [])]
        total, printed = callgrind(argv)
        counted = re.search(r"(\d+) moves:", printed)
        if counted is None:
            raise RuntimeError(f"no move count in {printed!r}")
        runs.append((total, int(counted.group(1))))
    (low, low_moves), (high, high_moves) = runs
    print(
        f"{(high - low) / (high_moves - low_moves):,.0f} instructions per move "
        f"({high_moves - low_moves} moves between runs of {low_moves} and {high_moves}, warm-up {warmup}; "
        f"the rules {native.running})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rooms", type=int, default=100)
    ap.add_argument("--moves", type=int, default=20000)
    ap.add_argument("--v1", action="store_true", help="whole views (protocol v1), not log deltas")
    ap.add_argument("--profile", help="cProfile's top functions by own time here (and FILE.prof)")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--warmup", type=int, help="moves played before the count (default: a fifth of --moves)")
    ap.add_argument(
        "--instructions", nargs=2, type=int, metavar=("A", "B"),
        help="instructions per move under callgrind, from runs of A and B moves",
    )  # fmt: skip
    ap.add_argument("--game-only", action="store_true", help="only what the server asks of the game per move")
    args = ap.parse_args()
    if args.instructions:
        instructions_per_move(args)
        return
    tune_gc()  # as `serve` does
    if args.game_only:
        game_only(args)
        return
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
