"""Rooms in Redis, shared by several server processes (``serve --redis URL``).

The same four steps as the in-memory backend — load → change → save with version → notify — made
safe across processes:

- **State.** One hash per room, ``<prefix>room:<code>`` = {``v``: version, ``data``: the room's
  snapshot JSON without its action log, ``initial``: the game's starting state}, and the action log
  as a list, ``<prefix>log:<code>`` (one JSON record per move): a save carries the new state and
  the moves it adds, not the whole game again.
  A change is applied to a copy of the room and saved by a Lua script only if the stored version is
  still the one the change started from (compare-and-set); otherwise the room is reloaded and the
  change retried. Two processes can therefore never both apply a move to the same state. Saves go
  over one connection of their own, one batch at a time: the saves that become ready while a batch
  is on its way are sent together as the next one, one pipelined round trip, each still its own
  script (group commit).
- **Announcements.** A process *follows* each room where it has sockets or which it owns, and only
  those (so with many processes each one hears about its own rooms, not about every change
  everywhere): it adds itself to ``<prefix>followers:<code>`` and subscribes to ``<prefix>ch:<code>``.
  The save script publishes the new version there when a process other than the writer follows the
  room; on an announcement a process re-reads the room and pushes fresh views. When a subscription
  is acknowledged the room is re-read once, so a change made while it was being set up is not
  missed.
- **Presence.** Which seats have a socket open, per process: ``<prefix>presence:<code>`` holds a
  field ``<process>|<seat id>`` per connected seat; ``p<process>`` is published when it changes.
- **Events.** A message for a room's sockets that changes nothing in the room (a reaction) is
  published as ``e<process>|<JSON>``; the other processes pass it to their sockets in that room.
- **Ownership (the lease).** ``<prefix>owner:<code>`` names the one process that runs the room's
  clocks, bot turns and grace periods. Each process keeps ``<prefix>alive:<process>`` (a key with
  a short expiry) refreshed; when an owner's key has expired, the first process to notice takes the
  room over by a compare-and-set on the owner key, and removes the dead process's presence. Scheduled
  work still quotes the room's ``seq`` and goes through the version check, so even during a
  take-over a clock or a bot turn is applied at most once. A process taken for dead too soon (its
  event loop stalled past the lease) finds at its next heartbeat that it was reaped, lists its
  follows and presence again and publishes ``r<process>``, so the others count its seats again.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import hiredis
import msgspec
import redis.asyncio as aioredis
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import BusyLoadingError, NoScriptError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from conflictology.server.backend import BackendUnavailable, RoomBackend, is_listed
from conflictology.server.rooms import Room, RoomError
from conflictology.server.security import Budget, wide_key

log = logging.getLogger("conflictology.server")

T = TypeVar("T")

# KEYS: room hash, room set, owner key, log. ARGV: code, snapshot, process, channel, initial state,
# then the log's records.
_INSERT = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('DEL', KEYS[4])
for i = 6, #ARGV, 1000 do redis.call('RPUSH', KEYS[4], unpack(ARGV, i, math.min(i + 999, #ARGV))) end
redis.call('HSET', KEYS[1], 'v', '1', 'data', ARGV[2], 'initial', ARGV[5])
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('SET', KEYS[3], ARGV[3])
redis.call('PUBLISH', ARGV[4], '1')
return 1
"""

# KEYS: room hash, the room's followers, log. ARGV: expected version, new version, snapshot, channel,
# process, '1' when a new log starts (a new game, or none) with this initial state, the initial
# state, then the records to append to the log (in chunks: Lua's unpack has a limit).
# Returns 0 when saved, -1 when the room is gone, else the version actually stored (a conflict).
# The change is announced only when some process other than the one that made it follows the room:
# the writer pushes its own change itself, and hearing it back would cost it a read per move.
_UPDATE = """
local v = redis.call('HGET', KEYS[1], 'v')
if not v then return -1 end
if tonumber(v) ~= tonumber(ARGV[1]) then return tonumber(v) end
if ARGV[6] == '1' then
  redis.call('DEL', KEYS[3])
  redis.call('HSET', KEYS[1], 'initial', ARGV[7])
end
for i = 8, #ARGV, 1000 do redis.call('RPUSH', KEYS[3], unpack(ARGV, i, math.min(i + 999, #ARGV))) end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'data', ARGV[3])
local n = redis.call('SCARD', KEYS[2])
if n > 1 or (n == 1 and redis.call('SISMEMBER', KEYS[2], ARGV[5]) == 0) then
  redis.call('PUBLISH', ARGV[4], ARGV[2])
end
return 0
"""

# KEYS: owner key, room hash. ARGV: this process, the owner it replaces ('' for none).
_CLAIM = """
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
local cur = redis.call('GET', KEYS[1])
if (not cur and ARGV[2] == '') or cur == ARGV[2] then
  redis.call('SET', KEYS[1], ARGV[1])
  return 1
end
return 0
"""

# A token bucket per client address (and per IPv6 /48), shared by every process. KEYS: the address's
# bucket, the wider one ('' for none). ARGV: rate per second, burst, the wider bucket's rate and
# burst, 1 to take or -1 to give one back. Returns {1, 0} when taken, {0, seconds until one is back}.
_BUDGET = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
local function level(key, rate, burst)
  local b = redis.call('HMGET', key, 'l', 's')
  local l = tonumber(b[1]) or burst
  local s = tonumber(b[2]) or now
  return math.min(burst, l + (now - s) * rate)
