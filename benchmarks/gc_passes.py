"""What Python's cycle collector costs the hub under each ``serve --gc`` policy (server/collector.py).

    .venv/bin/python -m benchmarks.gc_passes --rooms 1000 --moves 10000 --gc python
    .venv/bin/python -m benchmarks.gc_passes --rooms 1000 --moves 10000 --gc paced
    .venv/bin/python -m benchmarks.gc_passes --rooms 1000 --moves 10000 --gc off

``benchmarks.hub_moves`` (the hub alone, its CPU a move) with every pass of the collector timed by
a ``gc.callbacks`` hook, from the hub's start to its stop: how many passes, their total and
longest pause. ``python``: Python's own collector with serve's thresholds; ``paced``: the policy
serve runs by default (young passes in slices, what survives frozen; a full pass at most every
10 minutes);
``off``: none at all, the floor. Also the young generation's size at the end, what a young pass
would scan then.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
from typing import Any

from benchmarks import hub_moves
from conflictology.server.cli import tune_gc
from conflictology.server.collector import PacedCollector, PauseWatch


async def run(args: argparse.Namespace) -> None:
    pauses: list[float] = []
    watch = PauseWatch(pauses.append)
    watch.install()
    collector = PacedCollector() if args.gc == "paced" else None
    checks: asyncio.Task[Any] | None = None
    if collector is not None:
        collector.start()
        checks = asyncio.create_task(collector.run())
    elif args.gc == "off":
        gc.disable()
    try:
        await hub_moves.main_async(args)
        young = len(gc.get_objects(0))
    finally:
        if checks is not None and collector is not None:
            checks.cancel()
            collector.stop()
        watch.remove()
    ms = sorted(p * 1000 for p in pauses)
    longest = ms[-1] if ms else 0.0
    print(
        f"--gc {args.gc}: {len(ms)} passes, {sum(ms):.0f} ms in all, longest {longest:.1f} ms; "
        f"young generation at the end {young:,} objects"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rooms", type=int, default=1000)
    ap.add_argument("--moves", type=int, default=10000)
    ap.add_argument("--gc", choices=["python", "paced", "off"], default="python")
    args = ap.parse_args()
    args.v1, args.profile, args.top, args.warmup = False, None, 40, None
    tune_gc()  # as `serve` does
    started = time.process_time()
    asyncio.run(run(args))
    print(f"process CPU {time.process_time() - started:.1f} s")


if __name__ == "__main__":
    main()
