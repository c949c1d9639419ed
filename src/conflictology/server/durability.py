"""Nothing is shown before it is durable: the batched writer of room snapshots and finished games.

With rooms in this process's memory, a change reaches the sockets (and its caller resumes) only once
the snapshot that holds it is committed, so a server killed at any instant never takes back a move
a player saw (docs/scaling.md, docs/protocol.md "Persistence and restarts"). Snapshots are written
by one writer, off the event loop, a batch at a time: the changes made while a batch is being
written go together in the next one (group commit). Finished games are archived by the same writer.
With a shared backend (Redis) a change is durable when its compare-and-set has landed, before the
hub hears of it: only the archive goes through here then, by archive.py's queue in Redis.

A finished game is never dropped for a database that refuses: with rooms in memory, its record is
committed in the same transaction as the snapshot that ends it (the file is the queue: the game's end
is shown once both are written, and while the database refuses, both wait and are tried again);
with a shared backend it waits in Redis (archive.py). Either way it is written until it is taken.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from conflictology.server.archive import Archiver, ArchiveStats, SharedQueue
from conflictology.server.backend import BackendUnavailable
from conflictology.server.config import ServerConfig
from conflictology.server.rooms import Room, RoomStatus
from conflictology.server.store import Store, is_outage

log = logging.getLogger("conflictology.server")

# How often SQLite's write-ahead log is copied into the database file (while there are writes).
CHECKPOINT_SECONDS = 2.0

# Game ids remembered as archived (older ones are archived again at most, which the store ignores).
ARCHIVED_KEPT = 10_000


@dataclass
class _Batch:
    """Snapshots on their way to the store: the rooms taken (to put back if refused), their
    snapshots, the copies to show once written, and the change mark they make durable."""

    rooms: dict[str, Room]
    snapshots: list[dict[str, Any]]
    unshown: list[Room]
    mark: int


class _NextCommit:
    """What waiting changes await: the next batch committed (``ok``), or ``timeout`` seconds with
    none (the timer starts with the first waiter)."""

    __slots__ = ("event", "ok", "timer")

    def __init__(self, timeout: float, resolve: Callable[[bool], None]) -> None:
        self.event = asyncio.Event()
        self.ok = False
        self.timer = asyncio.get_running_loop().call_later(timeout, resolve, False)


class SnapshotWriter:
    """Snapshots and archives written in batches; ``show(room)`` is called for each change, in the
    order the changes were made, once the batch holding it is committed."""

    def __init__(
        self,
        config: ServerConfig,
        store: Store,
        show: Callable[[Room], None],
        shared_queue: SharedQueue | None = None,
    ) -> None:
        """``shared_queue``: where finished games wait for the database with a shared backend."""
        self.config = config
        self.store = store
        self.archiver = None if shared_queue is None else Archiver(store, shared_queue)
        self._show_room = show
        # Games already queued for the archive (so each is archived once; the store ignores a game it
        # holds, so the oldest may be forgotten: bounded, a dictionary kept in insertion order).
        self._archived: dict[str, None] = {}
        # Rooms changed since the last snapshot write, and finished games not yet archived: the
        # writer takes both off the event loop (a database write there stalls every room).
        self.unsaved: dict[str, Room] = {}
        self.unarchived: dict[str, dict[str, Any]] = {}
        self.archive_failures = 0  # failed archive writes in a row
        self._writing: list[dict[str, Any]] = []  # the records of the write under way
        self.snapshot_failures = 0  # failed snapshot writes in a row
        self._persist_lock = asyncio.Lock()
        self.writer: asyncio.Task[None] | None = None
        self._writes_since_checkpoint = 0
        self._checkpointer: asyncio.Task[None] | None = None
        # Group commit. Each change of this process gets the next mark; a change is durable once the
        # batch holding it is committed (``_durable_mark``). A batch shows each of its rooms once,
        # as it was written (a copy taken with its snapshot), after it commits: a room changed
        # twice within a batch is shown once, its log holding both changes. ``shown`` is the newest
        # room shown (what a newcomer, a sync or a read is answered from).
        self._change_mark = 0
        self._durable_mark = 0
        # What the changes waiting to be durable await: the next commit, or its one timer if no
        # batch commits within ``durable_timeout``. One timer a batch rather than a timeout a move
        # (every move waits here).
        self._next_commit: _NextCommit | None = None
        self._wake = asyncio.Event()
        self.shown: dict[str, Room] = {}
        self._games_archived = 0

    # ---- lifecycle -------------------------------------------------------------------------------

    def restored(self, room: Room) -> None:
        """A room read back from the store at start: what is on disk is what may be shown (changes
        made from here on are shown once saved); a finished game is archived now if it was not."""
        self.shown[room.code] = room.copy()
        if room.status is RoomStatus.OVER and room.game_id:
            self.store.archive(room.archive_record())
            self.mark_archived(room.game_id)

    def start(self, checkpoints: bool = True) -> None:
        """``checkpoints``: copy SQLite's log into its file now and then (with the snapshots on this
        machine; a shared backend writes only the archive, rarely)."""
        self.writer = asyncio.create_task(self._write_forever())
        if self.archiver is not None:
            self.archiver.start()
        if checkpoints and self.store.local:
            self._checkpointer = asyncio.create_task(self._checkpoint_forever())

    async def stop(self) -> None:
        if self._checkpointer:
            self._checkpointer.cancel()
        if self.writer:
            # Under the writer's lock: a write in flight finishes first (its thread cannot be
            # cancelled, and an older snapshot landing after the last one would be what a restart
            # resumes from), and the writer is stopped between writes.
            async with self._persist_lock:
                self.writer.cancel()
                self._write_pending()
            with contextlib.suppress(BaseException):
                await self.writer
        if self.archiver is not None:
            await self.archiver.stop()

    # ---- changes ---------------------------------------------------------------------------------

    def changed(self, room: Room) -> None:
        """A change this process made to a room in its memory: shown once its snapshot is committed,
        as the room is when its batch is taken (this change, or a later one of the same batch)."""
        self.unsaved[room.code] = room
        self._change_mark += 1
        self._wake.set()

    def refuse_while_unsaved(self) -> None:
        """While the database refuses snapshots, no new change is made: games would go on unseen
        (bots and clocks moving on prompts nobody was shown) and unsaved changes pile up in memory.
        Clocks and bots try again until it takes them (the scheduler's retries)."""
        if self.snapshot_failures:
            raise BackendUnavailable("the server cannot save right now; try again in a moment")

    async def until_durable(self) -> None:
        """Wait until every change this process has made so far is committed. (Called right after a
        change: nothing ran in between, so the newest mark is that change's.) A store that commits
        nothing for ``durable_timeout`` while changes wait makes this a 503: the change stays queued
        and is shown once it is saved."""
        mark = self._change_mark
        if self._durable_mark >= mark or self.writer is None:
            return
        if self.writer.done():
            raise BackendUnavailable("the server has stopped saving; this change is not saved")
        while self._durable_mark < mark:
            commit = self._next_commit
            if commit is None:
                commit = self._next_commit = _NextCommit(self.config.durable_timeout, self._committed)
            # (each waiter its own future, the event's: a waiter cancelled leaves the others waiting)
            await commit.event.wait()
            if not commit.ok:
                raise BackendUnavailable("the server cannot save right now; this is shown once it is saved")

    def _committed(self, ok: bool) -> None:
        """A batch committed (``ok``), or none did in ``durable_timeout``: the waiters resume."""
        commit, self._next_commit = self._next_commit, None
        if commit is not None:
            commit.timer.cancel()
            commit.ok = ok
            commit.event.set()

    @property
    def games_archived(self) -> int:
        """Games this process has archived (a cache of the recent ones reads it)."""
        return self._games_archived + (self.archiver.archived if self.archiver is not None else 0)

    def database_health(self) -> str:
        """What ``/healthz`` says of the database: failing while it refuses snapshots or archives."""
        refusing = self.snapshot_failures or self.archive_failures
        if refusing or (self.archiver is not None and not self.archiver.database_ok()):
            return "failing"
        return "ok"

    def archive_stats(self) -> ArchiveStats:
        """The finished games waiting for the database (with a shared backend: the deployment's)."""
        if self.archiver is not None:
            return self.archiver.stats()
        waiting = {**{r["id"]: r for r in self._writing}, **self.unarchived}
        oldest = min((r.get("finished") or time.time() for r in waiting.values()), default=None)
        return ArchiveStats(len(waiting), 0.0 if oldest is None else max(0.0, time.time() - oldest))

    def archived(self, game_id: str) -> bool:
        """Whether this game is queued for the archive or in it already (by this process)."""
        return game_id in self._archived

    async def forget(self, code: str) -> None:
        """A room removed (idle): after any write of it already under way, nothing of it is written
        or shown any more, and its snapshot is deleted."""
        async with self._persist_lock:
            # (a failed write puts its rooms back in unsaved: dropped here, under the lock)
            self.unsaved.pop(code, None)
            self.shown.pop(code, None)
            await asyncio.to_thread(self.store.delete_room, code)

    # ---- the writer ------------------------------------------------------------------------------

    def mark_archived(self, game_id: str) -> None:
        self._archived[game_id] = None
        if len(self._archived) > ARCHIVED_KEPT:
            del self._archived[next(iter(self._archived))]

    def queue_archive(self, room: Room) -> None:
        assert room.game_id is not None
        self.mark_archived(room.game_id)
        # The record is taken now, on the event loop, so it is the game as it ended.
        record = room.archive_record()
        if self.archiver is not None:
            self.archiver.queue_record(record)
            return
        self.unarchived[room.game_id] = record
        self._wake.set()

    def _take_snapshots(self) -> _Batch:
        # Taken on the event loop, between changes, so each snapshot is one consistent room, and the
        # copy shown once it is written is of that very version. (One message a room and a batch:
        # under load, changes a few milliseconds apart reach the sockets together, as the lean
        # bound's do; benchmarks/server.md.)
        taken, self.unsaved = self.unsaved, {}
        snapshots = [room.snapshot() for room in taken.values()]
        return _Batch(taken, snapshots, [room.copy() for room in taken.values()], self._change_mark)

    def _snapshots_written(self, batch: _Batch, ok: bool) -> None:
        if not batch.snapshots and not batch.unshown:
            return  # (a reader's flush of finished games: it says nothing of the snapshots)
        if ok:
            if self.snapshot_failures:
                log.info("room snapshots are saved again (after %d failed writes)", self.snapshot_failures)
            self.snapshot_failures = 0
            self._show(batch)
            return
        # The database refused them (full disk, a lock held too long): they are written again with
        # the next batch, unless the room changed meanwhile and a newer snapshot is already waiting;
        # nothing of them is shown until then.
        self.snapshot_failures += 1
        for code, room in batch.rooms.items():
            self.unsaved.setdefault(code, room)

    def _show(self, batch: _Batch) -> None:
        """A batch is committed: its rooms reach the sockets, in the order they first changed."""
        for room in batch.unshown:
            self.shown[room.code] = room
            try:
                self._show_room(room)
            except Exception:  # a view that fails must not stop the others, nor the writer
                log.exception("could not show room %s's change to its sockets", room.code)
        if batch.mark > self._durable_mark:
            self._durable_mark = batch.mark
            self._committed(True)

    def _take_records(self) -> list[dict[str, Any]]:
        records = list(self.unarchived.values())
        self.unarchived.clear()
        self._writing = records  # still waiting, for /healthz, until the write says how it went
        return records

    def _write(
        self, snapshots: list[dict[str, Any]], records: list[dict[str, Any]]
    ) -> tuple[bool, list[dict[str, Any]]]:
        """Save snapshots and the games they end in one transaction (in a worker thread or, SQLite,
        on the loop); returns whether the snapshots were saved, and the records that were not."""
        try:
            self.store.save_rooms(snapshots, records)
            return True, []
        except Exception as exc:
            failure = exc
        if records and not is_outage(failure):
            # The database answers but refused these rows: the snapshots alone, so one record it
            # will not take does not stop every room; the records wait (and /healthz says so).
            log.error(
                "the database refuses %d finished game(s) (%s); kept to try again", len(records), failure
            )
            try:
                self.store.save_rooms(snapshots)
                return True, records
            except Exception as exc:
                failure = exc
        if not self.snapshot_failures and not self.archive_failures:  # once per outage, not every batch
            log.error(
                "could not save %d room snapshot(s) and %d finished game(s); retrying (%s)",
                len(snapshots),
                len(records),
                failure,
            )
        return False, records

    def _requeue(self, records: list[dict[str, Any]], failed: list[dict[str, Any]]) -> None:
        """Failed records wait for the next batch, however many tries it takes: never dropped."""
        self._games_archived += len(records) - len(failed)
        if records:
            self.archive_failures = self.archive_failures + 1 if failed else 0
        for record in failed:
            self.unarchived.setdefault(record["id"], record)
        self._writing = []

    def _write_pending(self) -> None:
        records = self._take_records()
        batch = self._take_snapshots()
        saved, failed = self._write(batch.snapshots, records)
        self._snapshots_written(batch, saved)
        self._requeue(records, failed)

    async def persist(self, by_writer: bool = False) -> None:
        """Write what is pending now, off the event loop: the writer writes snapshots and finished
        games; readers of the archive call it first, so a game is listed as soon as it ends, and only
        the finished games are written for them (a read must not set off snapshot writes)."""
        if self.archiver is not None and not by_writer:
            await self.archiver.flush()
        if not by_writer and not self.unarchived:
            return  # nothing for a reader: it need not wait behind the writer's batch
        async with self._persist_lock:
            if not self.unarchived and not (by_writer and self.unsaved):
                return
            batch = self._take_snapshots() if by_writer else _Batch({}, [], [], self._durable_mark)
            records = self._take_records()
            if self.store.local:
                # SQLite on this machine: faster on the loop than in a thread (store.py says why).
                saved, failed = self._write(batch.snapshots, records)
            else:
                saved, failed = await asyncio.to_thread(self._write, batch.snapshots, records)
            self._writes_since_checkpoint += bool(batch.snapshots)
            self._snapshots_written(batch, saved)
            self._requeue(records, failed)

    async def _write_forever(self) -> None:
        """Group commit: a batch goes as soon as there is something to write and the one before it
        is written, but batches start at most every ``snapshot_seconds`` (an idle server writes a
        move at once; a busy one gathers the moves of that interval into one transaction). A
        refused batch is retried with a backoff."""
        started = 0.0
        while True:
            await self._wake.wait()
            self._wake.clear()
            wait = started + self.config.snapshot_seconds - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            started = time.monotonic()
            try:
                await self.persist(by_writer=True)
            except Exception:  # the writer must outlive anything: every change waits on it
                log.exception("the snapshot writer failed; retrying")
                self.snapshot_failures += 1
            if self.snapshot_failures or self.unarchived:
                # Refused snapshots, or games the archive refused: again after a backoff.
                tries = max(self.snapshot_failures, self.archive_failures, 1)
                await asyncio.sleep(min(0.05 * 2 ** min(tries, 10), 2.0))
                self._wake.set()

    async def _checkpoint_forever(self) -> None:
        """SQLite's log copied into its file every few seconds while there are writes, in a thread,
        between two batches (under the writer's lock: never during a write)."""
        while True:
            await asyncio.sleep(CHECKPOINT_SECONDS)
            if not self._writes_since_checkpoint:
                continue
            async with self._persist_lock:
                self._writes_since_checkpoint = 0
                try:
                    await asyncio.to_thread(self.store.checkpoint)
                except Exception:
                    log.warning("could not checkpoint the database's write-ahead log; trying again later")
