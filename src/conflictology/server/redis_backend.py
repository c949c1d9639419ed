"""Rooms in Redis, shared by several server processes (``serve --redis URL``).

The same four steps as the in-memory backend — load → change → save with version → notify — made
safe across processes, by pieces this class composes:

- **State** (``redis_storage``, its saves batched by ``redis_saves``): one hash and one log list per
  room, a change saved by a compare-and-set script only if the stored version is still the one it
  started from (otherwise reloaded and retried); the saves ready together go to Redis in one
  pipelined round trip (group commit).
- **Announcements** (``redis_pubsub``): a process follows the rooms where it has sockets or which it
  owns, hears their changes on one channel per room and pushes fresh views; messages that change
  nothing in a room (a reaction) go the same way.
- **Presence** (``redis_presence``): which seats have a socket open, per process.
- **Ownership** (``redis_leases``): the one process that runs a room's clocks, bot turns and grace
  periods, a lease per process, and the housekeeping that reaps dead processes and takes their rooms
  over.
- **Outages** (``redis_outage``): a Redis that does not answer is a 503 for the asker, ``/healthz``
  degraded, and what could not be written is written back once it answers.

Every key and channel name is in ``redis_keys``, every script in ``redis_scripts``: a running
deployment's processes share them, so they are kept byte for byte across upgrades.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

import redis.asyncio as aioredis

from conflictology.server.archive import SharedQueue
from conflictology.server.backend import RoomBackend
from conflictology.server.redis_archive import RedisArchiveQueue
from conflictology.server.redis_budget import SharedBudget
from conflictology.server.redis_keys import RedisKeys
from conflictology.server.redis_leases import Leases
from conflictology.server.redis_outage import OUTAGE, REFUSING, Outages, answers_outage, is_outage
from conflictology.server.redis_presence import RedisPresence
from conflictology.server.redis_pubsub import RoomChannels
from conflictology.server.redis_storage import RedisRooms
from conflictology.server.rooms import Room
from conflictology.server.security import Budget

__all__ = ["OUTAGE", "REFUSING", "RedisBackend", "SharedBudget", "is_outage"]

T = TypeVar("T")


class RedisBackend(RoomBackend):
    shared = True

    def __init__(
        self,
        url: str,
        prefix: str = "cfy:",
        heartbeat_seconds: float = 1.0,
        lease_seconds: float = 5.0,
        timeout_seconds: float = 5.0,
    ) -> None:
        super().__init__()
        self.url = url
        self.prefix = prefix
        self.keys = RedisKeys(prefix)
        self.process = uuid.uuid4().hex[:12]
        # A bounded pool that makes a burst of changes wait for a free connection (the default
        # pool refuses with "Too many connections" once hundreds of rooms change at once).
        # Timeouts, so a Redis that stops answering (a network partition, a stopped process) is an
        # outage the server reports, not a request that waits for ever. Connecting gets as long as
        # a command: on a host at load 20 a connect to a healthy local Redis took over 2 s, and one
        # slow connect is not an outage.
        pool = aioredis.BlockingConnectionPool.from_url(
            url,
            max_connections=64,
            timeout=timeout_seconds,
            socket_timeout=timeout_seconds,
            socket_connect_timeout=timeout_seconds,
        )
        self.redis: aioredis.Redis = aioredis.Redis(connection_pool=pool)
        self.outages = Outages(self.redis)
        # The loops also check this flag: redis-py can swallow a cancellation that arrives while
        # it waits on a connection, so cancel() alone may not stop a loop.
        self._running = False
        self._tasks: list[asyncio.Task[None]] = []
        owned: set[str] = set()
        self.storage = RedisRooms(
            self.redis,
            self.keys,
            self.process,
            on_saved=lambda room: self.channels.push(room, local=True),
            on_unsure=lambda code: self.channels.reread_if_followed(code),
        )
        self.presence_of = RedisPresence(self.redis, self.keys, self.process)
        self.channels = RoomChannels(
            self.redis,
            self.keys,
            self.process,
            self.storage,
            self.presence_of,
            owned,
            self.outages,
            notify=self._notify,
            notify_event=self._notify_event,
            running=lambda: self._running,
        )
        self.leases = Leases(
            self.redis,
            self.keys,
            self.process,
            lease_seconds,
            heartbeat_seconds,
            owned,
            self.storage,
            self.channels,
            self.presence_of,
            self.outages,
            recovered=self._recovered,
            running=lambda: self._running,
        )

    # ---- lifecycle -------------------------------------------------------------------------------

    async def start(self, interested: Callable[[str], bool]) -> None:
        self.channels.interested = interested
        self._running = True
        await self.redis.ping()
        await self.leases.heartbeat()
        await self.channels.start(interested)
        self._tasks = [
            asyncio.create_task(self.channels.listen()),
            asyncio.create_task(self.leases.forever()),
        ]

    async def stop(self) -> None:
        self._running = False
        await self.storage.batches.stop()
        for task in self._tasks:
            task.cancel()
        self.channels.cancel_refreshes()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=5)
        self._tasks = []
        with contextlib.suppress(Exception):
            await self.leases.release()
        self.leases.owned.clear()
        await self.storage.batches.release()
        await self.channels.close()
        with contextlib.suppress(Exception):
            await self.redis.aclose()
            await self.redis.connection_pool.disconnect()

    async def _recovered(self) -> None:
        """After an outage, put back what this process could not write meanwhile (its follows and
        its sockets' presence), and re-read the rooms it follows (announcements were lost)."""
        await self.channels.recover()
        await self.presence_of.resync()

    async def housekeeping(self) -> list[str]:
        """One pass of the leases' housekeeping (reap, take over); the codes taken over."""
        return await self.leases.housekeeping()

    # ---- rooms -----------------------------------------------------------------------------------

    @answers_outage
    async def get(self, code: str) -> Room | None:
        return await self.storage.load(code)

    @answers_outage
    async def insert(self, room: Room) -> bool:
        if not await self.storage.insert(room, self.keys.channel(room.code)):
            return False
        self.leases.owned.add(room.code)
        self.channels.push(room, local=True)
        await self.channels.follow(room.code)
        return True

    @answers_outage
    async def update(self, code: str, change: Callable[[Room], T]) -> tuple[Room, T]:
        return await self.storage.update(code, change)

    @answers_outage
    async def delete(self, code: str) -> None:
        await self.storage.delete(code)
        self.leases.owned.discard(code)
        self.presence_of.remote.pop(code, None)
        self.channels.pushed.pop(code, None)
        await self.channels.unfollow(code)

    @answers_outage
    async def codes(self) -> list[str]:
        return await self.storage.codes()

    @answers_outage
    async def summaries(self) -> list[Room]:
        return await self.storage.summaries()

    @answers_outage
    async def listed(self, limit: int) -> list[Room]:
        return await self.storage.listed(limit)

    @answers_outage
    async def find_game(self, game_id: str) -> Room | None:
        return await self.storage.find_game(game_id)

    @answers_outage
    async def announce(self, code: str, message: dict[str, Any]) -> None:
        await self.channels.announce(code, message)

    # ---- which rooms this process hears about ----------------------------------------------------

    @answers_outage
    async def watch(self, code: str) -> None:
        await self.channels.follow(code)

    @answers_outage
    async def unwatch(self, code: str) -> None:
        await self.channels.unfollow(code)

    # ---- presence, ownership, health -------------------------------------------------------------

    @answers_outage
    async def presence(self, code: str, seat_id: str, online: bool) -> None:
        await self.presence_of.mark(code, seat_id, online)

    def remote_seats(self, code: str) -> set[str]:
        return self.presence_of.remote.get(code, set())

    def owns(self, code: str) -> bool:
        return code in self.leases.owned

    def count(self) -> int:
        return len(self.leases.owned)

    def available(self) -> bool:
        return self.outages.available()

    def archive_queue(self) -> SharedQueue:
        return RedisArchiveQueue(self.redis, self.keys)

    def budget(self, name: str, rate: float, burst: float) -> Budget:
        return SharedBudget(self.redis, self.keys.budget(name), rate, burst)

    @property
    def conflicts(self) -> int:
        """Version-check failures retried (for tests and benchmarks)."""
        return self.storage.conflicts

    def stats(self) -> dict[str, int]:
        return {
            "saves": self.storage.batches.saves,
            "save_round_trips": self.storage.batches.round_trips,
            "save_conflicts": self.storage.conflicts,
        }
