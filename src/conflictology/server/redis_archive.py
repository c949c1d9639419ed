"""The finished games waiting for the database, in Redis (``archive.py`` says why and who writes
them): a hash ``<prefix>archive`` (game id → its record, JSON) and a sorted set
``<prefix>archive:queue`` (game id → when it was queued), shared by every process. A game stays there
until the database has it, however long that takes: Redis keeps it as it keeps the rooms (with its
append-only file, across a restart of Redis too).
"""

from __future__ import annotations

import time
from typing import Any

import msgspec
import redis.asyncio as aioredis

from conflictology.server.redis_keys import RedisKeys

_encoder = msgspec.json.Encoder()


class RedisArchiveQueue:
    def __init__(self, redis: aioredis.Redis, keys: RedisKeys) -> None:
        self.redis = redis
        self.records = keys.archive_records
        self.order = keys.archive_queue

    async def put(self, records: list[dict[str, Any]]) -> None:
        if not records:
            return
        now = time.time()
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(self.records, mapping={r["id"]: _encoder.encode(r) for r in records})
            # NX: a game queued again (a process taking a room over) keeps its first time.
            pipe.zadd(self.order, {r["id"]: now for r in records}, nx=True)
            await pipe.execute()

    async def oldest(self, limit: int) -> list[dict[str, Any]]:
        ids: list[Any] = await self.redis.zrange(self.order, 0, max(limit, 1) - 1)
        if not ids:
            return []
        data: list[Any] = await self.redis.hmget(self.records, ids)
        out, gone = [], []
        for game_id, raw in zip(ids, data, strict=True):
            if raw is None:
                gone.append(game_id)  # archived and removed by another process meanwhile
            else:
                out.append(msgspec.json.decode(raw))
        if gone:
            await self.redis.zrem(self.order, *gone)
        return out

    async def remove(self, game_ids: list[str]) -> None:
        if not game_ids:
            return
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hdel(self.records, *game_ids)
            pipe.zrem(self.order, *game_ids)
            await pipe.execute()

    async def waiting(self) -> tuple[int, float | None]:
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zcard(self.order)
            pipe.zrange(self.order, 0, 0, withscores=True)
            count, first = await pipe.execute()
        return int(count), (float(first[0][1]) if first else None)