end
local function store(key, l, rate, burst)
  redis.call('HSET', key, 'l', tostring(l), 's', tostring(now))
  redis.call('PEXPIRE', key, math.ceil((burst - l) / rate * 1000) + 1000)
end
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local wrate, wburst = tonumber(ARGV[3]), tonumber(ARGV[4])
local a = level(KEYS[1], rate, burst)
local w = nil
if KEYS[2] ~= '' then w = level(KEYS[2], wrate, wburst) end
if ARGV[5] == '-1' then
  store(KEYS[1], math.min(burst, a + 1), rate, burst)
  if w then store(KEYS[2], math.min(wburst, w + 1), wrate, wburst) end
  return {1, 0}
end
if a < 1 or (w and w < 1) then
  local wait = 0
  if a < 1 then wait = (1 - a) / rate end
  if w and w < 1 then wait = math.max(wait, (1 - w) / wrate) end
  return {0, math.ceil(wait)}
end
store(KEYS[1], a - 1, rate, burst)
if w then store(KEYS[2], w - 1, wrate, wburst) end
return {1, 0}
"""

_encoder = msgspec.json.Encoder()

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

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


def answers_outage(method: F) -> F:
    """A public method: a Redis outage during it is a :class:`BackendUnavailable` (a 503 for HTTP, an
    error message on a socket), never an unexpected exception."""

    @functools.wraps(method)
    async def wrapper(self: RedisBackend, *args: Any, **kwargs: Any) -> Any:
        try:
            result = await method(self, *args, **kwargs)
        except Exception as exc:
            if is_pool_exhausted(exc):
                raise BackendUnavailable("the server is busy; try again in a moment") from None
            if not is_outage(exc):
                raise
            self._outage(exc)  # (what Redis said goes to the log, not to a stranger)
            raise BackendUnavailable() from None
        if self._down_since is not None:
            self._answers_again()
        return result

    return wrapper  # type: ignore[return-value]


def _without_log(room: Room) -> bytes:
    """The room's snapshot without what the log key and the ``initial`` field hold."""
    snapshot = room.snapshot()
    del snapshot["actions"], snapshot["initial"]
    return _encoder.encode(snapshot)


