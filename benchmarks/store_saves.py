"""What saving a move costs the durable store as a game grows: one room's snapshot taken and saved
(``Room.snapshot`` + ``Store.save_rooms``, as the hub's writer does for a batch of one) after each
move, at several lengths of the game's action log, on a throwaway SQLite file.

    .venv/bin/python -m benchmarks.store_saves [--lengths 25 500] [--saves 50] [--runs 5]

The game is benchmarks/long_views.py's (two Capitol seats that claim the Reporter and let each other
be, under the stalemate rule at its longest), played to each length; then ``--saves`` moves, each
followed by its save, of which only the saves are timed (CPU µs per save, the median of ``--runs``),
beside the bytes of the snapshot row each save writes. Issue 28: a save should cost the same at the
500th action as at the 25th (the action log appended to, not written again whole).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import msgspec

from benchmarks.long_views import reporter_loop
from conflictology.server.protocol import RoomSettings
from conflictology.server.rooms import Room
from conflictology.server.store import Store


def saves(room: Room, store: Store, count: int) -> float:
    """CPU µs per save over ``count`` moves, each saved once it is made."""
    spent = 0.0
    for _ in range(count):
        reporter_loop(room)
        cpu0 = time.process_time()
        store.save_rooms([room.snapshot()])
        spent += time.process_time() - cpu0
    return spent * 1e6 / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[25, 500])
    parser.add_argument("--saves", type=int, default=50)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print("| actions in the log | µs of CPU per save | snapshot bytes |")
    print("|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for length in sorted(args.lengths):
            figures = []
            for run in range(args.runs):
                # A room played afresh to the length for every run: each run saves the same moves.
                store = Store(f"sqlite:///{Path(tmp) / f'saves-{length}-{run}.sqlite3'}")
                room, _ = Room.create(
                    "LONG01", "capitol", "Ada", {"stalemate_turns": 200}, RoomSettings(timers=False)
                )
                room.join("Bob")
                room.start(1000.0, seed=7)
                while len(room.actions) < length:
                    reporter_loop(room)
                store.save_rooms([room.snapshot()])  # (the log so far, once)
                figures.append(saves(room, store, args.saves))
                with store.engine.connect() as conn:
                    row = conn.exec_driver_sql("SELECT data FROM conflictology_rooms").scalar_one()
                logged = len(msgspec.json.decode(row).get("actions", ())) or len(room.actions)
                store.close()
            print(f"| {length:,}–{logged:,} | {statistics.median(figures):,.0f} | {len(row):,} |")


if __name__ == "__main__":
    main()
