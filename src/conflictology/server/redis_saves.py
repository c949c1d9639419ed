"""Group commit of the rooms' saves: one connection of their own, one batch at a time.

The saves that become ready while a batch is on its way are sent together as the next one, one
pipelined round trip, each still its own compare-and-set script (``redis_scripts.UPDATE``): the
per-move path costs one round trip however many rooms change at once, and no pool bookkeeping.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import hiredis
import redis.asyncio as aioredis
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import NoScriptError, ResponseError

from conflictology.server import redis_scripts

# One save: the script's keys and arguments.
Save = tuple[list[str], list[Any]]


class SaveBatches:
    def __init__(self, redis: aioredis.Redis) -> None:
        self.redis = redis
        self.script = redis.register_script(redis_scripts.UPDATE)
        self.saves = 0
        self.round_trips = 0
        # Saves queue here while the batch before them is on its way.
        self._batch: list[tuple[list[str], list[Any], asyncio.Future[Any]]] = []
        self._sender: asyncio.Task[None] | None = None
        self.connection: AbstractConnection | None = None

    async def save(self, keys: list[str], args: list[Any]) -> Any:
        """The script's reply to this save (or the error Redis answered it with, raised)."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._batch.append((keys, args, future))
        if self._sender is None:
            # Starts after the current turn of the loop: the saves ready in it all join the batch.
            self._sender = asyncio.create_task(self._send_batches())
        return await future

    async def stop(self) -> None:
        if self._sender is not None:
            # Saves already on their way are let finish: their callers are told what happened.
            sender = self._sender
            await asyncio.wait([sender], timeout=5)
            if not sender.done():
                sender.cancel()
                await asyncio.wait([sender], timeout=1)

    async def release(self) -> None:
        if self.connection is not None:
            connection, self.connection = self.connection, None
            with contextlib.suppress(Exception):
                await self.redis.connection_pool.release(connection)

    async def _send_batches(self) -> None:
        """Send the queued saves, one batch at a time, until none is left."""
        try:
            while self._batch:
                batch, self._batch = self._batch, []
                self.saves += len(batch)
                self.round_trips += 1
                try:
                    results = await self.send([(keys, args) for keys, args, _ in batch])
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

    async def send(self, batch: list[Save], load: bool = True) -> list[Any]:
        """One round trip: each save's script, pipelined on the save connection; returns each
        script's reply, or the error Redis answered it with."""
        conn = self.connection
        if conn is None:
            conn = self.connection = await self.redis.connection_pool.get_connection()  # type: ignore[no-untyped-call]
        sha = self.script.sha
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
            self.connection = None
            with contextlib.suppress(Exception):
                await conn.disconnect()
            with contextlib.suppress(Exception):
                await self.redis.connection_pool.release(conn)
            raise
        missing = [i for i, r in enumerate(results) if isinstance(r, NoScriptError)]
        if missing and load:
            # Redis restarted or its scripts were flushed: load the script and send those again.
            await self.redis.script_load(redis_scripts.UPDATE)
            again = await self.send([batch[i] for i in missing], load=False)
            for i, result in zip(missing, again, strict=True):
                results[i] = result
        return results
