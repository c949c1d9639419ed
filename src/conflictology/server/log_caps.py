"""Log lines any client can cause, capped: at most one line per kind every ten seconds, the next
one saying how many were left out (``/metrics`` keeps the exact counts), so an attack on the
connections cannot flood the log."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable


class RateCap:
    """At most one event per reason every ``interval`` seconds; counts the ones refused meanwhile."""

    def __init__(self, interval: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self.clock = clock
        self._last: dict[str, float] = {}
        self._left_out: dict[str, int] = {}

    def allow(self, reason: str) -> int | None:
        """None if this one is left out; else how many were left out since the last one allowed."""
        now = self.clock()
        last = self._last.get(reason)
        if last is not None and now - last < self.interval:
            self._left_out[reason] = self._left_out.get(reason, 0) + 1
            return None
        self._last[reason] = now
        return self._left_out.pop(reason, 0)


LEFT_OUT = " (%d more like it since the last such line)"


class RateCappedLog:
    """One warning line per reason at most every ``interval`` seconds; the next line that is
    written says how many were left out meanwhile (``/metrics`` keeps the exact counts)."""

    def __init__(
        self, logger: logging.Logger, interval: float = 10.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.logger = logger
        self.cap = RateCap(interval, clock)

    def __call__(self, reason: str, message: str, *args: object) -> bool:
        left_out = self.cap.allow(reason)
        if left_out is None:
            return False
        if left_out:
            message += LEFT_OUT
            args = (*args, left_out)
        self.logger.warning(message, *args)
        return True


class RateCappedUvicornLines(logging.Filter):
    """uvicorn's own lines that any client can cause once per connection ("Invalid HTTP request
    received.", "Unsupported upgrade request."), capped like ours: a client sending garbage on
    thousands of connections must not write thousands of lines."""

    MESSAGES = frozenset({"Invalid HTTP request received.", "Unsupported upgrade request."})

    def __init__(self, interval: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.cap = RateCap(interval, clock)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg not in self.MESSAGES or record.args:
            return True
        left_out = self.cap.allow(str(record.msg))
        if left_out is None:
            return False
        if left_out:
            record.msg = f"{record.msg}{LEFT_OUT % left_out}"
        return True


def install_uvicorn_line_cap() -> None:
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, RateCappedUvicornLines) for f in logger.filters):
        logger.addFilter(RateCappedUvicornLines())
