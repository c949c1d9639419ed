"""Finished games on their way to the archive, when rooms are shared (``--redis``): they wait in
Redis until the database has them, so an outage of the database loses none of them.

A game that ends is put first in a queue every process of the deployment shares (``redis_archive``:
Redis is what a move is durable in, so a record there is as safe as the move that ended the game),
then written to the database. Every process writes the oldest waiting games, again and again with a
backoff while the database refuses, and takes a game off the queue only once the database has it; so
a process that dies with games waiting leaves them to the others, and a game written twice (two
processes at once, a reply lost) is still archived once (the archive's insert is keyed by the game's
id and ignores a game it holds). Nothing is given up: a game the database refuses stays in the queue,
and ``/healthz`` says the database is failing, with how many games wait and for how long.

With rooms in this process's memory there is no such queue: the game's end and its archive are
committed in one transaction (durability.py), so neither is shown nor lost without the other.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from typing import Any, Protocol

from conflictology.server.store import Store, is_outage

log = logging.getLogger("conflictology.server")

# Games written to the database in one transaction (a backlog after an outage drains in batches).
BATCH = 100
# How often the queue is looked at while nothing is known to wait: a game another process left, and
# whether the database answers (so /healthz says it while there is nothing to write).
POLL_SECONDS = 2.0
# The longest wait between two tries while the database refuses.
BACKOFF_CAP = 5.0


@dataclass(frozen=True)
class ArchiveStats:
    """What ``/healthz`` and ``/metrics`` say of the games waiting for the database."""

    waiting: int
    oldest_seconds: float  # how long the oldest one has waited (0 when none)


class SharedQueue(Protocol):
    """The finished games every process of a deployment shares until the database has them."""

    async def put(self, records: list[dict[str, Any]]) -> None: ...

    async def oldest(self, limit: int) -> list[dict[str, Any]]:
        """Up to ``limit`` records, the longest waiting first."""
        ...

    async def remove(self, game_ids: list[str]) -> None: ...

    async def waiting(self) -> tuple[int, float | None]:
        """How many wait, and when (time.time()) the oldest of them was queued."""
        ...


class Archiver:
    """This process's writer of the shared queue into the database."""

    def __init__(
        self,
        store: Store,
        queue: SharedQueue,
        poll_seconds: float = POLL_SECONDS,
        backoff_cap: float = BACKOFF_CAP,
    ) -> None:
        self.store = store
        self.queue = queue
        self.poll_seconds = poll_seconds
        self.backoff_cap = backoff_cap
        # Records not in the shared queue yet (Redis did not answer): kept here and written straight
        # to the database if it answers first.
        self.held: dict[str, dict[str, Any]] = {}
        # Games this process ended and has not seen archived yet (a reader of the archive waits for
        # them: a game is listed as soon as it ends).
        self.mine: set[str] = set()
        self.failures = 0  # database writes refused in a row
        self.archived = 0  # games this process has written (a cache of the recent ones reads it)
        self._waiting = 0
        self._oldest: float | None = None
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    # ---- lifecycle -------------------------------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.create_task(self._forever())

    async def stop(self) -> None:
        """One last pass (what ended just now reaches the queue or the database), then no more.
        What is still waiting stays in Redis for the other processes, or this one's next start."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.drain(), 5)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        for game_id in self.held:
            log.error("game %s ended but neither Redis nor the database took it: not archived", game_id)

    # ---- what the hub asks -----------------------------------------------------------------------

    def queue_record(self, record: dict[str, Any]) -> None:
        self.held[record["id"]] = record
        self.mine.add(record["id"])
        self._wake.set()

    async def flush(self) -> None:
        """A reader of the archive: the games this process ended are written first (not while the
        database refuses: then the writer's backoff says when to try, not the readers' requests)."""
        if self.mine and not self.failures:
            await self.drain()

    def database_ok(self) -> bool:
        return self.failures == 0

    def stats(self) -> ArchiveStats:
        oldest = 0.0 if self._oldest is None else max(0.0, time.time() - self._oldest)
        return ArchiveStats(self._waiting, oldest)

    # ---- the writer ------------------------------------------------------------------------------

    async def drain(self) -> bool:
        """One pass: held records into the queue, the oldest waiting into the database. Whether more
        wait than one batch took."""
        async with self._lock:
            await self._hand_over()
            seen = True
            try:
                batch = await self.queue.oldest(BATCH)
            except Exception:
                batch, seen = [], False  # Redis does not answer: only the held records can be written
            queued = {r["id"] for r in batch}
            if seen and len(batch) < BATCH:
                # The whole queue is in view: what this process ended and is neither queued nor held
                # was archived by another process (a reader would otherwise wait on it for good).
                self.mine &= queued | set(self.held)
            batch += [r for gid, r in self.held.items() if gid not in queued][: max(0, BATCH - len(batch))]
            if batch:
                written = await self._write(batch)
                if written:
                    with contextlib.suppress(Exception):  # left there: written again, harmlessly
                        await self.queue.remove([gid for gid in written if gid in queued])
                    for gid in written:
                        self.held.pop(gid, None)
                        self.mine.discard(gid)
                    self.archived += len(written)
            else:
                await self._probe()
            await self._count()
            return len(batch) >= BATCH

    async def _hand_over(self) -> None:
        if not self.held:
            return
        records = list(self.held.values())
        try:
            await self.queue.put(records)
        except Exception as exc:
            log.warning("could not queue %d finished game(s) in Redis (%s); kept here", len(records), exc)
            return
        for record in records:
            self.held.pop(record["id"], None)

    async def _write(self, batch: list[dict[str, Any]]) -> list[str]:
        """The ids the database took (all of them, or those it did not refuse one by one)."""
        try:
            await asyncio.to_thread(self.store.archive_many, batch)
        except Exception as exc:
            if is_outage(exc) or len(batch) == 1:
                self._refused(exc, len(batch))
                return []
        else:
            self._answered()
            return [r["id"] for r in batch]
        # The database answers but refused the batch: one by one, so one game it refuses (kept, and
        # said in the log and in /healthz) does not hold up the others.
        written = []
        for record in batch:
            try:
                await asyncio.to_thread(self.store.archive, record)
                written.append(record["id"])
            except Exception as exc:
                log.error("the database refuses game %s (%s); kept to try again", record["id"], exc)
                self.failures += 1
        return written

    async def _probe(self) -> None:
        try:
            await asyncio.to_thread(self.store.ping)
        except Exception as exc:
            self._refused(exc, 0)
        else:
            self._answered()

    def _refused(self, exc: BaseException, count: int) -> None:
        if not self.failures:  # once per outage, not every try
            log.warning("the database does not answer (%s); %d finished game(s) wait for it", exc, count)
        self.failures += 1

    def _answered(self) -> None:
        if self.failures:
            log.warning("the database answers again (after %d failed tries)", self.failures)
        self.failures = 0

    async def _count(self) -> None:
        try:
            waiting, oldest = await self.queue.waiting()
        except Exception:
            return  # Redis does not answer: the last count stands
        held_oldest = min((r.get("finished") or time.time() for r in self.held.values()), default=None)
        self._waiting = waiting + len(self.held)
        self._oldest = min((t for t in (oldest, held_oldest) if t is not None), default=None)

    def _delay(self) -> float:
        if not self.failures:
            return self.poll_seconds
        return min(0.1 * float(2 ** min(self.failures, 10)), self.backoff_cap)

    async def _forever(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self._delay())
            self._wake.clear()
            try:
                more = await self.drain()
            except Exception:  # the writer must outlive anything: games wait on it
                log.exception("the archive writer failed; retrying")
                more = False
            if more and not self.failures:
                self._wake.set()
