"""The hub: a room's live connections, and the pieces every change of a room goes through.

Every room change goes through the backend (load → change → save with version → notify); the hub
listens to those notifications and, for each one, has its snapshot written and a game that just
ended archived (durability.py: nothing is shown before it is durable, so a server killed with
SIGKILL resumes where it was), sends every connection its own message (master.py builds them), and
has what happens next in that room scheduled: the decision clock, bot turns, and the grace period
of disconnected players (scheduler.py).

With rooms in this process's memory, a change reaches the sockets (and ``change`` returns to its
caller) only once the snapshot that holds it is committed. With a shared backend (Redis) a change
is durable when its compare-and-set has landed, before the listener hears of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import types
from collections import deque
from collections.abc import Callable, Coroutine, Generator
from typing import Any, TypeVar

import msgspec

from conflictology.server import master, practice
from conflictology.server.backend import BackendUnavailable, MemoryBackend, RoomBackend
from conflictology.server.botpool import BotPool
from conflictology.server.config import ServerConfig
from conflictology.server.durability import SnapshotWriter
from conflictology.server.messages import Left, Reaction, ServerMessage, encode
from conflictology.server.protocol import CreateRoom, RoomSettings
from conflictology.server.rooms import Room, RoomError, RoomStatus, new_code
from conflictology.server.scheduler import Scheduler, Work
from conflictology.server.security import TokenBucket
from conflictology.server.store import Store

log = logging.getLogger("conflictology.server")

T = TypeVar("T")

_encoder = msgspec.json.Encoder()

# Messages refused for their rate within 10 s after which a socket is closed as flooding.
FLOOD_REFUSALS = 200


@types.coroutine
def _resumed(waiting: Any, send: Coroutine[Any, Any, None]) -> Generator[Any, None, None]:
    """The rest of a send that had to wait (``waiting``: what it yielded to the loop), as a task."""
    try:
        yield waiting
        yield from send.__await__()
    except BaseException:
        send.close()
        raise


def _retrieved(task: asyncio.Future[None]) -> None:
    if not task.cancelled():
        task.exception()  # a failed send closes its connection; the reader sees the peer go


class Connection:
    """One WebSocket: a seat's (``seat_id``) or a spectator's (None). Outgoing messages keep their
    order on a connection. A message to a socket with nothing waiting is written at once, inside the
    call that sends it (the transport takes it without suspending, as a bare broadcast would: waking
    a task per message cost about a fifth of a broadcast); otherwise it joins a queue drained by one
    writer task. (A deque and a future the writer waits on when it is empty: an asyncio.Queue cost
    1.5-2 times as much a message; benchmarks/server.md, issue 28.)"""

    def __init__(
        self,
        ws: Any,
        code: str,
        seat_id: str | None,
        config: ServerConfig,
        address: str = "?",
        deltas: bool = False,
    ) -> None:
        self.ws = ws
        # The socket's own send, under the middleware's wrappers, once it is open (transport.py);
        # None: through the WebSocket object.
        self.raw_send: Callable[[dict[str, Any]], Coroutine[Any, Any, None]] | None = None
        self.code = code
        self.seat_id = seat_id
        # Log deltas (``?v=2``): each state message carries only the log entries not sent yet on this
        # socket (``held``: where its log ends after the last message); without, the whole view.
        self.deltas = deltas
        self.held: master.Held | None = None
        self.address = address  # the client address its limits count under (security.client_key)
        self.opened = time.monotonic()
        self.queue: deque[str | None] = deque()
        self._idle: asyncio.Future[None] | None = None  # what the writer waits on, while it waits
        # A send written at once that had to wait after all (the client reads slowly): the writer
        # waits for it before the queue's next message.
        self._sending: asyncio.Future[None] | None = None
        self.closed = False
        self.max_queue = config.max_queue
        self.max_queue_chars = config.max_queue_chars
        self.queued_chars = 0
        self.bucket = TokenBucket(config.ws_rate_per_second, config.ws_rate_burst)
        # Messages refused for their rate in the current 10 s window (flooding() closes the socket).
        self._refused = 0
        self._window = time.monotonic()
        self.writer: asyncio.Task[None] | None = None

    def flooding(self) -> bool:
        """One more message refused for its rate; true once this socket has had FLOOD_REFUSALS of
        them within 10 s (a client that slows down when told never gets near)."""
        now = time.monotonic()
        if now - self._window > 10.0:
            self._window, self._refused = now, 0
        self._refused += 1
        return self._refused > FLOOD_REFUSALS

    def send(self, message: ServerMessage) -> None:
        self.send_text(_encoder.encode(message).decode())

    def send_room(self, texts: master.SeatTexts) -> None:
        """This socket's text of a seat's message: its log from where this socket's ends."""
        self.send_text(texts.text(self.held, self.deltas))
        self.held = texts.held

    def send_text(self, text: str) -> None:
        if self.closed:
            return
        if self._idle is not None and self._sending is None and not self.queue:
            self._send_now(text)
            return
        if len(self.queue) >= self.max_queue or self.queued_chars + len(text) > self.max_queue_chars:
            # A client that does not read its messages is dropped rather than buffered forever.
            self.close()
            return
        self.queued_chars += len(text)
        self._put(text)

    def _send_now(self, text: str) -> None:
        """The writer is idle: the message is written now. uvicorn's send returns without suspending
        unless the transport is paused for a client that does not read; then the rest of it runs
        as a task, and the writer waits for that task before the next message."""
        send = self._send(text)
        try:
            waiting = send.send(None)
        except StopIteration:
            return
        except Exception:  # the peer went away, as in the writer
            self.close()
            return
        self._sending = sending = asyncio.ensure_future(_resumed(waiting, send))
        sending.add_done_callback(_retrieved)

    def _send(self, text: str) -> Coroutine[Any, Any, None]:
        raw = self.raw_send
        if raw is None:
            send: Coroutine[Any, Any, None] = self.ws.send_text(text)
            return send
        return raw({"type": "websocket.send", "text": text})

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._put(None)

    def _put(self, item: str | None) -> None:
        self.queue.append(item)
        idle, self._idle = self._idle, None
        if idle is not None and not idle.done():
            idle.set_result(None)

    async def run_writer(self) -> None:
        queue = self.queue
        try:
            while True:
                if self._sending is not None:
                    await self._sending
                    self._sending = None
                    continue
                if not queue:
                    self._idle = asyncio.get_running_loop().create_future()
                    await self._idle
                    continue
                item = queue.popleft()
                if item is None:
                    with contextlib.suppress(Exception):
                        await self.ws.close()
                    return
                self.queued_chars -= len(item)
                await self._send(item)
        except Exception:  # the peer went away; the reader side will notice and detach
            self.closed = True


