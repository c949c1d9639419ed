"""When Python's cycle collector runs in a server process (``serve --gc``).

Nearly everything a server makes is freed by reference counting the moment it is dropped; the
cycle collector only finds the rare cycles (a closed socket's task and its coroutine, an exception
kept with its traceback). Python 3.11 runs it by counting allocations: a young pass when 700 (here
20,000: ``GC_THRESHOLDS``) more objects were made than freed, an older pass every few of those.
Under load that count says little of what a pass will cost. An old object freed counts against a
new one made, so while each move replaces a room's state, its copy shown and its clock, the count
barely moves; the young generation meanwhile fills with every room's live state, and a pass that
finally comes scans all of it. At 1,000 rooms (think 2 s, 2 cores) young passes ran every ~9 s and
stopped the event loop for 50-260 ms, old ones for 200-490 ms, and found nothing: 0-4 objects a
pass. They were the whole of the move's p99 above 25 ms (benchmarks/server.md, "The collector").

``paced`` (serve's default) leaves the cycles to one full pass, taken only when the objects the
collector follows grew by a quarter (and at least ``GROWTH_MIN``) since the last: the growth that
garbage cycles would make, and the growth of a server taking on rooms, when Python's own rule for
its oldest generation would run a full pass too. After each pass everything alive is frozen
(``gc.freeze``), so counting what was made since is cheap, and nothing is scanned between passes.
Cycles are still collected, later: a server that leaked them would pass at each quarter of growth.
``python`` keeps Python's own collector, with ``GC_THRESHOLDS``.

Either way every pass's pause is observed (``conflictology_gc_pause_seconds`` in /metrics).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger("conflictology.server")

# Python's own collector under `serve --gc python`: young passes rarer than the default (700, 10,
# 10), which stopped a loop with thousands of sockets for 100-300 ms every few seconds.
GC_THRESHOLDS = (20_000, 20, 100)

# A full pass when the followed objects grew by this share since the last one, and by at least
# GROWTH_MIN (about 10-20 MB of small objects): below that a pass costs more than it frees.
GROWTH_SHARE = 0.25
GROWTH_MIN = 100_000
CHECK_SECONDS = 5.0


def heap() -> int:
    """Objects the collector follows: those made since the last freeze, and the frozen ones alive."""
    return len(gc.get_objects()) + gc.get_freeze_count()


def growth_needed(after_last: int, growth_min: int = GROWTH_MIN, share: float = GROWTH_SHARE) -> float:
    """How many more objects than ``after_last`` (as the last full pass left them) make the next pass."""
    return max(growth_min, share * after_last)


class PauseWatch:
    """Times every pass of the collector, whoever started it (``gc.callbacks``)."""

    def __init__(self, observe: Callable[[float], None]) -> None:
        self._observe = observe
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self._observe(time.perf_counter() - self._started)

    def install(self) -> None:
        if self not in gc.callbacks:
            gc.callbacks.append(self)

    def remove(self) -> None:
        if self in gc.callbacks:
            gc.callbacks.remove(self)


class PacedCollector:
    """The ``paced`` policy: automatic collection off, a full pass when the objects grew enough."""

    def __init__(self, growth_min: int = GROWTH_MIN, share: float = GROWTH_SHARE) -> None:
        self.growth_min = growth_min
        self.share = share
        self.after_last = 0
        self.passes = 0
        self._was_enabled = True

    def start(self) -> None:
        """Take over from Python's collector: one full pass now (what startup made, restored rooms
        included, is frozen, never scanned until the next full pass)."""
        self._was_enabled = gc.isenabled()
        gc.disable()
        self.collect()

    def stop(self) -> None:
        """Give the process back to Python's collector as it was."""
        gc.unfreeze()
        if self._was_enabled:
            gc.enable()

    def collect(self) -> int:
        """A full pass over everything, the frozen objects included; then all that is alive is
        frozen again. Returns how many objects it found unreachable."""
        gc.unfreeze()
        found = gc.collect()
        gc.freeze()
        self.after_last = gc.get_freeze_count()
        self.passes += 1
        return found

    def check(self) -> bool:
        """A full pass if the objects grew enough since the last; whether one was taken."""
        # The allocation count only ever overstates the growth (an object freed while the count is
        # at 0 is not taken off): below the threshold it is, without counting the objects.
        needed = growth_needed(self.after_last, self.growth_min, self.share)
        if gc.get_count()[0] < needed or heap() - self.after_last < needed:
            return False
        found = self.collect()
        log.debug("full collection: %d unreachable, %d objects kept", found, self.after_last)
        return True

    async def run(self, every: float = CHECK_SECONDS) -> None:
        while True:
            await asyncio.sleep(every)
            self.check()
