"""Where a server's time goes: group a cProfile of ``serve`` (benchmarks/server_bench.py --profile)
into a few buckets of *cumulative* time (buckets overlap where one calls another; the event loop's
idle wait is left out). Only the event-loop thread is profiled: the snapshot writer's thread is not.

    .venv/bin/python benchmarks/server_profile.py /tmp/prof1000.prof
"""

from __future__ import annotations

import pstats
import sys

BUCKETS = {
    "room changes (Room.act/expire/start, version bump, notify)": [("server/backend.py", "update")],
    "  broadcast: views + messages for every socket": [("server/hub.py", "broadcast")],
    "    game views (capitol render_view)": [("capitol/views.py", "render_view")],
    "    room info for the message": [("server/rooms.py", "info")],
    "    JSON encoding (msgspec)": [("~", "<method 'encode' of 'msgspec.json.Encoder' objects>")],
    "  scheduling clocks/bots (Scheduler.schedule)": [("server/scheduler.py", "schedule")],
    "snapshot copies for the writer (Room.snapshot)": [("server/snapshots.py", "snapshot")],
    "WebSocket sends (uvicorn, incl. compression)": [("websockets_sansio_impl.py", "send")],
    "  permessage-deflate": [("permessage_deflate.py", "encode")],
    "WebSocket receive + message handling (_on_message)": [("server/app.py", "_on_message")],
    "HTTP requests (create/join/start/rematch)": [("httptools_impl.py", "run_asgi")],
}


def main() -> None:
    stats = pstats.Stats(sys.argv[1])
    raw = stats.stats  # type: ignore[attr-defined]
    total = 0.0
    for (_filename, _line, name), (_cc, _nc, tt, _ct, _callers) in raw.items():
        if name in ("select", "<method 'poll' of 'select.epoll' objects>", "run", "lifespan"):
            continue
        if "epoll" in name:
            continue
        total += tt
    print(f"busy time on the event loop (tottime, idle wait excluded): {total:.1f} s")
    for label, keys in BUCKETS.items():
        ct = 0.0
        for (filename, _line, name), (_cc, _nc, _tt, cum, _callers) in raw.items():
            if any((filename.endswith(f) and name == n) or (f == "~" and name == n) for f, n in keys):
                ct += cum
        print(f"{label:<62} {ct:7.1f} s  {100 * ct / total:5.1f} %")


if __name__ == "__main__":
    main()
