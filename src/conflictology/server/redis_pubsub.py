"""Which rooms this process hears about, and what it does when it hears.

A process *follows* each room where it has sockets or which it owns, and only those (so with many
processes each one hears about its own rooms, not about every change everywhere): it adds itself to
``<prefix>followers:<code>`` and subscribes to ``<prefix>ch:<code>``. The save script publishes the
new version there when a process other than the writer follows the room; on an announcement a
process re-reads the room and pushes fresh views. When a subscription is acknowledged the room is
re-read once, so a change made while it was being set up is not missed.

On a room's channel: ``<version>`` (a change), ``p<process>`` (presence changed), ``r<process>`` (a
process taken for dead is back), ``e<process>|<JSON>`` (a message for the room's sockets that
changes nothing in the room: a reaction).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import redis.asyncio as aioredis
from redis.asyncio.client import Pipeline, PubSub

from conflictology.server.backend import EventListener, Listener
from conflictology.server.redis_keys import RedisKeys
from conflictology.server.redis_outage import Outages, is_outage
from conflictology.server.redis_presence import RedisPresence
from conflictology.server.redis_storage import RedisRooms, text
from conflictology.server.rooms import Room

log = logging.getLogger("conflictology.server")

_encoder = msgspec.json.Encoder()


class RoomChannels:
    def __init__(
        self,
        redis: aioredis.Redis,
        keys: RedisKeys,
        process: str,
        rooms: RedisRooms,
        presence: RedisPresence,
        owned: set[str],
        outages: Outages,
        notify: Listener,
        notify_event: EventListener,
        running: Callable[[], bool],
    ) -> None:
        self.redis = redis
        self.keys = keys
        self.process = process
        self.rooms = rooms
        self.presence = presence
        self.owned = owned  # the rooms this process owns (kept by the leases): always followed
        self.outages = outages
        self.notify = notify
        self.notify_event = notify_event
        self.running = running
        self.interested: Callable[[str], bool] = lambda code: False
        self.pubsub: PubSub | None = None
        # Room channels this process is subscribed to (rooms with sockets here, or owned here).
        self.following: set[str] = set()
        # Following and unfollowing take turns: each waits on Redis, and a quick unfollow-then-follow
        # whose steps crossed would leave the process subscribed to nothing while it thinks it follows.
        self._membership = asyncio.Lock()
        self.refreshing: dict[str, asyncio.Task[None]] = {}
        self._dirty: set[str] = set()
        self._presence_dirty: set[str] = set()
        # The last version pushed to this process's sockets.
        self.pushed: dict[str, int] = {}
        self._announced: dict[str, int] = {}  # the newest version announced, until it is read

    async def start(self, interested: Callable[[str], bool]) -> None:
        self.interested = interested
        self.pubsub = self.redis.pubsub()
        await self.pubsub.subscribe(self.keys.control)
        # Serve nothing before the subscription is acknowledged (testing-recipes.md).
        deadline = time.monotonic() + 10
        while True:
            msg = await self.pubsub.get_message(timeout=1.0)
            if msg is not None and msg.get("type") == "subscribe":
                break
            if time.monotonic() > deadline:
                raise RuntimeError("Redis did not acknowledge the subscription")

    async def close(self) -> None:
        self.following.clear()
        if self.pubsub is not None:
            # Bound to a typed name: redis-py annotates aclose in some releases and not in others.
            aclose: Callable[[], Awaitable[None]] = self.pubsub.aclose
            with contextlib.suppress(Exception):
                await aclose()

    def cancel_refreshes(self) -> list[asyncio.Task[None]]:
        tasks = list(self.refreshing.values())
        for task in tasks:
            task.cancel()
        return tasks

    # ---- following -----------------------------------------------------------------------------

    async def follow(self, code: str) -> None:
        if code in self.following or self.pubsub is None:
            return
        self.following.add(code)
        async with self._membership:
            if code not in self.following:
                return  # let go again meanwhile
            # Listed as a follower first, then subscribed: a change saved in between is announced
            # but may not be heard, and the re-read at the subscription's acknowledgement catches it.
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.sadd(self.keys.followers(code), self.process)
                pipe.sadd(self.keys.follows(self.process), code)
                await pipe.execute()
            await self.pubsub.subscribe(self.keys.channel(code))

    async def unfollow(self, code: str) -> None:
        if code not in self.following or code in self.owned or self.interested(code):
            return
        self.following.discard(code)
        # What we knew of the room goes stale from now on.
        self.rooms.cache.pop(code, None)
        self.presence.remote.pop(code, None)
        self.pushed.pop(code, None)
        async with self._membership:
            if code in self.following:
                return  # followed again meanwhile
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.srem(self.keys.followers(code), self.process)
                pipe.srem(self.keys.follows(self.process), code)
                await pipe.execute()
            if self.pubsub is not None:
                await self.pubsub.unsubscribe(self.keys.channel(code))

    def restore(self, pipe: Pipeline) -> None:
        """Queue this process's follows again (after it was reaped for a lease it missed)."""
        for code in self.following:
            pipe.sadd(self.keys.followers(code), self.process)
            pipe.sadd(self.keys.follows(self.process), code)

    def announce_return(self, pipe: Pipeline) -> None:
        for code in self.following:
            # "r": back from the dead — the others stop ignoring its presence and read it again.
            pipe.publish(self.keys.channel(code), f"r{self.process}")

    async def recover(self) -> None:
        """Follows made during an outage may not have reached Redis: list them again, and subscribe
        again (each acknowledgement re-reads its room: what was missed is pushed)."""
        following = list(self.following)
        if not following:
            return
        async with self.redis.pipeline(transaction=False) as pipe:
            for code in following:
                pipe.sadd(self.keys.followers(code), self.process)
                pipe.sadd(self.keys.follows(self.process), code)
            await pipe.execute()
        if self.pubsub is not None:
            await self.pubsub.subscribe(*(self.keys.channel(c) for c in following))

    # ---- speaking and hearing ------------------------------------------------------------------

    async def announce(self, code: str, message: dict[str, Any]) -> None:
        data = _encoder.encode(message).decode()
        await self.redis.publish(self.keys.channel(code), f"e{self.process}|{data}")

    def push(self, room: Room, local: bool) -> None:
        self.pushed[room.code] = max(room.version, self.pushed.get(room.code, 0))
        self.notify(room, local)

    def reread_if_followed(self, code: str) -> None:
        """A save of ours may have landed without its outcome reaching us (or another process's
        announcement been skipped as ours): read the room again."""
        if code in self.following:
            self.refresh(code, presence=False)

    async def listen(self) -> None:
        assert self.pubsub is not None
        while self.running():
            try:
                msg = await self.pubsub.get_message(timeout=1.0)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if is_outage(exc):
                    self.outages.record(exc)  # one line per outage, not one per attempt
                else:
                    log.exception("Redis subscription failed; resubscribing")
                await asyncio.sleep(0.5)
                with contextlib.suppress(Exception):
                    # Each acknowledgement re-reads its room: changes missed meanwhile are pushed.
                    channels = [self.keys.channel(c) for c in self.following]
                    await self.pubsub.subscribe(self.keys.control, *channels)
                continue
            if msg is None:
                continue
            self._heard(msg)

    def _heard(self, msg: dict[str, Any]) -> None:
        kind = msg.get("type")
        channel = text(msg["channel"])
        if channel == self.keys.control:
            return
        code = self.keys.code_of(channel)
        if kind == "subscribe":
            # Anything announced before the subscription took effect was not heard: read now.
            if code in self.owned or self.interested(code):
                self.refresh(code)
            return
        if kind != "message":
            return
        data = text(msg["data"])
        if data.startswith("e"):
            # "e<process>|<message>": a message for the room's sockets that changes nothing in
            # the room (a reaction); its sender has already sent it to its own sockets.
            process, _, event = data[1:].partition("|")
            if process != self.process and self.interested(code):
                with contextlib.suppress(msgspec.DecodeError):
                    self.notify_event(code, msgspec.json.decode(event))
            return
        presence = data.startswith(("p", "r"))
        if presence and data[1:] == self.process:
            return  # our own socket opened or closed: this process has already pushed it
        if data.startswith("r"):
            self.presence.dead.discard(data[1:])
        version = 0
        if not presence:
            version = int(data)
            if version <= self.pushed.get(code, 0) or version == self.rooms.saving.get(code):
                return  # our own change (pushed, or being saved), or one already pushed
        if code in self.owned or self.interested(code):
            if not presence:
                self._announced[code] = max(version, self._announced.get(code, 0))
            self.refresh(code, presence)
        else:  # a room we are leaving (its unsubscription is on its way)
            self.rooms.cache.pop(code, None)
            self.presence.remote.pop(code, None)

    def refresh(self, code: str, presence: bool = True) -> None:
        """Re-read a room (and, after a presence announcement, who is connected) and push it to
        this process's sockets; announcements that arrive meanwhile are folded into one more pass."""
        if presence or code not in self.presence.remote:
            self._presence_dirty.add(code)
        if code in self.refreshing:
            self._dirty.add(code)
            return
        self.refreshing[code] = asyncio.create_task(self._refresh_loop(code))

    async def _refresh_loop(self, code: str) -> None:
        try:
            while True:
                self._dirty.discard(code)
                seats_changed = False
                room: Room | None
                try:
                    if code in self._presence_dirty:
                        self._presence_dirty.discard(code)
                        self.presence.remote[code] = await self.presence.read(code)
                        seats_changed = True
                    room = await self.rooms.load(code, self._announced.pop(code, None))
                except Exception as exc:
                    if is_outage(exc):
                        self.outages.record(exc)  # re-read when Redis answers again (recovered)
                    else:
                        log.exception("could not refresh room %s", code)
                    room = None
                # Push only what the sockets have not had: a newer version, or who is connected.
                if room is not None and (seats_changed or room.version > self.pushed.get(code, 0)):
                    self.push(room, local=False)
                if code not in self._dirty:
                    return
        finally:
            self.refreshing.pop(code, None)
