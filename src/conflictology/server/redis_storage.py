"""Rooms stored in Redis: load, compare-and-set save, and the indexes a listing and a game's id
are read through.

One hash per room, ``<prefix>room:<code>`` = {``v``: version, ``data``: the room's snapshot JSON
without its action log, ``initial``: the game's starting state}, and the action log as a list,
``<prefix>log:<code>`` (one JSON record per move): a save carries the new state and the moves it
adds, not the whole game again. A change is applied to a copy of the room and saved only if the
stored version is still the one the change started from; otherwise the room is reloaded and the
change retried, so two processes can never both apply a move to the same state. The saves go to
Redis in batches (``redis_saves``).

What other processes hear of a save, and who pushes it to the sockets, is not this module's: it
calls ``on_saved(room)`` after each of its own saves, and ``on_unsure(code)`` when a save may have
landed without this process knowing its outcome (the room must then be read again).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any, TypeVar

import msgspec
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from conflictology.server import redis_scripts
from conflictology.server.backend import is_listed
from conflictology.server.redis_keys import RedisKeys
from conflictology.server.redis_outage import OUTAGE
from conflictology.server.redis_saves import SaveBatches
from conflictology.server.rooms import Room, RoomError

T = TypeVar("T")

_encoder = msgspec.json.Encoder()


def _without_log(room: Room) -> bytes:
    """The room's snapshot without what the log key and the ``initial`` field hold. Its game state is
    the state now: every process reads a shared room again at each change of it, and would apply
    the actions after an older state each time."""
    snapshot = room.snapshot(state_every=1)
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


def text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class RedisRooms:
    def __init__(
        self,
        redis: aioredis.Redis,
        keys: RedisKeys,
        process: str,
        on_saved: Callable[[Room], None],
        on_unsure: Callable[[str], None],
    ) -> None:
        self.redis = redis
        self.keys = keys
        self.process = process
        self.on_saved = on_saved
        self.on_unsure = on_unsure
        self._insert = redis.register_script(redis_scripts.INSERT)
        self.batches = SaveBatches(redis)
        # The newest room read or saved, per code (checked against the stored version before use).
        self.cache: dict[str, Room] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        # Rooms saved by an earlier version, with the log inside the snapshot.
        self._inline_logs: set[str] = set()
        # The version a change of ours is saving right now: its own announcement can arrive before
        # Redis' reply to the save, and must not be taken for another process's change.
        self.saving: dict[str, int] = {}
        self.conflicts = 0  # version-check failures retried (for tests and benchmarks)

    # ---- reading -------------------------------------------------------------------------------

    async def load(self, code: str, announced: int | None = None) -> Room | None:
        """The room at its stored version (the cached object when that is still current).
        ``announced``: a version another process announced, so the cache is known to be behind."""
        # A change of this process may complete while we wait on Redis: the cache then holds a newer
        # room than the one read, and must keep it (a room read earlier would show players an older
        # state than one they have seen, and a change tried on it would be refused as stale).
        cached = self.cache.get(code)
        if cached is not None and (announced is None or announced <= cached.version):
            v = await self.redis.hget(self.keys.room(code), "v")
            if v is not None and int(v) == cached.version:
                return self._newest(code, cached)
        # Within a game the log only grows: what the cache holds of it is not read again.
        kept = cached.actions if cached is not None and cached.game_id is not None else []
        v, data, initial, records = await self.read(code, len(kept))
        if v is None or data is None:
            self.cache.pop(code, None)
            return None
        snapshot = msgspec.json.decode(data)
        if kept and snapshot["game_id"] != cached.game_id:  # type: ignore[union-attr]
            # Another game since: its log is another list.
            kept = []
            v, data, initial, records = await self.read(code, 0)
            if v is None or data is None:
                self.cache.pop(code, None)
                return None
            snapshot = msgspec.json.decode(data)
        if "actions" in snapshot:
            # Saved by an earlier version, with the log inside the snapshot: the next save writes
            # the whole log to the list.
            self._inline_logs.add(code)
        else:
            snapshot["initial"] = text(initial) if initial else None
            snapshot["actions"] = kept + [msgspec.json.decode(r) for r in records]
        room = Room.restore(snapshot)
        room.version = int(v)
        room = self._newest(code, room)
        self.cache[code] = room
        return room

    async def read(self, code: str, start: int = 0) -> tuple[Any, Any, Any, list[bytes]]:
        """The stored version, snapshot, initial state and the log from ``start`` on, read together
        (one transaction, so all are of the same version)."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hmget(self.keys.room(code), ["v", "data", "initial"])
            pipe.lrange(self.keys.log(code), start, -1)
            (v, data, initial), records = await pipe.execute()
        return v, data, initial, records

    def _newest(self, code: str, room: Room) -> Room:
        current = self.cache.get(code)
        return current if current is not None and current.version > room.version else room

    async def current_version(self, code: str) -> int | None:
        v = await self.redis.hget(self.keys.room(code), "v")
        return None if v is None else int(v)

    def drop_cached(self, keep: Callable[[str], bool]) -> None:
        """Forget the cached rooms not kept up to date (another process may change or delete them):
        read again when asked."""
        for code in [c for c in self.cache if not keep(c)]:
            del self.cache[code]

    # ---- writing -------------------------------------------------------------------------------

    async def insert(self, room: Room, channel: str) -> bool:
        """Store a new room (this process its owner); False when its code is taken."""
        room.version = 1
        room.updated = time.time()
        code = room.code
        keys = [self.keys.room(code), self.keys.rooms, self.keys.owner(code), self.keys.log(code)]
        args: list[str | bytes] = [code, _without_log(room), self.process, channel]
        args += [room.initial_json or "", *(_encoder.encode(record) for record in room.actions)]
        ok = await self._insert(keys=keys, args=args)
        if not ok:
            return False
        await self._reindex(None, room)
        self.cache[room.code] = room
        return True

    async def update(self, code: str, change: Callable[[Room], T]) -> tuple[Room, T]:
        lock = self._locks.get(code)
        if lock is None:
            lock = self._locks[code] = asyncio.Lock()
        try:
            return await self._update_locked(code, change, lock)
        except RoomError as exc:
            if exc.code == "no_room" and code not in self.cache:
                self._locks.pop(code, None)  # (a guessed code must not leave a lock behind)
            raise

    async def _update_locked(
        self, code: str, change: Callable[[Room], T], lock: asyncio.Lock
    ) -> tuple[Room, T]:
        async with lock:
            for attempt in range(200):
                # First try on the cached room without asking Redis (the version check at the save
                # catches a stale cache); a refusal, though, is only trusted on a verified version.
                base = self.cache.get(code) if attempt == 0 else None
                verified = base is None
                if base is None:
                    base = await self.load(code)
                if base is None:
                    raise RoomError(404, "no_room", f"no room {code}")
                work = base.copy()
                try:
                    # A RoomError leaves nothing changed: the copy is dropped, nothing is saved.
                    result = change(work)
                except RoomError as exc:
                    # A move answering an older state than even this copy's is refused whatever
                    # newer version Redis holds (a room's seq only grows): no need to ask.
                    if verified or exc.code == "stale" or await self.current_version(code) == base.version:
                        raise
                    self.cache.pop(code, None)
                    continue
                work.version = base.version + 1
                work.updated = time.time()
                restart, records = _log_change(base, work)
                if code in self._inline_logs:
                    restart, records = True, [_encoder.encode(r) for r in work.actions]
                self.saving[code] = work.version
                try:
                    outcome = await self.batches.save(
                        [self.keys.room(code), self.keys.followers(code), self.keys.log(code)],
                        [
                            base.version,
                            work.version,
                            _without_log(work),
                            self.keys.channel(code),
                            self.process,
                            "1" if restart else "0",
                            (work.initial_json or "") if restart else "",
                            *records,
                        ],
                    )
                except BaseException as exc:
                    # Cancelled or failed while the save was on its way: it may have landed, and its
                    # announcement (if any) been skipped as ours. Read the room again rather than guess.
                    self.saving.pop(code, None)
                    self.cache.pop(code, None)
                    if (
                        isinstance(exc, RedisConnectionError | RedisTimeoutError)
                        and await self.current_version(code) == base.version
                    ):
                        continue  # the connection dropped before the save landed: try it again
                    self.on_unsure(code)
                    raise
                self.saving.pop(code, None)
                if outcome == 0:
                    self._inline_logs.discard(code)
                    await self._reindex(base, work)
                    self.cache[code] = work
                    self.on_saved(work)
                    return work, result
                self.cache.pop(code, None)
                # Another process's change won: its announcement may have been skipped as ours.
                self.on_unsure(code)
                if outcome == -1:
                    raise RoomError(404, "no_room", f"no room {code}")
                # Another process changed the room first: start again from its version.
                self.conflicts += 1
            raise RoomError(503, "busy", f"room {code} is changing too fast; try again")

    async def delete(self, code: str) -> None:
        """Every key of the room (its presence, owner and followers too), and its indexes."""
        data = await self.redis.hget(self.keys.room(code), "data")
        game_id = msgspec.json.decode(data).get("game_id") if data else None
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zrem(self.keys.listed, code)
            if game_id:
                pipe.hdel(self.keys.games, game_id)
            pipe.delete(
                self.keys.room(code),
                self.keys.owner(code),
                self.keys.presence(code),
                self.keys.followers(code),
                self.keys.log(code),
            )
            pipe.srem(self.keys.rooms, code)
            await pipe.execute()
        self.cache.pop(code, None)
        self._locks.pop(code, None)

    # ---- listings and indexes ------------------------------------------------------------------

    async def codes(self) -> list[str]:
        return sorted(text(c) for c in await self.redis.smembers(self.keys.rooms))

    async def summaries(self) -> list[Room]:
        # One round trip for all the rooms (after the one for their codes), without their logs (a
        # listing does not show them), and not cached: a room not followed would go stale there.
        rooms = []
        for code, v, data in await self._versions_and_data(await self.codes()):
            if v is None or data is None:
                continue  # deleted meanwhile
            cached = self.cache.get(code)
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
                pipe.hmget(self.keys.room(code), ["v", "data"])
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
                    pipe.zadd(self.keys.listed, {work.code: work.created})
                elif was_listed and not listed:
                    pipe.zrem(self.keys.listed, work.code)
                if old_game != work.game_id:
                    if old_game:
                        pipe.hdel(self.keys.games, old_game)
                    if work.game_id:
                        pipe.hset(self.keys.games, work.game_id, work.code)
                await pipe.execute()

    async def listed(self, limit: int) -> list[Room]:
        # The newest listed codes, then their rooms in one round trip, without the game's state or
        # log (a listing shows neither): a cost bounded by ``limit``, however many rooms exist.
        newest: list[Any] = await self.redis.zrevrange(self.keys.listed, 0, max(limit, 1) - 1)
        rooms, gone = [], []
        for code, v, data in await self._versions_and_data([text(c) for c in newest]):
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
            await self.redis.zrem(self.keys.listed, *gone)
        return rooms

    async def find_game(self, game_id: str) -> Room | None:
        code = await self.redis.hget(self.keys.games, game_id)
        if code is None:
            return None
        room = await self.load(text(code))
        return room if room is not None and room.game_id == game_id else None
