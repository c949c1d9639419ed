"""A seat's state message in a long game: the view rendered whole (protocol v1, a new socket, a
``sync``) beside its log's tail alone (``GameState.view_since``: what a v2 broadcast renders for
sockets that are up to date), at several game lengths.

    .venv/bin/python -m benchmarks.long_views [--lengths 25 100 250 500] [--repeat 500] [--runs 5]

The game is issue 25's: two Capitol seats that claim the Reporter and let each other be, under the
stalemate rule at its longest (200 quiet turns), as tests/server/test_log_deltas.py plays it. At
each length, one change's worth of messages is built for both seats and the spectator through
``master.message_for`` and encoded, as a broadcast does, whole and from the last entry on; CPU µs
per change, the median of ``--runs``.
"""

from __future__ import annotations

import argparse
import statistics
import time

from conflictology.server import master
from conflictology.server.messages import encode
from conflictology.server.protocol import RoomSettings
from conflictology.server.rooms import Room

SEATS: tuple[int | None, ...] = (0, 1, None)


def reporter_loop(room: Room) -> None:
    assert room.state is not None
    seat = room.state.waiting_for()[0]
    legal = room.state.legal_actions(seat)
    for kind in ("reporter", "pass", "keep"):
        pick = next((a for a in legal if a["type"] == kind), None)
        if pick is not None:
            room.act(seat, pick, room.seq, 1000.0)
            return
    room.act(seat, legal[0], room.seq, 1000.0)


def per_change(room: Room, since: int, repeat: int) -> float:
    """CPU µs to build and encode every seat's message once."""
    connected = {0, 1}
    info = room.info(connected)
    shared = master.table(room)
    cpu0 = time.process_time()
    for _ in range(repeat):
        for seat in SEATS:
            encode(master.message_for(room, seat, connected, info, shared, since=since))
    return (time.process_time() - cpu0) * 1e6 / repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[25, 100, 250, 500])
    parser.add_argument("--repeat", type=int, default=500)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    room, _ = Room.create("LONG01", "capitol", "Ada", {"stalemate_turns": 200}, RoomSettings(timers=False))
    room.join("Bob")
    room.start(1000.0, seed=7)
    assert room.state is not None
    print("| log entries | whole (µs/change) | tail (µs/change) | whole/tail |")
    print("|---:|---:|---:|---:|")
    for length in sorted(args.lengths):
        while len(room.state.view(None)["log"]) < length:
            reporter_loop(room)
        last = len(room.state.view(None)["log"]) - 1
        whole, tail = [], []
        for _ in range(args.runs):  # alternated, so that the machine's load falls on both alike
            whole.append(per_change(room, 0, args.repeat))
            tail.append(per_change(room, last, args.repeat))
        w, t = statistics.median(whole), statistics.median(tail)
        print(f"| {last + 1:,} | {w:,.0f} | {t:,.0f} | {w / t:.1f}× |")


if __name__ == "__main__":
    main()
