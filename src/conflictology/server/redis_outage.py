"""What a Redis outage looks like, and what this process does while Redis does not answer.

Public methods of the backend answer an outage as :class:`BackendUnavailable` (a 503 for HTTP, an
error message on a socket), never as an unexpected exception; ``/healthz`` says degraded meanwhile;
once Redis answers again what this process could not write is written back (the backend's
``recovered``).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

import redis.asyncio as aioredis
from redis.exceptions import BusyLoadingError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from conflictology.server.backend import BackendUnavailable

log = logging.getLogger("conflictology.server")

# What a Redis outage looks like to a client: refused or dropped connections, no answer in time,
# a restarted Redis still loading its data.
OUTAGE = (RedisConnectionError, RedisTimeoutError, BusyLoadingError, OSError)
# Replies of a Redis that answers but will not write: a full disk (MISCONF), no memory left (OOM), a
# replica after a failover (READONLY), no quorum of replicas, a master down or a cluster resharding.
REFUSING = ("MISCONF", "OOM", "READONLY", "NOREPLICAS", "MASTERDOWN", "LOADING", "TRYAGAIN")


def is_outage(exc: BaseException) -> bool:
    return isinstance(exc, OUTAGE) or (isinstance(exc, ResponseError) and str(exc).startswith(REFUSING))


def is_pool_exhausted(exc: BaseException) -> bool:
    """Every connection of the pool busy: an overload of this process, not Redis gone."""
    return isinstance(exc, RedisConnectionError) and str(exc).startswith("No connection available")


class Outages:
    """Since when Redis has not answered (None: it answers), and whether this process has writes to
    put back once it does."""

    def __init__(self, redis: aioredis.Redis) -> None:
        self.redis = redis
        self.down_since: float | None = None
        self.resync_needed = False

    def available(self) -> bool:
        return self.down_since is None

    def record(self, exc: BaseException) -> None:
        """Redis did not answer (one log line per outage, not one per attempt)."""
        self.resync_needed = True
        if self.down_since is None:
            self.down_since = time.monotonic()
            log.warning("Redis does not answer (%s); requests are answered 503 until it does", exc)
            # The pool's idle connections are dead too: dropped now, so that once Redis is back
            # every request gets a fresh one instead of failing once on a stale one.
            task = asyncio.ensure_future(self.redis.connection_pool.disconnect(inuse_connections=False))
            task.add_done_callback(lambda t: t.cancelled() or t.exception())

    def answered(self) -> None:
        """Redis answered: the outage (if any) is over."""
        if self.down_since is None:
            return
        down = time.monotonic() - self.down_since
        self.down_since = None
        log.warning("Redis answers again (after %.1f s)", down)


class _Watched(Protocol):
    outages: Outages


F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


def answers_outage(method: F) -> F:
    """A public method: a Redis outage during it is a :class:`BackendUnavailable` (a 503 for HTTP, an
    error message on a socket), never an unexpected exception."""

    @functools.wraps(method)
    async def wrapper(self: _Watched, *args: Any, **kwargs: Any) -> Any:
        try:
            result = await method(self, *args, **kwargs)
        except Exception as exc:
            if is_pool_exhausted(exc):
                raise BackendUnavailable("the server is busy; try again in a moment") from None
            if not is_outage(exc):
                raise
            self.outages.record(exc)  # (what Redis said goes to the log, not to a stranger)
            raise BackendUnavailable() from None
        self.outages.answered()
        return result

    return wrapper  # type: ignore[return-value]