def _log_change(base: Room, work: Room) -> tuple[bool, list[bytes]]:
    """What a save does to the stored log: whether it starts a new one, and the records to append."""
    kept = len(base.actions)
    # Within one game the log only grows (and the copy shares the records it kept).
    same_game = (
        work.game_id == base.game_id
        and len(work.actions) >= kept
        and (kept == 0 or work.actions[kept - 1] is base.actions[kept - 1])
    )
    new = work.actions[kept:] if same_game else work.actions
    return not same_game, [_encoder.encode(record) for record in new]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class RedisBackend(RoomBackend):
    shared = True

    def __init__(
        self,
        url: str,
        prefix: str = "cfy:",
        heartbeat_seconds: float = 1.0,
        lease_seconds: float = 5.0,
    ) -> None:
        super().__init__()
        self.url = url
        self.prefix = prefix
        self.heartbeat_seconds = heartbeat_seconds
        self.lease_seconds = lease_seconds
        self.process = uuid.uuid4().hex[:12]
        # A bounded pool that makes a burst of changes wait for a free connection (the default
        # pool refuses with "Too many connections" once hundreds of rooms change at once).
        # Timeouts, so a Redis that stops answering (a network partition, a stopped process) is an
        # outage the server reports, not a request that waits for ever.
        pool = aioredis.BlockingConnectionPool.from_url(
            url, max_connections=64, timeout=5, socket_timeout=5, socket_connect_timeout=2
        )
        self.redis: aioredis.Redis = aioredis.Redis(connection_pool=pool)
        self._insert = self.redis.register_script(_INSERT)
        self._update = self.redis.register_script(_UPDATE)
        self._claim = self.redis.register_script(_CLAIM)
        self._cache: dict[str, Room] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._owned: set[str] = set()
        self._remote: dict[str, set[str]] = {}
        self._dead: set[str] = set()
        self._interested: Callable[[str], bool] = lambda code: False
        self._refreshing: dict[str, asyncio.Task[None]] = {}
        self._dirty: set[str] = set()
        # The last version pushed to this process's sockets, and the version a change of ours is
        # saving right now: its own announcement can arrive before Redis' reply to the save, and
        # must not be taken for another process's change (it would be read back and pushed twice).
        self._pushed: dict[str, int] = {}
        self._saving: dict[str, int] = {}
        self._presence_dirty: set[str] = set()
        self._pubsub: Any = None
        # Room channels this process is subscribed to (rooms with sockets here, or owned here).
        self._following: set[str] = set()
        # Following and unfollowing take turns: each waits on Redis, and a quick unfollow-then-follow
        # whose steps crossed would leave the process subscribed to nothing while it thinks it follows.
        self._membership = asyncio.Lock()
        self._inline_logs: set[str] = set()
        self._announced: dict[str, int] = {}  # the newest version announced, until it is read
        # Seats connected through this process, per room (presence to restore after a reaping).
        self._present: dict[str, set[str]] = {}
        self._registered = False
        self._tasks: list[asyncio.Task[None]] = []
        # The loops also check this flag: redis-py can swallow a cancellation that arrives while
        # it waits on a connection, so cancel() alone may not stop a loop.
        self._running = False
        self.conflicts = 0  # version-check failures retried (for tests and benchmarks)
        self.saves = 0
        self.save_round_trips = 0
        # Group commit: saves queue here while the batch before them is on its way, then go to Redis
        # together in one pipelined round trip (each still its own compare-and-set script), over a
        # connection kept for saves (the pool's bookkeeping cost as much as the round trip).
        self._batch: list[tuple[list[str], list[Any], asyncio.Future[Any]]] = []
        self._sender: asyncio.Task[None] | None = None
        self._saver: AbstractConnection | None = None
        # Since when Redis has not answered (None: it answers); while it does not, /healthz says so.
        # After an outage what this process could not write meanwhile is written back (_recovered).
        self._down_since: float | None = None
        self._resync_needed = False

    # ---- keys ------------------------------------------------------------------------------------

    def _k_room(self, code: str) -> str:
        return f"{self.prefix}room:{code}"

    def _k_owner(self, code: str) -> str:
        return f"{self.prefix}owner:{code}"

    def _k_presence(self, code: str) -> str:
        return f"{self.prefix}presence:{code}"

    def _k_alive(self, process: str) -> str:
        return f"{self.prefix}alive:{process}"

    def _k_procrooms(self, process: str) -> str:
        return f"{self.prefix}procrooms:{process}"

    def _k_log(self, code: str) -> str:
        return f"{self.prefix}log:{code}"

    def _k_followers(self, code: str) -> str:
        return f"{self.prefix}followers:{code}"

    def _k_follows(self, process: str) -> str:
        return f"{self.prefix}follows:{process}"

    def _k_listed(self) -> str:
        return f"{self.prefix}listed"

    def _k_games(self) -> str:
        return f"{self.prefix}games"

    def _channel(self, code: str) -> str:
        return f"{self.prefix}ch:{code}"

    @property
    def _control(self) -> str:
        # Always subscribed, so the subscription connection is set up (and acknowledged) at start
        # even before the first room.
        return f"{self.prefix}ctl"

    # ---- lifecycle -------------------------------------------------------------------------------

    async def start(self, interested: Callable[[str], bool]) -> None:
        self._interested = interested
        self._running = True
        await self.redis.ping()
        await self._heartbeat()
        self._pubsub = self.redis.pubsub()
        await self._pubsub.subscribe(self._control)
        # Serve nothing before the subscription is acknowledged (testing-recipes.md).
        deadline = time.monotonic() + 10
        while True:
            msg = await self._pubsub.get_message(timeout=1.0)
            if msg is not None and msg.get("type") == "subscribe":
                break
            if time.monotonic() > deadline:
                raise RuntimeError("Redis did not acknowledge the subscription")
        self._tasks = [
            asyncio.create_task(self._listen()),
            asyncio.create_task(self._housekeeping_forever()),
        ]

    async def stop(self) -> None:
        self._running = False
        if self._sender is not None:
            # Saves already on their way are let finish: their callers are told what happened.
            sender = self._sender
            await asyncio.wait([sender], timeout=5)
            if not sender.done():
                sender.cancel()
                await asyncio.wait([sender], timeout=1)
        for task in self._tasks + list(self._refreshing.values()):
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=5)
        self._tasks = []
        with contextlib.suppress(Exception):
            # A clean stop hands everything over at once instead of after the lease expires.
            await self._reap(self.process)
            await self.redis.delete(self._k_alive(self.process))
            async with self.redis.pipeline(transaction=False) as pipe:
                for code in self._owned:
                    pipe.delete(self._k_owner(code))
                await pipe.execute()
        self._owned.clear()
        self._following.clear()
        if self._saver is not None:
            saver, self._saver = self._saver, None
            with contextlib.suppress(Exception):
                await self.redis.connection_pool.release(saver)
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()
        with contextlib.suppress(Exception):
            await self.redis.aclose()
            await self.redis.connection_pool.disconnect()

    # ---- rooms -----------------------------------------------------------------------------------

    async def _load(self, code: str, announced: int | None = None) -> Room | None:
        """The room at its stored version (the cached object when that is still current).
        ``announced``: a version another process announced, so the cache is known to be behind."""
        # A change of this process may complete while we wait on Redis: the cache then holds a newer
        # room than the one read, and must keep it (a room read earlier would show players an older
        # state than one they have seen, and a change tried on it would be refused as stale).
        cached = self._cache.get(code)
        if cached is not None and (announced is None or announced <= cached.version):
            v = await self.redis.hget(self._k_room(code), "v")
            if v is not None and int(v) == cached.version:
                return self._newest(code, cached)
        # Within a game the log only grows: what the cache holds of it is not read again.
        kept = cached.actions if cached is not None and cached.game_id is not None else []
        v, data, initial, records = await self._read(code, len(kept))
        if v is None or data is None:
            self._cache.pop(code, None)
            return None
        snapshot = msgspec.json.decode(data)
        if kept and snapshot["game_id"] != cached.game_id:  # type: ignore[union-attr]
            # Another game since: its log is another list.
            kept = []
            v, data, initial, records = await self._read(code, 0)
            if v is None or data is None:
                self._cache.pop(code, None)
                return None
            snapshot = msgspec.json.decode(data)
        if "actions" in snapshot:
            # Saved by an earlier version, with the log inside the snapshot: the next save writes
            # the whole log to the list.
            self._inline_logs.add(code)
        else:
            snapshot["initial"] = _text(initial) if initial else None
            snapshot["actions"] = kept + [msgspec.json.decode(r) for r in records]
        room = Room.restore(snapshot)
        room.version = int(v)
        room = self._newest(code, room)
        self._cache[code] = room
        return room

    async def _read(self, code: str, start: int = 0) -> tuple[Any, Any, Any, list[bytes]]:
        """The stored version, snapshot, initial state and the log from ``start`` on, read together
        (one transaction, so all are of the same version)."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hmget(self._k_room(code), ["v", "data", "initial"])
            pipe.lrange(self._k_log(code), start, -1)
            (v, data, initial), records = await pipe.execute()
        return v, data, initial, records

    def _push(self, room: Room, local: bool) -> None:
        self._pushed[room.code] = max(room.version, self._pushed.get(room.code, 0))
        self._notify(room, local)

    def _newest(self, code: str, room: Room) -> Room:
        current = self._cache.get(code)
        return current if current is not None and current.version > room.version else room

    async def _current_version(self, code: str) -> int | None:
        v = await self.redis.hget(self._k_room(code), "v")
        return None if v is None else int(v)

    async def _save(self, keys: list[str], args: list[Any]) -> Any:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._batch.append((keys, args, future))
        if self._sender is None:
            # Starts after the current turn of the loop: the saves ready in it all join the batch.
            self._sender = asyncio.create_task(self._send_batches())
        return await future

    async def _send_batches(self) -> None:
        """Send the queued saves, one batch at a time, until none is left."""
        try:
            while self._batch:
                batch, self._batch = self._batch, []
                self.saves += len(batch)
                self.save_round_trips += 1
                try:
                    results = await self._send([(keys, args) for keys, args, _ in batch])
                except BaseException as exc:
                    # The batch may or may not have landed: each caller re-reads its room.
                    failure = exc if isinstance(exc, Exception) else RuntimeError("the save was interrupted")
                    for _, _, future in batch:
                        if not future.done():
                            future.set_exception(failure)
                    if not isinstance(exc, Exception):
                        raise
                    continue
                for (_, _, future), result in zip(batch, results, strict=True):
                    if future.done():  # its caller was cancelled
                        continue
                    if isinstance(result, Exception):
                        future.set_exception(result)
                    else:
                        future.set_result(result)
        finally:
            self._sender = None
            # Only when this task was stopped (cancelled) half-way: whoever waits must not wait forever.
            left, self._batch = self._batch, []
            for _, _, future in left:
                if not future.done():
                    future.set_exception(RuntimeError("the save was interrupted"))

    async def _send(self, batch: list[tuple[list[str], list[Any]]], load: bool = True) -> list[Any]:
        """One round trip: each save's script, pipelined on the save connection; returns each
        script's reply, or the error Redis answered it with."""
        conn = self._saver
        if conn is None:
            conn = self._saver = await self.redis.connection_pool.get_connection()  # type: ignore[no-untyped-call]
        sha = self._update.sha
        packed = b"".join(
            hiredis.pack_command(("EVALSHA", sha, len(keys), *keys, *args)) for keys, args in batch
        )
        results: list[Any] = []
        try:
            await conn.send_packed_command(packed, check_health=False)
            for _ in batch:
                try:
                    results.append(await conn.read_response())
                except ResponseError as exc:  # read in full: the replies after it are still in step
                    results.append(exc)
        except BaseException:
            # Lost or interrupted half-way: this connection's replies are out of step; start afresh.
            self._saver = None
            with contextlib.suppress(Exception):
                await conn.disconnect()
            with contextlib.suppress(Exception):
                await self.redis.connection_pool.release(conn)
            raise
        missing = [i for i, r in enumerate(results) if isinstance(r, NoScriptError)]
        if missing and load:
            # Redis restarted or its scripts were flushed: load the script and send those again.
            await self.redis.script_load(_UPDATE)
            again = await self._send([batch[i] for i in missing], load=False)
            for i, result in zip(missing, again, strict=True):
                results[i] = result
        return results

    @answers_outage
    async def get(self, code: str) -> Room | None:
        return await self._load(code)

    @answers_outage
    async def insert(self, room: Room) -> bool:
        room.version = 1
        room.updated = time.time()
        code = room.code
        keys = [self._k_room(code), f"{self.prefix}rooms", self._k_owner(code), self._k_log(code)]
        args: list[str | bytes] = [code, _without_log(room), self.process, self._channel(code)]
        args += [room.initial_json or "", *(_encoder.encode(record) for record in room.actions)]
        ok = await self._insert(keys=keys, args=args)
        if not ok:
            return False
        await self._reindex(None, room)
        self._owned.add(room.code)
        self._cache[room.code] = room
        self._push(room, local=True)
        await self._follow(room.code)
        return True

    @answers_outage
    async def update(self, code: str, change: Callable[[Room], T]) -> tuple[Room, T]:
        lock = self._locks.get(code)
        if lock is None:
            lock = self._locks[code] = asyncio.Lock()
        try:
            return await self._update_locked(code, change, lock)
        except RoomError as exc:
            if exc.code == "no_room" and code not in self._cache:
                self._locks.pop(code, None)  # (a guessed code must not leave a lock behind)
            raise

    async def _update_locked(
        self, code: str, change: Callable[[Room], T], lock: asyncio.Lock
    ) -> tuple[Room, T]:
        async with lock:
            for attempt in range(200):
                # First try on the cached room without asking Redis (the version check at the save
                # catches a stale cache); a refusal, though, is only trusted on a verified version.
                base = self._cache.get(code) if attempt == 0 else None
                verified = base is None
                if base is None:
                    base = await self._load(code)
                if base is None:
                    raise RoomError(404, "no_room", f"no room {code}")
                work = base.copy()
                try:
                    # A RoomError leaves nothing changed: the copy is dropped, nothing is saved.
                    result = change(work)
                except RoomError as exc:
                    # A move answering an older state than even this copy's is refused whatever
                    # newer version Redis holds (a room's seq only grows): no need to ask.
                    if verified or exc.code == "stale" or await self._current_version(code) == base.version:
                        raise
                    self._cache.pop(code, None)
                    continue
                work.version = base.version + 1
                work.updated = time.time()
                restart, records = _log_change(base, work)
                if code in self._inline_logs:
                    restart, records = True, [_encoder.encode(r) for r in work.actions]
                self._saving[code] = work.version
                try:
                    outcome = await self._save(
                        [self._k_room(code), self._k_followers(code), self._k_log(code)],
                        [
                            base.version,
                            work.version,
                            _without_log(work),
                            self._channel(code),
                            self.process,
                            "1" if restart else "0",
                            (work.initial_json or "") if restart else "",
                            *records,
                        ],
                    )
                except BaseException as exc:
                    # Cancelled or failed while the save was on its way: it may have landed, and its
                    # announcement (if any) been skipped as ours. Read the room again rather than guess.
                    self._saving.pop(code, None)
                    self._cache.pop(code, None)
                    if (
                        isinstance(exc, RedisConnectionError | RedisTimeoutError)
                        and await self._current_version(code) == base.version
                    ):
                        continue  # the connection dropped before the save landed: try it again
                    if code in self._following:
                        self._refresh(code, presence=False)
                    raise
                self._saving.pop(code, None)
                if outcome == 0:
                    self._inline_logs.discard(code)
                    await self._reindex(base, work)
                    self._cache[code] = work
                    self._push(work, local=True)
                    return work, result
                self._cache.pop(code, None)
                if code in self._following:
                    # Another process's change won: its announcement may have been skipped as ours.
                    self._refresh(code, presence=False)
                if outcome == -1:
                    raise RoomError(404, "no_room", f"no room {code}")
                # Another process changed the room first: start again from its version.
                self.conflicts += 1
            raise RoomError(503, "busy", f"room {code} is changing too fast; try again")

    @answers_outage
    async def delete(self, code: str) -> None:
        data = await self.redis.hget(self._k_room(code), "data")
        game_id = msgspec.json.decode(data).get("game_id") if data else None
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zrem(self._k_listed(), code)
            if game_id:
                pipe.hdel(self._k_games(), game_id)
            pipe.delete(
                self._k_room(code),
                self._k_owner(code),
                self._k_presence(code),
                self._k_followers(code),
                self._k_log(code),
            )
            pipe.srem(f"{self.prefix}rooms", code)
            await pipe.execute()
        self._cache.pop(code, None)
        self._locks.pop(code, None)
        self._owned.discard(code)
        self._remote.pop(code, None)
        self._pushed.pop(code, None)
        await self._unfollow(code)

    @answers_outage
    async def announce(self, code: str, message: dict[str, Any]) -> None:
        text = _encoder.encode(message).decode()
        await self.redis.publish(self._channel(code), f"e{self.process}|{text}")

    # ---- which rooms this process hears about ----------------------------------------------------

    @answers_outage
    async def watch(self, code: str) -> None:
        await self._follow(code)

    @answers_outage
    async def unwatch(self, code: str) -> None:
        await self._unfollow(code)

    async def _follow(self, code: str) -> None:
        if code in self._following or self._pubsub is None:
            return
        self._following.add(code)
        async with self._membership:
            if code not in self._following:
                return  # let go again meanwhile
            # Listed as a follower first, then subscribed: a change saved in between is announced
            # but may not be heard, and the re-read at the subscription's acknowledgement catches it.
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.sadd(self._k_followers(code), self.process)
                pipe.sadd(self._k_follows(self.process), code)
                await pipe.execute()
            await self._pubsub.subscribe(self._channel(code))

    async def _unfollow(self, code: str) -> None:
        if code not in self._following or code in self._owned or self._interested(code):
            return
        self._following.discard(code)
        # What we knew of the room goes stale from now on.
        self._cache.pop(code, None)
        self._remote.pop(code, None)
        self._pushed.pop(code, None)
        async with self._membership:
            if code in self._following:
                return  # followed again meanwhile
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.srem(self._k_followers(code), self.process)
                pipe.srem(self._k_follows(self.process), code)
                await pipe.execute()
            if self._pubsub is not None:
                await self._pubsub.unsubscribe(self._channel(code))

    @answers_outage
    async def codes(self) -> list[str]:
        return sorted(_text(c) for c in await self.redis.smembers(f"{self.prefix}rooms"))

    @answers_outage
    async def summaries(self) -> list[Room]:
        # One round trip for all the rooms (after the one for their codes), without their logs (a
        # listing does not show them), and not cached: a room not followed would go stale there.
        rooms = []
        for code, v, data in await self._versions_and_data(await self.codes()):
            if v is None or data is None:
                continue  # deleted meanwhile
            cached = self._cache.get(code)
            if cached is not None and cached.version >= int(v):
                rooms.append(cached)
                continue
            snapshot = msgspec.json.decode(data)
            snapshot.setdefault("actions", [])
            snapshot.setdefault("initial", None)
            room = Room.restore(snapshot)
            room.version = int(v)
            rooms.append(room)
        return rooms

    async def _versions_and_data(self, codes: list[str]) -> list[tuple[str, Any, Any]]:
        """Each room's stored version and snapshot (without its log), in one round trip."""
        if not codes:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for code in codes:
                pipe.hmget(self._k_room(code), ["v", "data"])
            stored = await pipe.execute()
        return [(code, v, data) for code, (v, data) in zip(codes, stored, strict=True)]

    async def _reindex(self, base: Room | None, work: Room) -> None:
        """Keep the listing's index (a sorted set by creation time) and the games' index (game id →
        room) in step with a saved change. Not in the save's script: they are hints that readers
        check against the room itself, and a change that does not touch them costs nothing."""
        listed = is_listed(work)
        was_listed = base is not None and is_listed(base)
        old_game = base.game_id if base is not None else None
        if listed == was_listed and old_game == work.game_id:
            return
        with contextlib.suppress(*OUTAGE, ResponseError):  # the change is saved: only the hint is late
            async with self.redis.pipeline(transaction=False) as pipe:
                if listed and not was_listed:
                    pipe.zadd(self._k_listed(), {work.code: work.created})
                elif was_listed and not listed:
                    pipe.zrem(self._k_listed(), work.code)
                if old_game != work.game_id:
                    if old_game:
                        pipe.hdel(self._k_games(), old_game)
                    if work.game_id:
                        pipe.hset(self._k_games(), work.game_id, work.code)
                await pipe.execute()

    @answers_outage
    async def listed(self, limit: int) -> list[Room]:
        # The newest listed codes, then their rooms in one round trip, without the game's state or
        # log (a listing shows neither): a cost bounded by ``limit``, however many rooms exist.
        newest: list[Any] = await self.redis.zrevrange(self._k_listed(), 0, max(limit, 1) - 1)
        rooms, gone = [], []
        for code, v, data in await self._versions_and_data([_text(c) for c in newest]):
            if v is None or data is None:
                gone.append(code)
                continue
            snapshot = msgspec.json.decode(data)
            snapshot.update(actions=[], initial=None, state=None)
            room = Room.restore(snapshot)
            room.version = int(v)
            if is_listed(room):
                rooms.append(room)
            else:
                gone.append(code)  # made private or finished by a process that died before unlisting it
        if gone:
            await self.redis.zrem(self._k_listed(), *gone)
        return rooms

    @answers_outage
    async def find_game(self, game_id: str) -> Room | None:
        code = await self.redis.hget(self._k_games(), game_id)
        if code is None:
            return None
        room = await self._load(_text(code))
        return room if room is not None and room.game_id == game_id else None

    # ---- outages ---------------------------------------------------------------------------------

    def available(self) -> bool:
        return self._down_since is None

    def count(self) -> int:
        return len(self._owned)

    def budget(self, name: str, rate: float, burst: float) -> Budget:
        return SharedBudget(self, name, rate, burst)

    def _outage(self, exc: BaseException) -> None:
        self._resync_needed = True
        if self._down_since is None:
            self._down_since = time.monotonic()
            log.warning("Redis does not answer (%s); requests are answered 503 until it does", exc)
            # The pool's idle connections are dead too: dropped now, so that once Redis is back
            # every request gets a fresh one instead of failing once on a stale one.
            task = asyncio.ensure_future(self.redis.connection_pool.disconnect(inuse_connections=False))
            task.add_done_callback(lambda t: t.cancelled() or t.exception())

    def _answers_again(self) -> None:
        down = time.monotonic() - (self._down_since or time.monotonic())
        self._down_since = None
        log.warning("Redis answers again (after %.1f s)", down)

    async def _recovered(self) -> None:
        """After an outage, put back what this process could not write meanwhile (its follows and
        its sockets' presence), and re-read the rooms it follows (announcements were lost)."""
        following = list(self._following)
        if following:
            # Follows made during the outage may not have reached Redis: list them again, and
            # subscribe again (each acknowledgement re-reads its room: what was missed is pushed).
            async with self.redis.pipeline(transaction=False) as pipe:
                for code in following:
                    pipe.sadd(self._k_followers(code), self.process)
                    pipe.sadd(self._k_follows(self.process), code)
                await pipe.execute()
            if self._pubsub is not None:
                await self._pubsub.subscribe(*(self._channel(c) for c in following))
        await self._resync_presence()

    async def _resync_presence(self) -> None:
        """This process's presence fields as they are now: sockets that closed during an outage left
        theirs behind (a seat counted connected for ever would never get its grace period)."""
        rooms = {_text(c) for c in await self.redis.smembers(self._k_procrooms(self.process))}
        rooms |= set(self._present)
        mine = self.process + "|"
        for code in rooms:
            fields = {_text(f) for f in await self.redis.hkeys(self._k_presence(code))}
            have = {f for f in fields if f.startswith(mine)}
            want = {mine + seat for seat in self._present.get(code, ())}
            if have == want:
                continue
            async with self.redis.pipeline(transaction=False) as pipe:
                if have - want:
                    pipe.hdel(self._k_presence(code), *(have - want))
                for field in want - have:
                    pipe.hset(self._k_presence(code), field, "1")
                if want:
                    pipe.sadd(self._k_procrooms(self.process), code)
                pipe.publish(self._channel(code), f"p{self.process}")
                await pipe.execute()

    # ---- presence and ownership ------------------------------------------------------------------

    def owns(self, code: str) -> bool:
        return code in self._owned

    def stats(self) -> dict[str, int]:
        return {
            "saves": self.saves,
            "save_round_trips": self.save_round_trips,
            "save_conflicts": self.conflicts,
        }

    def remote_seats(self, code: str) -> set[str]:
        return self._remote.get(code, set())

    @answers_outage
    async def presence(self, code: str, seat_id: str, online: bool) -> None:
        if online:
            self._present.setdefault(code, set()).add(seat_id)
        else:
            seats = self._present.get(code)
            if seats is not None:
                seats.discard(seat_id)
                if not seats:
                    del self._present[code]
        field = f"{self.process}|{seat_id}"
        async with self.redis.pipeline(transaction=False) as pipe:
            if online:
                pipe.hset(self._k_presence(code), field, "1")
                pipe.sadd(self._k_procrooms(self.process), code)
            else:
                pipe.hdel(self._k_presence(code), field)
            # "p<process>": who changed it, so that process skips its own announcement.
            pipe.publish(self._channel(code), f"p{self.process}")
            await pipe.execute()

    async def _read_presence(self, code: str) -> set[str]:
        fields = await self.redis.hkeys(self._k_presence(code))
        seats = set()
        for raw in fields:
            process, _, seat_id = _text(raw).partition("|")
            if process != self.process and process not in self._dead:
                seats.add(seat_id)
        return seats

    # ---- announcements from the other processes --------------------------------------------------

    async def _listen(self) -> None:
        start = len(self.prefix) + 3
        while self._running:
            try:
                msg = await self._pubsub.get_message(timeout=1.0)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if is_outage(exc):
                    self._outage(exc)  # one line per outage, not one per attempt
                else:
                    log.exception("Redis subscription failed; resubscribing")
                await asyncio.sleep(0.5)
                with contextlib.suppress(Exception):
                    # Each acknowledgement re-reads its room: changes missed meanwhile are pushed.
                    channels = [self._channel(c) for c in self._following]
                    await self._pubsub.subscribe(self._control, *channels)
                continue
            if msg is None:
                continue
            kind = msg.get("type")
            channel = _text(msg["channel"])
            if channel == self._control:
                continue
            code = channel[start:]
            if kind == "subscribe":
                # Anything announced before the subscription took effect was not heard: read now.
                if code in self._owned or self._interested(code):
                    self._refresh(code)
                continue
            if kind != "message":
                continue
            data = _text(msg["data"])
            if data.startswith("e"):
                # "e<process>|<message>": a message for the room's sockets that changes nothing in
                # the room (a reaction); its sender has already sent it to its own sockets.
                process, _, text = data[1:].partition("|")
                if process != self.process and self._interested(code):
                    with contextlib.suppress(msgspec.DecodeError):
                        self._notify_event(code, msgspec.json.decode(text))
                continue
            presence = data.startswith(("p", "r"))
            if presence and data[1:] == self.process:
                continue  # our own socket opened or closed: this process has already pushed it
            if data.startswith("r"):
                self._dead.discard(data[1:])
            if not presence:
                version = int(data)
                if version <= self._pushed.get(code, 0) or version == self._saving.get(code):
                    continue  # our own change (pushed, or being saved), or one already pushed
            if code in self._owned or self._interested(code):
                if not presence:
                    self._announced[code] = max(version, self._announced.get(code, 0))
                self._refresh(code, presence)
            else:  # a room we are leaving (its unsubscription is on its way)
                self._cache.pop(code, None)
                self._remote.pop(code, None)

    def _refresh(self, code: str, presence: bool = True) -> None:
        """Re-read a room (and, after a presence announcement, who is connected) and push it to
        this process's sockets; announcements that arrive meanwhile are folded into one more pass."""
        if presence or code not in self._remote:
            self._presence_dirty.add(code)
        if code in self._refreshing:
            self._dirty.add(code)
            return
        self._refreshing[code] = asyncio.create_task(self._refresh_loop(code))

    async def _refresh_loop(self, code: str) -> None:
        try:
            while True:
                self._dirty.discard(code)
                seats_changed = False
                try:
                    if code in self._presence_dirty:
                        self._presence_dirty.discard(code)
                        self._remote[code] = await self._read_presence(code)
                        seats_changed = True
                    room = await self._load(code, self._announced.pop(code, None))
                except Exception as exc:
                    if is_outage(exc):
                        self._outage(exc)  # re-read when Redis answers again (_recovered)
                    else:
                        log.exception("could not refresh room %s", code)
                    room = None
                # Push only what the sockets have not had: a newer version, or who is connected.
                if room is not None and (seats_changed or room.version > self._pushed.get(code, 0)):
                    self._push(room, local=False)
                if code not in self._dirty:
                    return
        finally:
            self._refreshing.pop(code, None)

    # ---- heartbeat, dead processes, taking rooms over --------------------------------------------

    async def _heartbeat(self) -> None:
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(self._k_alive(self.process), "1", px=int(self.lease_seconds * 1000))
            pipe.sadd(f"{self.prefix}procs", self.process)
            _, added = await pipe.execute()
        if added and self._registered:
            await self._register_again()
        self._registered = True

    async def _register_again(self) -> None:
        """This process was taken for dead (its event loop stalled past the lease) and reaped: its
        follows and its sockets' presence were removed. Put them back; the rooms it owned have been
        taken over, and the next housekeeping pass drops them from ``_owned``."""
        log.warning("process %s was taken for dead (its lease expired); registering again", self.process)
        async with self.redis.pipeline(transaction=False) as pipe:
            for code in self._following:
                pipe.sadd(self._k_followers(code), self.process)
                pipe.sadd(self._k_follows(self.process), code)
            for code, seats in self._present.items():
                for seat_id in seats:
                    pipe.hset(self._k_presence(code), f"{self.process}|{seat_id}", "1")
                pipe.sadd(self._k_procrooms(self.process), code)
            for code in self._following:
                # "r": back from the dead — the others stop ignoring its presence and read it again.
                pipe.publish(self._channel(code), f"r{self.process}")
            await pipe.execute()

    async def _housekeeping_forever(self) -> None:
        while self._running:
            try:
                await self._heartbeat()
                if self._down_since is not None:
                    self._answers_again()
                if self._resync_needed:
                    self._resync_needed = False
                    await self._recovered()
                await self.housekeeping()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if is_outage(exc):
                    self._outage(exc)
                else:
                    log.exception("Redis housekeeping failed")
            await asyncio.sleep(self.heartbeat_seconds)

    async def housekeeping(self) -> list[str]:
        """Reap processes whose lease expired and take over rooms without a live owner; returns
        the codes taken over."""
        procs = [_text(p) for p in await self.redis.smembers(f"{self.prefix}procs")]
        alive_flags = await self.redis.mget([self._k_alive(p) for p in procs]) if procs else []
        alive = {p for p, flag in zip(procs, alive_flags, strict=True) if flag is not None}
        alive.add(self.process)
        self._dead -= alive  # one taken for dead too soon, now heartbeating again
        for process in procs:
            if process not in alive:
                self._dead.add(process)
                if await self.redis.set(f"{self.prefix}reap:{process}", self.process, nx=True, px=30_000):
                    await self._reap(process)
        # Rooms read over HTTP but not followed would go stale in the cache (another process may
        # change or delete them): forgotten here, read again when asked.
        for code in [c for c in self._cache if c not in self._following and c not in self._owned]:
            del self._cache[code]
        codes = [_text(c) for c in await self.redis.smembers(f"{self.prefix}rooms")]
        if not codes:
            return []
        owners = await self.redis.mget([self._k_owner(c) for c in codes])
        taken = []
        for code, raw in zip(codes, owners, strict=True):
            owner = _text(raw) if raw is not None else ""
            if owner == self.process:
                self._owned.add(code)
                await self._follow(code)
                continue
            if code in self._owned:
                self._owned.discard(code)
                await self._unfollow(code)
            if owner in alive:
                continue
            if await self._claim(keys=[self._k_owner(code), self._k_room(code)], args=[self.process, owner]):
                log.info("took over room %s from %s", code, owner or "nobody")
                self._owned.add(code)
                taken.append(code)
                if code in self._following:
                    self._refresh(code)
                else:
                    await self._follow(code)  # its acknowledgement re-reads the room
        return taken

    async def _reap(self, process: str) -> None:
        """Remove a gone process's presence (and tell each of its rooms) and its follows."""
        rooms = [_text(c) for c in await self.redis.smembers(self._k_procrooms(process))]
        for code in rooms:
            keys = await self.redis.hkeys(self._k_presence(code))
            fields = [f for f in keys if _text(f).startswith(process + "|")]
            async with self.redis.pipeline(transaction=False) as pipe:
                if fields:
                    pipe.hdel(self._k_presence(code), *fields)
                pipe.publish(self._channel(code), f"p{process}")
                await pipe.execute()
        followed = [_text(c) for c in await self.redis.smembers(self._k_follows(process))]
        async with self.redis.pipeline(transaction=False) as pipe:
            for code in followed:
                pipe.srem(self._k_followers(code), process)
            pipe.delete(self._k_procrooms(process), self._k_follows(process))
            pipe.srem(f"{self.prefix}procs", process)
            await pipe.execute()


