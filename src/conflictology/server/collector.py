"""When Python's cycle collector runs in a server process (``serve --gc``).

Nearly everything a server makes is freed by reference counting the moment it is dropped; the
cycle collector only finds the rare cycles (a room dropped from memory, an exception kept with its
traceback). Python 3.11 runs it by counting allocations: a young pass when 700 (here
20,000: ``GC_THRESHOLDS``) more objects were made than freed, an older pass every few of those.
Under load that count says little of what a pass will cost. An old object freed counts against a
new one made, so while each move replaces a room's state, its copy shown and its clock, the count
barely moves; the young generation meanwhile fills with every room's live state, and a pass that
finally comes scans all of it. At 1,000 rooms (think 2 s, 2 cores) young passes ran every ~9 s and
stopped the event loop for 50-260 ms, old ones for 200-490 ms, and found nothing: 0-4 objects a
pass. They were the whole of the move's p99 above 25 ms (benchmarks/server.md, "The collector").

``paced`` (serve's default) never lets a pass scan more than a slice of the heap, save one full
pass at most every ten minutes:

- everything alive is **frozen** (``gc.freeze``: moved out of the collector's sight, at no cost)
  after every pass and every ``CHECK_SECONDS``, so what a move replaces is never scanned;
- a **young pass** scans what was made since the last freeze, when Python's count says
  ``YOUNG_OBJECTS`` more objects were made than freed. Seating a thousand rooms at once is so
  scanned in slices (5-20 ms each, measured) while it comes, even with the loop too busy for the
  checks;
- a **full pass** (everything unfrozen, scanned, frozen again) frees the cycles that became garbage
  after they were frozen: what a room dropped from memory leaves, say (a closed socket leaves
  nothing: tests/server/test_closed_sockets.py). It costs about 0.7 µs an object: at 1,000 rooms,
  about 850,000 objects, 580-600 ms. It is due when the memory held in small objects grew by a
  quarter (and at least ``GROWTH_MIN`` blocks) since the last, as Python's own oldest generation
  would be, but taken at most every ``FULL_EVERY`` seconds: a server taking on rooms stops once
  for it, not at every quarter of its growth. Growth of ``GROWTH_URGENT`` blocks, or as many as
  the last pass kept, cannot wait: that bounds the memory garbage cycles hold, however fast rooms
  come and go. The blocks are ``sys.getallocatedblocks()``, which costs nothing to read, where
  counting the frozen objects walks them all (170 ms at 1,000 rooms).

``python`` keeps Python's own collector, with ``GC_THRESHOLDS``.

Either way every pass's pause is observed (``conflictology_gc_pause_seconds`` in /metrics).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger("conflictology.server")

# Python's own collector under `serve --gc python`: young passes rarer than the default (700, 10,
# 10), which stopped a loop with thousands of sockets for 100-300 ms every few seconds.
GC_THRESHOLDS = (20_000, 20, 100)

# A young pass each time this many more objects were made than freed since the last freeze: 5-20 ms.
YOUNG_OBJECTS = 10_000
# A full pass when the small-object blocks grew by this share since the last one, and by at least
# GROWTH_MIN (about 100,000 objects, 10-20 MB): below that a pass costs more than it frees; and
# not sooner than FULL_EVERY after the last, so a server taking on rooms stops once for it, not
# at every quarter of its growth.
GROWTH_SHARE = 0.25
GROWTH_MIN = 300_000
FULL_EVERY = 600.0
# ... unless they grew by this many (about 250 MB) or by as many as the last pass kept: the memory
# that cycles freed only by a full pass may hold.
GROWTH_URGENT = 3_000_000
CHECK_SECONDS = 0.5


def heap() -> int:
    """The blocks of small objects the interpreter holds, alive or in garbage cycles: about three
    for each object the collector follows (at 1,000 rooms, 1.9 million)."""
    return sys.getallocatedblocks()


def growth_needed(after_last: int, growth_min: int = GROWTH_MIN, share: float = GROWTH_SHARE) -> float:
    """How many more blocks than ``after_last`` (as the last full pass left them) make the next pass."""
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
    """The ``paced`` policy: a freeze after every pass and every check, young passes in slices; a
    full pass when memory grew enough, at most every ``full_every`` seconds unless it grew by
    ``growth_urgent`` blocks."""

    def __init__(
        self,
        growth_min: int = GROWTH_MIN,
        share: float = GROWTH_SHARE,
        full_every: float = FULL_EVERY,
        growth_urgent: int = GROWTH_URGENT,
        young_objects: int = YOUNG_OBJECTS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.growth_min = growth_min
        self.share = share
        self.full_every = full_every
        self.growth_urgent = growth_urgent
        self.young_objects = young_objects
        self.after_last = 0
        self.passes = 0
        self._clock = clock
        self._last_full = 0.0
        self._was_enabled = True
        self._thresholds = gc.get_threshold()

    def _freeze(self, phase: str, info: dict[str, Any]) -> None:
        # After every pass, Python's own included: what it left alive is never scanned young again.
        if phase == "stop":
            gc.freeze()

    def start(self) -> None:
        """Take over from Python's collector: one full pass now (what startup made, restored rooms
        included, is frozen), then young passes by Python's count, each followed by a freeze."""
        self._was_enabled = gc.isenabled()
        self._thresholds = gc.get_threshold()
        gc.disable()
        self.collect()
        gc.callbacks.append(self._freeze)
        gc.set_threshold(self.young_objects, *self._thresholds[1:])
        gc.enable()

    def stop(self) -> None:
        """Give the process back to Python's collector as it was."""
        gc.disable()
        if self._freeze in gc.callbacks:
            gc.callbacks.remove(self._freeze)
        gc.set_threshold(*self._thresholds)
        gc.unfreeze()
        if self._was_enabled:
            gc.enable()

    def collect(self) -> int:
        """A full pass over everything, the frozen objects included; then all that is alive is
        frozen again. Returns how many objects it found unreachable."""
        gc.unfreeze()
        found = gc.collect()
        gc.freeze()
        self.after_last = heap()
        self._last_full = self._clock()
        self.passes += 1
        return found

    def full_due(self) -> bool:
        """Whether memory grew too much to wait, or enough and the last full pass is old enough."""
        grown = heap() - self.after_last
        if grown >= max(self.growth_urgent, self.after_last):
            return True
        recent = self._clock() - self._last_full < self.full_every
        return not recent and grown >= growth_needed(self.after_last, self.growth_min, self.share)

    def check(self) -> bool:
        """A full pass if one is due, else a freeze of what was made since the last (nothing is
        scanned); whether the full pass was taken."""
        if self.full_due():
            found = self.collect()
            log.debug("full collection: %d unreachable, %d blocks kept", found, self.after_last)
            return True
        gc.freeze()
        return False

    async def run(self, every: float = CHECK_SECONDS) -> None:
        while True:
            await asyncio.sleep(every)
            self.check()
