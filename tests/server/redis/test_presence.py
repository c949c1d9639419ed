"""Presence across processes: a seat's player is connected through one process while another (the
room's owner) decides, from what it has heard so far, that the player is away."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conflictology.server.redis_backend import RedisBackend
from conflictology.server.rooms import Room
from redis_helpers import clear_prefix, new_prefix, redis_server
from server_helpers import Player, eventually, make_table, start, thread_server

pytestmark = pytest.mark.redis


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


def seat_is_away(url: str, code: str, seat: int) -> bool:
    info = httpx.get(f"{url}/api/rooms/{code}", timeout=60).json()
    return bool(info["seats"][seat].get("afk"))


async def mark_away_elsewhere(redis_url: str, prefix: str, code: str, seat: int) -> None:
    """What the owner's grace expiry does, from a process that has not heard of the seat's socket."""

    def away(room: Room) -> None:
        room.seats[seat].afk = True

    other = RedisBackend(redis_url, prefix, timeout_seconds=30.0)
    await other.start(lambda code: False)
    try:
        await other.update(code, away)
    finally:
        await other.stop()


def test_a_seat_marked_away_elsewhere_while_its_player_is_here_is_given_back(
    redis_url: str, tmp_path: Path
) -> None:
    """The owner's grace period ends just as the player reconnects through another process, before
    the owner has heard of the new socket: the seat is marked away (a bot would play for a player
    who is there). The process holding the player's socket gives the seat back at once."""
    prefix = new_prefix()
    shared = {"redis_url": redis_url, "redis_prefix": prefix, "grace_seconds": 600.0}
    try:
        with thread_server(tmp_path, **shared) as a, thread_server(tmp_path, **shared) as b:
            table = make_table(a, "capitol", humans=2, settings={"timers": False})
            p0 = Player(a, table.code, table.tokens[0], 0)
            p1 = Player(b, table.code, table.tokens[1], 1)  # seat 1's socket is on B
            start(table)
            p1.wait_for(lambda m: m["type"] == "state" and m["room"]["status"] == "playing")

            asyncio.run(mark_away_elsewhere(redis_url, prefix, table.code, 1))
            p1.wait_for(lambda m: m["type"] == "state" and m["room"]["seats"][1].get("afk") is True)
            deadline = time.time() + 60
            while seat_is_away(a.url, table.code, 1):
                assert time.time() < deadline, "the seat was not given back to its connected player"
                time.sleep(0.05)
            back = p1.wait_for(lambda m: m["type"] == "state" and not m["room"]["seats"][1].get("afk"))
            assert back["room"]["status"] == "playing"
            # A seat whose player is not connected anywhere stays away.
            p0.close()
            # A (which held the socket) has noticed it closed before the seat is marked away.
            eventually(
                lambda: httpx.get(f"{a.url}/api/rooms/{table.code}", timeout=60).json()["seats"][0],
                lambda seat: seat["connected"] is False,
            )

            asyncio.run(mark_away_elsewhere(redis_url, prefix, table.code, 0))
            eventually(lambda: seat_is_away(a.url, table.code, 0), lambda away: away)
            time.sleep(0.5)  # (a wrong give-back would come meanwhile)
            assert seat_is_away(a.url, table.code, 0)
            assert not seat_is_away(a.url, table.code, 1)
            # Its player comes back through B: the seat is theirs again, and A (the owner, whose
            # grace periods mark seats away) counts it as connected.
            p0 = Player(b, table.code, table.tokens[0], 0)
            deadline = time.time() + 60
            while True:
                seat0 = httpx.get(f"{a.url}/api/rooms/{table.code}", timeout=60).json()["seats"][0]
                if seat0["connected"] and not seat0.get("afk"):
                    break
                assert time.time() < deadline, f"seat 0 on the owner's side: {seat0}"
                time.sleep(0.05)
            p0.close()
            p1.close()
    finally:
        clear_prefix(redis_url, prefix)
