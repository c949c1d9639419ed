"""The hub: live connections, timers and bots around the rooms.

Every room change goes through the backend (load → change → save with version → notify); the hub
listens to those notifications and, for each one, saves the snapshot (so a server killed with
SIGKILL resumes where it was), archives a game that just ended, sends every connection its own
message, and (re)schedules what happens next in that room: the decision clock, bot turns, and the
grace period of disconnected players. Scheduled work re-checks the room's ``seq`` before acting, so
a bot turn or a clock that lost a race does nothing.

Nothing is shown before it is durable: with rooms in this process's memory, a change reaches the
sockets (and ``change`` returns to its caller) only once the snapshot that holds it is committed, so
a server killed at any instant never takes back a move a player saw. Snapshots are written by one
writer, off the event loop, a batch at a time: the changes made while a batch is being written go
together in the next one (group commit). With a shared backend (Redis) a change is durable when its
compare-and-set has landed, before the listener hears of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import msgspec

from conflictology.server import master
from conflictology.server.backend import BackendUnavailable, MemoryBackend, RoomBackend
from conflictology.server.botpool import BotPool
from conflictology.server.config import ServerConfig
from conflictology.server.durability import SnapshotWriter
from conflictology.server.messages import Left, Reaction, ServerMessage, encode
from conflictology.server.protocol import CreateRoom, RoomSettings
from conflictology.server.rooms import Room, RoomError, RoomStatus, new_code, seat_level
from conflictology.server.security import TokenBucket
from conflictology.server.store import Store

log = logging.getLogger("conflictology.server")

T = TypeVar("T")

_encoder = msgspec.json.Encoder()

# Messages refused for their rate within 10 s after which a socket is closed as flooding.
FLOOD_REFUSALS = 200

class Connection:
    """One WebSocket: a seat's (``seat_id``) or a spectator's (None). Outgoing messages go through a
    queue drained by one writer task, so replies on one connection keep their order."""

    def __init__(
        self, ws: Any, code: str, seat_id: str | None, config: ServerConfig, address: str = "?"
    ) -> None:
        self.ws = ws
        self.code = code
        self.seat_id = seat_id
        self.address = address  # the client address its limits count under (security.client_key)
        self.opened = time.monotonic()
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.closed = False
        self.max_queue = config.max_queue
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

    def send(self, message: ServerMessage | dict[str, Any]) -> None:
        """``message``: one of messages.py's structs (a dict: app.py's, until it uses them)."""
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
        self.backend.on_event(self._on_event)
        self.connections: dict[str, set[Connection]] = {}
        # Per room: named tasks ("timer", "bot:<seat>", "grace:<seat id>") and the seq a bot task answers.
        self.tasks: dict[str, dict[str, tuple[asyncio.Task[None], int]]] = {}
        self._sweeper: asyncio.Task[None] | None = None
        # Rooms whose seats are being given back to players connected here (see _reclaim).
        self._reclaiming: set[str] = set()
        self._side_tasks: set[asyncio.Task[None]] = set()
        # Snapshots and archives, written in batches: a change is shown once it is durable.
        self.durability = SnapshotWriter(config, store, self.broadcast)
        # The texts of the last broadcast, per room: (version, connected seats, {seat or None: text}).
        self._texts = master.Texts()
        # Bot delays and seeds (its own generator: the global one belongs to the host program).
        self._rng = random.Random()
        self._spectators: dict[str, int] = {}  # spectator sockets per client address
        self._watching: set[str] = set()  # rooms whose changes this process follows for its sockets
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
            self.durability.start()
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
            self._schedule(room)
        if restored:
            log.info("restored %d room(s)", restored)
        self._sweeper = asyncio.create_task(self._sweep_forever())
        self.durability.start()

    async def stop(self) -> None:
        if self._sweeper:
            self._sweeper.cancel()
        await self.durability.stop()
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

    def health(self) -> dict[str, str]:
        """What ``/healthz`` reports: whether the rooms' backend answers and the database takes the
        snapshots and archives."""
        return {
            "rooms": "ok" if self.backend.available() else "unavailable",
            "database": "failing" if self.durability.snapshot_failures else "ok",
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

    async def create_room(self, body: CreateRoom) -> tuple[Room, str]:
        settings = body.settings.apply_to(RoomSettings()) if body.settings else RoomSettings()
        self._refuse_while_unsaved()
        for _ in range(100):
            room, token = Room.create(new_code(), body.game, body.name, body.options, settings)
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
                self._schedule(room)
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
        info = room.info(connected)
        shared = master.table(room) if room.state is not None else None
        cache = self._texts.fresh(room, connected)
        for conn in list(conns):
            idx = None if conn.seat_id is None else room.seat_index(conn.seat_id)
            if conn.seat_id is not None and (idx is None or room.seats[idx].left):
                conn.send(Left())
                conn.close()
                continue
            conn.send_text(master.text_for(room, idx, connected, cache, info, shared))

    async def _schedule_latest(self, code: str) -> None:
        # Clocks and bots follow the room as it is now, not as it was last shown (an older seq would
        # cancel the bot turn of the current one).
        room = await self.backend.get(code)
        if room is not None:
            self._schedule(room)

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
        if idx is not None and room.seats[idx].afk:
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
        """The connection's message for the room as last shown; from the last broadcast's texts when
        nothing changed since (a ``sync`` costs a lookup, not a view)."""
        room = await self.room(conn.code)
        idx = None if conn.seat_id is None else room.seat_index(conn.seat_id)
        connected = self.connected_seats(room)
        cache = self._texts.current(room, connected)
        if cache is not None:
            conn.send_text(master.text_for(room, idx, connected, cache))
            return
        conn.send(master.message_for(room, idx, connected))

    # ---- scheduling ------------------------------------------------------------------------------

    def _start_task(self, code: str, key: str, work: Callable[[], Any], seq: int = 0) -> None:
        tasks = self.tasks.setdefault(code, {})
        old = tasks.get(key)
        if old is not None and old[0] is not asyncio.current_task():
            old[0].cancel()
        tasks[key] = (asyncio.create_task(self._until_done(work)), seq)

    @staticmethod
    async def _until_done(work: Callable[[], Any]) -> None:
        """Scheduled work (a clock, a bot turn, a grace period) runs again from the start while the
        rooms' store is unavailable: it re-checks the room's seq, so a late run does nothing wrong,
        and a room resumes within a second of the store coming back."""
        delay = 0.25
        while True:
            try:
                await work()
                return
            except BackendUnavailable:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)

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
                # Bound now: the room object may change before a retry.
                self._start_task(code, "timer", partial(self._timer, code, room.seq, room.deadline), room.seq)
        elif timer is not None:
            self._cancel(code, "timer")
        # The end of a player's hold (the host's pause has none: the host resumes it).
        hold = tasks.get("hold")
        until = room.pause["until"] if playing and room.pause is not None else None
        if until is not None:
            if hold is None or hold[1] != room.seq or hold[0].done():
                self._start_task(code, "hold", partial(self._hold_end, code, until), room.seq)
        elif hold is not None:
            self._cancel(code, "hold")
        # Bot turns: bots, players who left, and disconnected players past their grace period. While
        # the clocks are stopped bots wait too (an answer would close the window being talked over).
        bots_play = playing and room.state is not None and room.pause is None
        waiting = set(room.state.waiting_for()) if bots_play and room.state is not None else set()
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
                    self._start_task(code, key, partial(self._bot_turn, code, seat, room.seq), room.seq)
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
                # The deadline is fixed now: a run retried after an outage does not start it again.
                grace = room.settings.grace_seconds
                deadline = time.time() + (self.config.grace_seconds if grace is None else grace)
                self._start_task(code, f"grace:{seat_id}", partial(self._grace, code, seat_id, deadline))

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

    async def _hold_end(self, code: str, until: float) -> None:
        while (left := until - time.time()) > 0:
            await asyncio.sleep(left + 0.005)
        with contextlib.suppress(RoomError):
            await self.change(code, lambda r: r.resume(time.time(), hold_until=until))

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
        def bot_act(r: Room, chosen: Any) -> None:
            # The player may have taken the seat back (rejoin) while the bot thought.
            if not r.seats[seat].bot_controlled:
                raise RoomError(409, "no_change", "the seat's player is back")
            r.act(seat, chosen, seq, time.time(), by="bot")

        try:
            await self.change(code, lambda r: bot_act(r, action))
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
                    await self.change(code, lambda r: bot_act(r, fallback))

    async def _grace(self, code: str, seat_id: str, deadline: float) -> None:
        while (left := deadline - time.time()) > 0:
            await asyncio.sleep(left)

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
                for task, _ in self.tasks.pop(code, {}).values():
                    task.cancel()
                removed.append(code)
        return removed