class Hub:
    def __init__(self, config: ServerConfig, store: Store, backend: RoomBackend | None = None) -> None:
        self.config = config
        self.store = store
        self.backend = backend or MemoryBackend()
        self.backend.subscribe(self._on_change)
        self.backend.on_event(self._on_event)
        self.connections: dict[str, set[Connection]] = {}
        self._sweeper: asyncio.Task[None] | None = None
        # Rooms whose seats are being given back to players connected here (see _reclaim).
        self._reclaiming: set[str] = set()
        self._side_tasks: set[asyncio.Task[None]] = set()
        # Snapshots and archives, written in batches: a change is shown once it is durable.
        self.durability = SnapshotWriter(config, store, self.broadcast, self.backend.archive_queue())
        # The messages of the last broadcast, per room and seat, with their texts by where a socket's
        # log ends (a sync or a second tab is answered from them; see master.SeatTexts).
        self._texts = master.Texts()
        self._spectators: dict[str, int] = {}  # spectator sockets per client address
        self._watching: set[str] = set()  # rooms whose changes this process follows for its sockets
        # Bot decisions, in worker processes started with the first one that needs them.
        self.bot_pool = BotPool(
            config.resolved_bot_workers(), config.bot_time_cap, config.bot_queue_wait, config.bot_worker_setup
        )
        # Clocks, holds, bot turns and grace periods: each goes through change() like a move.
        self.scheduler = Scheduler(config, self.backend, self.change, self.connected_seats, self.bot_pool)

    @property
    def tasks(self) -> dict[str, dict[str, tuple[Work, int]]]:
        """The scheduled work of each room (Scheduler.tasks)."""
        return self.scheduler.tasks

    # ---- lifecycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        if self.backend.shared:
            # Rooms live in the shared backend: nothing to restore from the SQL store, and the
            # backend hands this process the rooms it owns (with their clocks) through _on_change.
            await self.backend.start(self._interested)
            self._sweeper = asyncio.create_task(self._sweep_forever())
            self.durability.start(checkpoints=False)
            return
        restored = 0
        for snapshot in self.store.load_rooms():
            try:
                room = Room.restore(snapshot)
            except Exception:
                log.exception("could not restore room %s", snapshot.get("code"))
                continue
            self.backend.load(room)
            self.durability.restored(room)
            restored += 1
            self.scheduler.schedule(room)
        if restored:
            log.info("restored %d room(s)", restored)
        self._sweeper = asyncio.create_task(self._sweep_forever())
        self.durability.start()

    async def stop(self) -> None:
        if self._sweeper:
            self._sweeper.cancel()
        await self.durability.stop()
        self.scheduler.stop()
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

    def health(self) -> dict[str, str]:
        """What ``/healthz`` reports: whether the rooms' backend answers and the database takes the
        snapshots and archives."""
        return {
            "rooms": "ok" if self.backend.available() else "unavailable",
            "database": self.durability.database_health(),
        }

    def room_count(self) -> int:
        """Rooms this process keeps (with a shared backend: rooms it owns)."""
        return self.backend.count()

    # ---- changes ---------------------------------------------------------------------------------

    async def change(self, code: str, fn: Callable[[Room], T]) -> tuple[Room, T]:
        """Apply ``fn`` to the room; returns once the change is durable (and shown), with the room as
        shown then."""
        self._refuse_while_unsaved()
        room, result = await self.backend.update(code, fn)
        await self.until_durable()
        if not self.backend.shared:
            room = self.durability.shown.get(code, room)
        return room, result

    def _refuse_while_unsaved(self) -> None:
        if not self.backend.shared:
            self.durability.refuse_while_unsaved()

    async def until_durable(self) -> None:
        """Wait until every change this process has made so far is committed (durability.py)."""
        await self.durability.until_durable()

    async def persist(self, by_writer: bool = False) -> None:
        """Write what is pending now (``SnapshotWriter.persist``): the archive's readers call it
        first, so a game is listed as soon as it ends."""
        await self.durability.persist(by_writer)

    @property
    def games_archived(self) -> int:
        """Games this process has archived (a cache of the recent ones reads it)."""
        return self.durability.games_archived

    async def room(self, code: str) -> Room:
        """The room as players may see it: its newest durable version (with rooms in this process's
        memory, the copy last shown; a room not saved yet does not exist for anyone)."""
        if not self.backend.shared:
            shown = self.durability.shown.get(code)
            if shown is None:
                raise RoomError(404, "no_room", f"no room {code}")
            return shown
        room = await self.backend.get(code)
        if room is None:
            raise RoomError(404, "no_room", f"no room {code}")
        return room

    async def create_room(self, body: CreateRoom, creator: str | None = None) -> tuple[Room, str]:
        settings = body.settings.apply_to(RoomSettings()) if body.settings else RoomSettings()
        if body.practice:
            settings = practice.practice_settings(settings)
        self._refuse_while_unsaved()
        for _ in range(100):
            room, token = Room.create(new_code(), body.game, body.name, body.options, settings, creator)
            if await self.backend.insert(room):
                await self.until_durable()
                return room, token
        raise RoomError(503, "no_code", "could not find a free room code")

    def _on_change(self, room: Room, local: bool = True) -> None:
        if local:
            # Only the process that made a change saves it: a change is made exactly once, so a
            # finished game is archived exactly once even with several processes.
            if room.status is RoomStatus.OVER and room.game_id and not self.durability.archived(room.game_id):
                self.durability.queue_archive(room)
            if not self.backend.shared:
                # Shown once its snapshot is committed (the writer broadcasts it); its clocks and bots
                # start now: what they do is held back the same way.
                self.durability.changed(room)
                self.scheduler.schedule(room)
                return
        elif (
            room.status is RoomStatus.OVER
            and room.game_id
            and not self.durability.archived(room.game_id)
            and self.backend.owns(room.code)
        ):
            # A room taken over from a process that died between saving the last move and archiving
            # the game: its new owner archives it (the store ignores a game it already holds).
            self.durability.queue_archive(room)
        if not local:
            self._reclaim(room)
        self.broadcast(room)
        self.scheduler.schedule(room)

    def _seats_here(self, code: str) -> set[str]:
        return {c.seat_id for c in self.connections.get(code, ()) if c.seat_id and not c.closed}

    async def _give_back(self, code: str) -> None:
        """Seats marked away whose player has a socket open here are theirs again (the bot stops at
        once)."""

        def back(r: Room) -> None:
            present = self._seats_here(code)
            away = [s for s in r.seats if (s.afk or s.away_until is not None) and s.id in present]
            if not away:
                raise RoomError(409, "no_change", "no seat to give back")
            for seat in away:
                seat.afk = False
                seat.away_until = None  # the grace's countdown, if it was still running

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
            except BackendUnavailable:
                pass  # the player's socket gives it back when the store answers again (attach)
            except Exception:
                log.exception("could not give room %s's seats back to their players", code)
            finally:
                self._reclaiming.discard(code)

        task = asyncio.ensure_future(give_back())
        self._side_tasks.add(task)
        task.add_done_callback(self._side_tasks.discard)

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
        # The room's part of every seat's message, encoded once for all of them.
        info = msgspec.Raw(_encoder.encode(room.info(connected)))
        shared = master.table(room) if room.state is not None else None
        cache = self._texts.fresh(room, connected)
        for conn in list(conns):
            idx = None if conn.seat_id is None else room.seat_index(conn.seat_id)
            if conn.seat_id is not None and (idx is None or room.seats[idx].left):
                conn.send(Left())
                conn.close()
                continue
            texts = master.texts_for(room, idx, connected, cache, info, shared, conn.held, conn.deltas)
            conn.send_room(texts)
        for texts in cache.values():
            texts.seal()

    async def _schedule_latest(self, code: str) -> None:
        # Clocks and bots follow the room as it is now, not as it was last shown (an older seq would
        # cancel the bot turn of the current one).
        room = await self.backend.get(code)
        if room is not None:
            self.scheduler.schedule(room)

    def spectating(self, address: str) -> int:
        """Spectator sockets open on this process from one client address."""
        return self._spectators.get(address, 0)

    def admit(self, conn: Connection) -> None:
        """Count a socket in its room at once, before its handshake is answered: concurrent
        handshakes then see it against the caps (attach does the rest)."""
        conns = self.connections.setdefault(conn.code, set())
        if conn in conns:
            return
        conns.add(conn)
        if conn.seat_id is None:
            self._spectators[conn.address] = self._spectators.get(conn.address, 0) + 1

    async def attach(self, conn: Connection) -> None:
        self.admit(conn)
        conns = self.connections[conn.code]
        conn.writer = asyncio.create_task(conn.run_writer())
        if conn.code not in self._watching:
            self._watching.add(conn.code)
            await self.backend.watch(conn.code)
        room = await self.room(conn.code)
        idx = None if conn.seat_id is None else room.seat_index(conn.seat_id)
        if idx is not None and (room.seats[idx].afk or room.seats[idx].away_until is not None):
            # The player is back. (Their presence is announced below all the same: other processes
            # must count the seat as connected, or the owner's grace would mark it away again.)
            await self._give_back(conn.code)
        if conn.seat_id is not None and sum(1 for c in conns if c.seat_id == conn.seat_id) == 1:
            # A seat came online: everyone sees it (the newcomer gets its first message this way).
            await self.backend.presence(conn.code, conn.seat_id, True)
            self.broadcast(await self.room(conn.code))
            await self._schedule_latest(conn.code)
        else:
            # A spectator or a second tab: nobody else's message changes.
            await self.send_current(conn)

    async def detach(self, conn: Connection) -> None:
        # Every step is tried even when the rooms' store is unavailable: this process's own record
        # of what it follows and who is connected through it is right, and is written back to the
        # store when it answers again.
        conn.close()
        conns = self.connections.get(conn.code)
        if conns is not None and conn in conns and conn.seat_id is None:
            left = self._spectators.get(conn.address, 0) - 1
            if left > 0:
                self._spectators[conn.address] = left
            else:
                self._spectators.pop(conn.address, None)
        if conns is not None:
            conns.discard(conn)
            if not conns:
                del self.connections[conn.code]
                self._texts.forget(conn.code)
                if conn.code in self._watching:
                    self._watching.discard(conn.code)
                    with contextlib.suppress(BackendUnavailable):
                        await self.backend.unwatch(conn.code)
        still_there = conns is not None and any(c.seat_id == conn.seat_id for c in conns)
        if conn.seat_id is not None and not still_there:
            with contextlib.suppress(BackendUnavailable):
                await self.backend.presence(conn.code, conn.seat_id, False)
            # The seat's last socket closed: everyone sees it go, and its grace period starts.
            with contextlib.suppress(RoomError, BackendUnavailable):
                self.broadcast(await self.room(conn.code))
                await self._schedule_latest(conn.code)

    async def send_current(self, conn: Connection) -> None:
        """The connection's message for the room as last shown, its log whole (a ``sync``, a second
        tab, a spectator arriving); from the last broadcast's texts when nothing changed since (a
        ``sync`` costs a lookup, not a view)."""
        room = await self.room(conn.code)
        idx = None if conn.seat_id is None else room.seat_index(conn.seat_id)
        connected = self.connected_seats(room)
        conn.held = None  # whatever it had: a sync is asked for when a client's log is wrong
        cache = self._texts.current(room, connected)
        texts = master.texts_for(room, idx, connected, cache, deltas=conn.deltas)
        conn.send_room(texts)
        texts.seal()

    # ---- reactions: shown, never stored ------------------------------------------------------------

    async def react(self, conn: Connection, emoji: str) -> None:
        """A seated player's reaction reaches every socket in the room, on this process and (shared
        backend) on the others. Nothing in the room changes, so nothing is saved: a reaction lost in
        a restart is a reaction nobody needed."""
        room = await self.room(conn.code)
        idx = None if conn.seat_id is None else room.seat_index(conn.seat_id)
        if idx is None or room.seats[idx].left:
            raise RoomError(403, "no_seat", "you no longer hold a seat in this room")
        reaction = Reaction(idx, emoji)
        text = encode(reaction)
        for other in list(self.connections.get(conn.code, ())):
            other.send_text(text)
        # The other processes' sockets: the backend carries plain JSON (it decodes it for _on_event).
        await self.backend.announce(conn.code, msgspec.to_builtins(reaction))

    def _on_event(self, code: str, message: dict[str, Any]) -> None:
        text = _encoder.encode(message).decode()
        for conn in list(self.connections.get(code, ())):
            conn.send_text(text)

    # ---- idle rooms ------------------------------------------------------------------------------

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.config.sweep_seconds)
            try:
                await self.sweep()
            except Exception:
                log.exception("sweep failed")

    async def sweep(self, now: float | None = None) -> list[str]:
        """Remove rooms nobody is connected to that have not changed for ``idle_seconds`` (a standing
        room: ``standing_idle_seconds``)."""
        now = time.time() if now is None else now
        removed = []
        for code in await self.backend.codes():
            if self.connections.get(code) or not self.backend.owns(code):
                continue
            room = await self.backend.get(code)
            if room is None or self.backend.remote_seats(code):
                continue
            idle = self.config.standing_idle_seconds if room.settings.standing else self.config.idle_seconds
            if now - room.updated > idle:
                await self.backend.delete(code)
                await self.durability.forget(code)
                self._texts.forget(code)
                self.scheduler.drop(code)
                removed.append(code)
        return removed
