"""The hub: live connections, timers and bots around the rooms.

Every room change goes through the backend (load → change → save with version → notify); the hub
listens to those notifications and, for each one, saves the snapshot (so a server killed with
SIGKILL resumes where it was), archives a game that just ended, sends every connection its own
message, and (re)schedules what happens next in that room: the decision clock, bot turns, and the
grace period of disconnected players. Scheduled work re-checks the room's ``seq`` before acting, so
a bot turn or a clock that lost a race does nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

from conflictology.server.backend import MemoryBackend, RoomBackend
from conflictology.server.botpool import BotPool
from conflictology.server.config import ServerConfig
from conflictology.server.protocol import CreateRoom, RoomSettings
from conflictology.server.rooms import Room, RoomError, RoomStatus, new_code, seat_level
from conflictology.server.security import TokenBucket
from conflictology.server.store import Store

log = logging.getLogger("conflictology.server")

T = TypeVar("T")

_encoder = msgspec.json.Encoder()


class Connection:
    """One WebSocket: a seat's (``seat_id``) or a spectator's (None). Outgoing messages go through a
    queue drained by one writer task, so replies on one connection keep their order."""

    def __init__(self, ws: Any, code: str, seat_id: str | None, config: ServerConfig) -> None:
        self.ws = ws
        self.code = code
        self.seat_id = seat_id
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.closed = False
        self.max_queue = config.max_queue
        self.bucket = TokenBucket(config.ws_rate_per_second, config.ws_rate_burst)
        self.writer: asyncio.Task[None] | None = None

    def send(self, message: dict[str, Any]) -> None:
        self.send_text(_encoder.encode(message).decode())

    def send_text(self, text: str) -> None:
        if self.closed:
            return
        if self.queue.qsize() >= self.max_queue:
            # A client that does not read its messages is dropped rather than buffered forever.
            self.close()
            return
        self.queue.put_nowait(text)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.queue.put_nowait(None)

    async def run_writer(self) -> None:
        try:
            while True:
                item = await self.queue.get()
                if item is None:
                    with contextlib.suppress(Exception):
                        await self.ws.close()
                    return
                await self.ws.send_text(item)
        except Exception:  # the peer went away; the reader side will notice and detach
            self.closed = True


class Hub:
    def __init__(self, config: ServerConfig, store: Store, backend: RoomBackend | None = None) -> None:
        self.config = config
        self.store = store
        self.backend = backend or MemoryBackend()
        self.backend.subscribe(self._on_change)
        self.connections: dict[str, set[Connection]] = {}
        # Per room: named tasks ("timer", "bot:<seat>", "grace:<seat id>") and the seq a bot task answers.
        self.tasks: dict[str, dict[str, tuple[asyncio.Task[None], int]]] = {}
        self._sweeper: asyncio.Task[None] | None = None
        # Rooms whose seats are being given back to players connected here (see _reclaim).
        self._reclaiming: set[str] = set()
        self._side_tasks: set[asyncio.Task[None]] = set()
        self._archived: set[str] = set()
        # Rooms changed since the last snapshot write, and finished games not yet archived: the
        # batched writer takes both off the event loop (a database write there stalls every room).
        self._unsaved: dict[str, Room] = {}
        self._unarchived: dict[str, dict[str, Any]] = {}
        self._archive_failures: dict[str, int] = {}
        self._snapshot_failures = 0  # failed snapshot writes in a row
        self._persist_lock = asyncio.Lock()
        self._writer: asyncio.Task[None] | None = None
        # Bot delays and seeds (its own generator: the global one belongs to the host program).
        self._rng = random.Random()
        # Bot decisions, in worker processes started with the first one that needs them.
        self.bot_pool = BotPool(
            config.resolved_bot_workers(), config.bot_time_cap, config.bot_queue_wait, config.bot_worker_setup
        )

    # ---- lifecycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        if self.backend.shared:
            # Rooms live in the shared backend: nothing to restore from the SQL store, and the
            # backend hands this process the rooms it owns (with their clocks) through _on_change.
            await self.backend.start(self._interested)
            self._sweeper = asyncio.create_task(self._sweep_forever())
            self._writer = asyncio.create_task(self._write_forever())
            return
        restored = 0
        for snapshot in self.store.load_rooms():
            try:
                room = Room.restore(snapshot)
            except Exception:
                log.exception("could not restore room %s", snapshot.get("code"))
                continue
            self.backend.load(room)
            restored += 1
            if room.status is RoomStatus.OVER and room.game_id:
                self.store.archive(room.archive_record())
                self._archived.add(room.game_id)
            self._schedule(room)
        if restored:
            log.info("restored %d room(s)", restored)
        self._sweeper = asyncio.create_task(self._sweep_forever())
        self._writer = asyncio.create_task(self._write_forever())

    async def stop(self) -> None:
        if self._sweeper:
            self._sweeper.cancel()
        if self._writer:
            # Under the writer's lock: a write in flight finishes first (its thread cannot be
            # cancelled, and an older snapshot landing after the last one would be what a restart
            # resumes from), and the writer is stopped between writes.
            async with self._persist_lock:
                self._writer.cancel()
                self._write_pending()
            with contextlib.suppress(BaseException):
                await self._writer
        for tasks in self.tasks.values():
            for task, _ in tasks.values():
                task.cancel()
        self.tasks.clear()
        # After the bot turns are cancelled (a withdrawn decision must not play a timeout action).
        await self.bot_pool.stop()
        for side in list(self._side_tasks):
            side.cancel()
        for conns in self.connections.values():
            for conn in conns:
                conn.close()
        await self.backend.stop()

    def _interested(self, code: str) -> bool:
        return bool(self.connections.get(code))

    # ---- changes ---------------------------------------------------------------------------------

    async def change(self, code: str, fn: Callable[[Room], T]) -> tuple[Room, T]:
        return await self.backend.update(code, fn)

    async def room(self, code: str) -> Room:
        room = await self.backend.get(code)
        if room is None:
            raise RoomError(404, "no_room", f"no room {code}")
        return room

    async def create_room(self, body: CreateRoom) -> tuple[Room, str]:
        settings = body.settings.apply_to(RoomSettings()) if body.settings else RoomSettings()
        for _ in range(100):
            room, token = Room.create(new_code(), body.game, body.name, body.options, settings)
            if await self.backend.insert(room):
                return room, token
        raise RoomError(503, "no_code", "could not find a free room code")

    def _on_change(self, room: Room, local: bool = True) -> None:
        if local:
            # Only the process that made a change saves it: a change is made exactly once, so a
            # finished game is archived exactly once even with several processes.
            if not self.backend.shared:
                self._unsaved[room.code] = room
            if room.status is RoomStatus.OVER and room.game_id and room.game_id not in self._archived:
                self._queue_archive(room)
        elif (
            room.status is RoomStatus.OVER
            and room.game_id
            and room.game_id not in self._archived
            and self.backend.owns(room.code)
        ):
            # A room taken over from a process that died between saving the last move and archiving
            # the game: its new owner archives it (the store ignores a game it already holds).
            self._queue_archive(room)
        if not local:
            self._reclaim(room)
        self.broadcast(room)
        self._schedule(room)

    def _seats_here(self, code: str) -> set[str]:
        return {c.seat_id for c in self.connections.get(code, ()) if c.seat_id and not c.closed}

    async def _give_back(self, code: str) -> None:
        """Seats marked away whose player has a socket open here are theirs again (the bot stops at
        once)."""

        def back(r: Room) -> None:
            present = self._seats_here(code)
            away = [s for s in r.seats if s.afk and s.id in present]
            if not away:
                raise RoomError(409, "no_change", "no seat to give back")
            for seat in away:
                seat.afk = False

        with contextlib.suppress(RoomError):
            await self.change(code, back)

    def _reclaim(self, room: Room) -> None:
        """Another process marked a seat away while its player has a socket open here: the grace
        period ended on the room's owner just as the player came back through this process, before
        the owner heard of it. The seat is given back at once (as on reconnecting)."""
        if room.status is not RoomStatus.PLAYING or room.code in self._reclaiming:
            return
        here = self._seats_here(room.code)
        if not any(s.afk and s.id in here for s in room.seats):
            return
        code = room.code
        self._reclaiming.add(code)

        async def give_back() -> None:
            try:
                await self._give_back(code)
            except Exception:
                log.exception("could not give room %s's seats back to their players", code)
            finally:
                self._reclaiming.discard(code)

        task = asyncio.ensure_future(give_back())
        self._side_tasks.add(task)
        task.add_done_callback(self._side_tasks.discard)

    def _queue_archive(self, room: Room) -> None:
        assert room.game_id is not None
        self._archived.add(room.game_id)
        # The record is taken now, on the event loop, so it is the game as it ended.
        self._unarchived[room.game_id] = room.archive_record()

    def _take_snapshots(self) -> tuple[dict[str, Room], list[dict[str, Any]]]:
        # Taken on the event loop, between changes, so each snapshot is one consistent room.
        taken, self._unsaved = self._unsaved, {}
        return taken, [room.snapshot() for room in taken.values()]

    def _snapshots_written(self, taken: dict[str, Room], ok: bool) -> None:
        if ok:
            if self._snapshot_failures:
                log.info("room snapshots are saved again (after %d failed writes)", self._snapshot_failures)
            self._snapshot_failures = 0
            return
        # The database refused them (full disk, a lock held too long): they are written again with
        # the next batch, unless the room changed meanwhile and a newer snapshot is already waiting.
        self._snapshot_failures += 1
        for code, room in taken.items():
            self._unsaved.setdefault(code, room)

    def _take_records(self) -> list[dict[str, Any]]:
        records = list(self._unarchived.values())
        self._unarchived.clear()
        return records

    def _write(
        self, snapshots: list[dict[str, Any]], records: list[dict[str, Any]]
    ) -> tuple[bool, list[dict[str, Any]]]:
        """Save snapshots and archive games (in a worker thread); returns whether the snapshots were
        saved, and the records that failed."""
        failed = []
        saved = True
        try:
            self.store.save_rooms(snapshots)
        except Exception:
            saved = False
            if not self._snapshot_failures:  # once per outage, not every batch
                log.exception("could not save %d room snapshot(s); retrying", len(snapshots))
        for record in records:
            try:
                self.store.archive(record)
            except Exception:
                log.exception("could not archive game %s", record["id"])
                failed.append(record)
        return saved, failed

    def _requeue(self, records: list[dict[str, Any]], failed: list[dict[str, Any]], count: bool) -> None:
        failed_ids = {record["id"] for record in failed}
        for record in records:
            if record["id"] not in failed_ids:
                self._archive_failures.pop(record["id"], None)
        for record in failed:
            if not count:  # a reader's flush: only the writer's own attempts count towards giving up
                self._unarchived.setdefault(record["id"], record)
                continue
            tries = self._archive_failures.get(record["id"], 0) + 1
            if tries < 5:  # a database that is down for a moment; a record it refuses is dropped
                self._archive_failures[record["id"]] = tries
                self._unarchived.setdefault(record["id"], record)
            else:
                self._archive_failures.pop(record["id"], None)
                log.error("gave up archiving game %s", record["id"])

    def _write_pending(self) -> None:
        records = self._take_records()
        taken, snapshots = self._take_snapshots()
        saved, failed = self._write(snapshots, records)
        self._snapshots_written(taken, saved)
        self._requeue(records, failed, count=True)

    async def persist(self, by_writer: bool = False) -> None:
        """Write what is pending now, off the event loop: the batched writer writes snapshots and
        finished games; readers of the archive call it first, so a game is listed as soon as it
        ends, and only the finished games are written for them (a read must not set off snapshot writes)."""
        async with self._persist_lock:
            if not self._unarchived and not (by_writer and self._unsaved):
                return
            taken, snapshots = self._take_snapshots() if by_writer else ({}, [])
            records = self._take_records()
            saved, failed = await asyncio.to_thread(self._write, snapshots, records)
            self._snapshots_written(taken, saved)
            self._requeue(records, failed, count=by_writer)

    async def _write_forever(self) -> None:
        while True:
            await asyncio.sleep(self.config.snapshot_seconds)
            await self.persist(by_writer=True)

    # ---- connections -----------------------------------------------------------------------------

    def connected_seats(self, room: Room) -> set[int]:
        """Seats with a socket open on this process or (shared backend) on another one."""
        ids = set(self.backend.remote_seats(room.code))
        for conn in self.connections.get(room.code, ()):
            if conn.seat_id is not None and not conn.closed:
                ids.add(conn.seat_id)
        return {i for i, s in enumerate(room.seats) if s.id in ids}

    def broadcast(self, room: Room) -> None:
        conns = self.connections.get(room.code)
        if not conns:
            return
        connected = self.connected_seats(room)
        info = room.info(connected)
        cache: dict[int | None, str] = {}
        for conn in list(conns):
            idx = None if conn.seat_id is None else room.seat_index(conn.seat_id)
            if conn.seat_id is not None and (idx is None or room.seats[idx].left):
                conn.send({"type": "left", "message": "you no longer hold a seat in this room"})
                conn.close()
                continue
            text = cache.get(idx)
            if text is None:
                text = cache[idx] = _encoder.encode(room.message_for(idx, connected, info)).decode()
            conn.send_text(text)

    async def attach(self, conn: Connection) -> None:
        conns = self.connections.setdefault(conn.code, set())
        first = not conns
        conns.add(conn)
        conn.writer = asyncio.create_task(conn.run_writer())
        if first:
            await self.backend.watch(conn.code)
        room = await self.room(conn.code)
        idx = None if conn.seat_id is None else room.seat_index(conn.seat_id)
        if idx is not None and room.seats[idx].afk:
            # The player is back. (Their presence is announced below all the same: other processes
            # must count the seat as connected, or the owner's grace would mark it away again.)
            await self._give_back(conn.code)
        if conn.seat_id is not None and sum(1 for c in conns if c.seat_id == conn.seat_id) == 1:
            # A seat came online: everyone sees it (the newcomer gets its first message this way).
            await self.backend.presence(conn.code, conn.seat_id, True)
            room = await self.room(conn.code)
            self.broadcast(room)
            self._schedule(room)
        else:
            # A spectator or a second tab: nobody else's message changes.
            await self.send_current(conn)

    async def detach(self, conn: Connection) -> None:
        conn.close()
        conns = self.connections.get(conn.code)
        if conns is not None:
            conns.discard(conn)
            if not conns:
                del self.connections[conn.code]
                await self.backend.unwatch(conn.code)
        still_there = conns is not None and any(c.seat_id == conn.seat_id for c in conns)
        if conn.seat_id is not None and not still_there:
            await self.backend.presence(conn.code, conn.seat_id, False)
        room = await self.backend.get(conn.code)
        if room is not None and conn.seat_id is not None and not still_there:
            # The seat's last socket closed: everyone sees it go, and its grace period starts.
            self.broadcast(room)
            self._schedule(room)

    async def send_current(self, conn: Connection) -> None:
        room = await self.room(conn.code)
        idx = None if conn.seat_id is None else room.seat_index(conn.seat_id)
        conn.send(room.message_for(idx, self.connected_seats(room)))

    # ---- scheduling ------------------------------------------------------------------------------

    def _start_task(self, code: str, key: str, coro: Any, seq: int = 0) -> None:
        tasks = self.tasks.setdefault(code, {})
        old = tasks.get(key)
        if old is not None and old[0] is not asyncio.current_task():
            old[0].cancel()
        tasks[key] = (asyncio.create_task(coro), seq)

    def _cancel(self, code: str, key: str) -> None:
        tasks = self.tasks.get(code, {})
        entry = tasks.pop(key, None)
        if entry is not None and entry[0] is not asyncio.current_task():
            entry[0].cancel()

    def _schedule(self, room: Room) -> None:
        code = room.code
        if not self.backend.owns(code):
            # Another process runs this room's clocks and bots (its lease in the shared backend).
            for task, _ in self.tasks.pop(code, {}).values():
                if task is not asyncio.current_task():
                    task.cancel()
            return
        tasks = self.tasks.setdefault(code, {})
        playing = room.status is RoomStatus.PLAYING and room.state is not None
        # The decision clock.
        timer = tasks.get("timer")
        if playing and room.deadline is not None:
            if timer is None or timer[1] != room.seq or timer[0].done():
                self._start_task(code, "timer", self._timer(code, room.seq, room.deadline), room.seq)
        elif timer is not None:
            self._cancel(code, "timer")
        # Bot turns: bots, players who left, and disconnected players past their grace period.
        waiting = set(room.state.waiting_for()) if playing and room.state is not None else set()
        for key in [k for k in tasks if k.startswith("bot:")]:
            seat = int(key[4:])
            _task, seq = tasks[key]
            if seat not in waiting or seq != room.seq or not room.seats[seat].bot_controlled:
                self._cancel(code, key)
        for seat in sorted(waiting):
            if room.seats[seat].bot_controlled:
                key = f"bot:{seat}"
                entry = tasks.get(key)
                if entry is None or entry[1] != room.seq or entry[0].done():
                    self._start_task(code, key, self._bot_turn(code, seat, room.seq), room.seq)
        # Grace periods of disconnected players.
        connected = self.connected_seats(room) if playing else set()
        want = set()
        if playing:
            for i, s in enumerate(room.seats):
                if not s.bot and not s.left and not s.afk and i not in connected:
                    want.add(s.id)
        for key in [k for k in tasks if k.startswith("grace:")]:
            if key[6:] not in want:
                self._cancel(code, key)
        for seat_id in want:
            entry = tasks.get(f"grace:{seat_id}")
            if entry is None or entry[0].done():
                self._start_task(code, f"grace:{seat_id}", self._grace(code, seat_id))

    def _bot_delay(self, room: Room) -> float:
        base = room.settings.bot_delay
        if base is None:
            base = self.config.bot_delay
        # A little irregularity reads as a person thinking.
        return base * self._rng.uniform(0.7, 1.3)

    async def _timer(self, code: str, seq: int, deadline: float) -> None:
        # The event loop's clock is monotonic and deadlines are wall-clock epoch seconds (clients
        # show them): sleep until the wall clock has really passed the deadline.
        while (left := deadline - time.time()) > 0:
            await asyncio.sleep(left + 0.005)

        def expire(r: Room) -> None:
            if r.seq != seq or r.deadline != deadline or not r.expire(time.time()):
                raise RoomError(409, "no_change", "the clock was already answered")

        with contextlib.suppress(RoomError):
            await self.change(code, expire)

    async def _bot_turn(self, code: str, seat: int, seq: int) -> None:
        room = await self.backend.get(code)
        if room is None:
            return
        # The delay comes first: of several bots awaited at once (a response window), those not
        # first to answer are cancelled before they think.
        await asyncio.sleep(self._bot_delay(room))
        room = await self.backend.get(code)
        if room is None or room.seq != seq or room.state is None or room.status is not RoomStatus.PLAYING:
            return
        state = room.state
        if seat not in state.waiting_for():
            return
        level = seat_level(room, seat)
        view, legal = state.view(seat), state.legal_actions(seat)
        try:
            fallback = state.timeout_action(seat)
        except Exception:
            fallback = legal[0]
        # Off the event loop, in a worker process (docs/bots.md, "On a server"); None when the
        # decision was cut at the time cap, its worker died or the bot failed (already logged).
        action = await self.bot_pool.decide(
            room.game, level, seat, self._rng.getrandbits(63), view, legal, f"room {code} seat {seat}"
        )
        if action is None:
            action = fallback
        try:
            await self.change(code, lambda r: r.act(seat, action, seq, time.time(), by="bot"))
        except RoomError as exc:
            if exc.code in ("illegal", "bad_action"):
                # Not the message: it may quote the action or the seat's legal list (its own cards).
                kind = action.get("type") if isinstance(action, dict) else type(action).__name__
                log.error(
                    "bot %s chose an illegal action (type %r) for seat %d in room %s; timeout action instead",
                    level,
                    kind,
                    seat,
                    code,
                )
                with contextlib.suppress(RoomError):
                    await self.change(code, lambda r: r.act(seat, fallback, seq, time.time(), by="bot"))

    async def _grace(self, code: str, seat_id: str) -> None:
        room = await self.backend.get(code)
        if room is None:
            return
        grace = room.settings.grace_seconds
        if grace is None:
            grace = self.config.grace_seconds
        await asyncio.sleep(grace)

        def away(r: Room) -> None:
            i = r.seat_index(seat_id)
            if (
                i is None
                or r.status is not RoomStatus.PLAYING
                or r.seats[i].afk
                or i in self.connected_seats(r)
            ):
                raise RoomError(409, "no_change", "the player is back")
            r.seats[i].afk = True

        with contextlib.suppress(RoomError):
            await self.change(code, away)

    # ---- idle rooms ------------------------------------------------------------------------------

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.config.sweep_seconds)
            try:
                await self.sweep()
            except Exception:
                log.exception("sweep failed")

    async def sweep(self, now: float | None = None) -> list[str]:
        """Remove rooms nobody is connected to that have not changed for ``idle_seconds``."""
        now = time.time() if now is None else now
        removed = []
        for code in await self.backend.codes():
            if self.connections.get(code) or not self.backend.owns(code):
                continue
            room = await self.backend.get(code)
            if room is None or self.backend.remote_seats(code):
                continue
            if now - room.updated > self.config.idle_seconds:
                await self.backend.delete(code)
                async with self._persist_lock:  # after any write of it already under way
                    # (a failed write puts its rooms back in _unsaved: dropped here, under the lock)
                    self._unsaved.pop(code, None)
                    await asyncio.to_thread(self.store.delete_room, code)
                for task, _ in self.tasks.pop(code, {}).values():
                    task.cancel()
                removed.append(code)
        return removed
