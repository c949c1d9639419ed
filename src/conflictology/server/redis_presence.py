"""Which seats have a socket open, per process: ``<prefix>presence:<code>`` holds a field
``<process>|<seat id>`` per connected seat; ``p<process>`` is published on the room's channel when
it changes (who changed it, so that process skips its own announcement).

A process counts the seats connected through the others (``remote``), not those of a process taken
for dead (``dead``), and keeps its own (``present``) to write them back after an outage or after it
was reaped too soon.
"""

from __future__ import annotations

import redis.asyncio as aioredis
from redis.asyncio.client import Pipeline

from conflictology.server.redis_keys import RedisKeys
from conflictology.server.redis_storage import text


class RedisPresence:
    def __init__(self, redis: aioredis.Redis, keys: RedisKeys, process: str) -> None:
        self.redis = redis
        self.keys = keys
        self.process = process
        # Seats connected through this process, per room (presence to restore after a reaping).
        self.present: dict[str, set[str]] = {}
        # Seats connected through the other processes, per room followed, as last read.
        self.remote: dict[str, set[str]] = {}
        # Processes whose lease expired: their fields are not counted (until they are reaped).
        self.dead: set[str] = set()

    def _field(self, seat_id: str) -> str:
        return f"{self.process}|{seat_id}"

    async def mark(self, code: str, seat_id: str, online: bool) -> None:
        if online:
            self.present.setdefault(code, set()).add(seat_id)
        else:
            seats = self.present.get(code)
            if seats is not None:
                seats.discard(seat_id)
                if not seats:
                    del self.present[code]
        async with self.redis.pipeline(transaction=False) as pipe:
            if online:
                pipe.hset(self.keys.presence(code), self._field(seat_id), "1")
                pipe.sadd(self.keys.procrooms(self.process), code)
            else:
                pipe.hdel(self.keys.presence(code), self._field(seat_id))
            # "p<process>": who changed it, so that process skips its own announcement.
            pipe.publish(self.keys.channel(code), f"p{self.process}")
            await pipe.execute()

    async def read(self, code: str) -> set[str]:
        """The seats connected through the other live processes."""
        fields = await self.redis.hkeys(self.keys.presence(code))
        seats = set()
        for raw in fields:
            process, _, seat_id = text(raw).partition("|")
            if process != self.process and process not in self.dead:
                seats.add(seat_id)
        return seats

    def restore(self, pipe: Pipeline) -> None:
        """Queue this process's fields again (after it was reaped for a lease it missed)."""
        for code, seats in self.present.items():
            for seat_id in seats:
                pipe.hset(self.keys.presence(code), self._field(seat_id), "1")
            pipe.sadd(self.keys.procrooms(self.process), code)

    async def resync(self) -> None:
        """This process's presence fields as they are now: sockets that closed during an outage left
        theirs behind (a seat counted connected for ever would never get its grace period)."""
        rooms = {text(c) for c in await self.redis.smembers(self.keys.procrooms(self.process))}
        rooms |= set(self.present)
        mine = self.process + "|"
        for code in rooms:
            fields = {text(f) for f in await self.redis.hkeys(self.keys.presence(code))}
            have = {f for f in fields if f.startswith(mine)}
            want = {mine + seat for seat in self.present.get(code, ())}
            if have == want:
                continue
            async with self.redis.pipeline(transaction=False) as pipe:
                if have - want:
                    pipe.hdel(self.keys.presence(code), *(have - want))
                for field in want - have:
                    pipe.hset(self.keys.presence(code), field, "1")
                if want:
                    pipe.sadd(self.keys.procrooms(self.process), code)
                pipe.publish(self.keys.channel(code), f"p{self.process}")
                await pipe.execute()

    async def remove_process(self, process: str) -> None:
        """A gone process's fields, removed, and each of its rooms told."""
        rooms = [text(c) for c in await self.redis.smembers(self.keys.procrooms(process))]
        for code in rooms:
            keys = await self.redis.hkeys(self.keys.presence(code))
            fields = [f for f in keys if text(f).startswith(process + "|")]
            async with self.redis.pipeline(transaction=False) as pipe:
                if fields:
                    pipe.hdel(self.keys.presence(code), *fields)
                pipe.publish(self.keys.channel(code), f"p{process}")
                await pipe.execute()
