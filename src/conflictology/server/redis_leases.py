"""Who runs each room's clocks, bot turns and grace periods (its owner), and the housekeeping that
keeps that true when processes die.

``<prefix>owner:<code>`` names the one process that owns the room. Each process keeps
``<prefix>alive:<process>`` (a key with a short expiry) refreshed; when an owner's key has expired,
the first process to notice takes the room over by a compare-and-set on the owner key, and removes
the dead process's presence. Scheduled work still quotes the room's ``seq`` and goes through the
version check, so even during a take-over a clock or a bot turn is applied at most once. A process
taken for dead too soon (its event loop stalled past the lease) finds at its next heartbeat that it
was reaped, lists its follows and presence again and publishes ``r<process>``, so the others count
its seats again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import redis.asyncio as aioredis

from conflictology.server import redis_scripts
from conflictology.server.redis_keys import RedisKeys
from conflictology.server.redis_outage import Outages, is_outage
from conflictology.server.redis_presence import RedisPresence
from conflictology.server.redis_pubsub import RoomChannels
from conflictology.server.redis_storage import RedisRooms, text

log = logging.getLogger("conflictology.server")


class Leases:
    def __init__(
        self,
        redis: aioredis.Redis,
        keys: RedisKeys,
        process: str,
        lease_seconds: float,
        heartbeat_seconds: float,
        owned: set[str],
        rooms: RedisRooms,
        channels: RoomChannels,
        presence: RedisPresence,
        outages: Outages,
        recovered: Callable[[], Awaitable[None]],
        running: Callable[[], bool],
    ) -> None:
        self.redis = redis
        self.keys = keys
        self.process = process
        self.lease_seconds = lease_seconds
        self.heartbeat_seconds = heartbeat_seconds
        self.owned = owned
        self.rooms = rooms
        self.channels = channels
        self.presence = presence
        self.outages = outages
        self.recovered = recovered
        self.running = running
        self._claim = redis.register_script(redis_scripts.CLAIM)
        self._registered = False

    async def heartbeat(self) -> None:
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(self.keys.alive(self.process), "1", px=int(self.lease_seconds * 1000))
            pipe.sadd(self.keys.procs, self.process)
            _, added = await pipe.execute()
        if added and self._registered:
            await self._register_again()
        self._registered = True

    async def _register_again(self) -> None:
        """This process was taken for dead (its event loop stalled past the lease) and reaped: its
        follows and its sockets' presence were removed. Put them back; the rooms it owned have been
        taken over, and the next housekeeping pass drops them from ``owned``."""
        log.warning("process %s was taken for dead (its lease expired); registering again", self.process)
        async with self.redis.pipeline(transaction=False) as pipe:
            self.channels.restore(pipe)
            self.presence.restore(pipe)
            self.channels.announce_return(pipe)
            await pipe.execute()

    async def forever(self) -> None:
        while self.running():
            try:
                await self.heartbeat()
                self.outages.answered()
                if self.outages.resync_needed:
                    self.outages.resync_needed = False
                    await self.recovered()
                await self.housekeeping()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if is_outage(exc):
                    self.outages.record(exc)
                else:
                    log.exception("Redis housekeeping failed")
            await asyncio.sleep(self.heartbeat_seconds)

    async def housekeeping(self) -> list[str]:
        """Reap processes whose lease expired and take over rooms without a live owner; returns
        the codes taken over."""
        procs = [text(p) for p in await self.redis.smembers(self.keys.procs)]
        alive_flags = await self.redis.mget([self.keys.alive(p) for p in procs]) if procs else []
        alive = {p for p, flag in zip(procs, alive_flags, strict=True) if flag is not None}
        alive.add(self.process)
        self.presence.dead -= alive  # one taken for dead too soon, now heartbeating again
        for process in procs:
            if process not in alive:
                self.presence.dead.add(process)
                if await self.redis.set(self.keys.reap(process), self.process, nx=True, px=30_000):
                    await self.reap(process)
        # Rooms read over HTTP but not followed would go stale in the cache (another process may
        # change or delete them): forgotten here, read again when asked.
        self.rooms.drop_cached(lambda c: c in self.channels.following or c in self.owned)
        codes = [text(c) for c in await self.redis.smembers(self.keys.rooms)]
        if not codes:
            return []
        owners = await self.redis.mget([self.keys.owner(c) for c in codes])
        taken = []
        for code, raw in zip(codes, owners, strict=True):
            owner = text(raw) if raw is not None else ""
            if owner == self.process:
                self.owned.add(code)
                await self.channels.follow(code)
                continue
            if code in self.owned:
                self.owned.discard(code)
                await self.channels.unfollow(code)
            if owner in alive:
                continue
            claim = [self.keys.owner(code), self.keys.room(code)]
            if await self._claim(keys=claim, args=[self.process, owner]):
                log.info("took over room %s from %s", code, owner or "nobody")
                self.owned.add(code)
                taken.append(code)
                if code in self.channels.following:
                    self.channels.refresh(code)
                else:
                    await self.channels.follow(code)  # its acknowledgement re-reads the room
        return taken

    async def reap(self, process: str) -> None:
        """Remove a gone process's presence (and tell each of its rooms) and its follows."""
        await self.presence.remove_process(process)
        followed = [text(c) for c in await self.redis.smembers(self.keys.follows(process))]
        async with self.redis.pipeline(transaction=False) as pipe:
            for code in followed:
                pipe.srem(self.keys.followers(code), process)
            pipe.delete(self.keys.procrooms(process), self.keys.follows(process))
            pipe.srem(self.keys.procs, process)
            await pipe.execute()

    async def release(self) -> None:
        """A clean stop hands everything over at once instead of after the lease expires."""
        await self.reap(self.process)
        await self.redis.delete(self.keys.alive(self.process))
        async with self.redis.pipeline(transaction=False) as pipe:
            for code in self.owned:
                pipe.delete(self.keys.owner(code))
            await pipe.execute()