class SharedBudget(Budget):
    """A per-address budget every process shares (in Redis): behind a balancer that spreads a
    client's requests over N processes, the client still has one budget, not N. While Redis does
    not answer, each process counts on its own."""

    def __init__(
        self, backend: RedisBackend, name: str, rate: float, burst: float, wide: float = 16.0
    ) -> None:
        super().__init__(rate, burst, wide)
        self.backend = backend
        self.name = name
        self.args = [rate, burst, rate * wide, burst * wide]
        self.script = backend.redis.register_script(_BUDGET)

    def _keys(self, key: str) -> list[str]:
        wider = wide_key(key)
        prefix = f"{self.backend.prefix}budget:{self.name}:"
        return [prefix + key, prefix + wider if wider else ""]

    async def take(self, key: str) -> int | None:
        if self.args[0] <= 0:
            return None
        try:
            ok, wait = await self.script(keys=self._keys(key), args=[*self.args, 1])
        except Exception as exc:
            if not is_outage(exc) and not is_pool_exhausted(exc):
                raise
            return await super().take(key)
        return None if int(ok) else max(1, int(wait))

    async def refund(self, key: str) -> None:
        if self.args[0] <= 0:
            return
        try:
            await self.script(keys=self._keys(key), args=[*self.args, -1])
        except Exception as exc:
            if not is_outage(exc) and not is_pool_exhausted(exc):
                raise
            await super().refund(key)

