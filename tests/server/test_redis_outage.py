"""What counts as a Redis outage, and what a public method of the backend answers during one — on
exceptions raised by hand (the Redis suites cut a real server)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.exceptions import BusyLoadingError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from conflictology.server.backend import BackendUnavailable
from conflictology.server.redis_outage import Outages, answers_outage, is_outage, is_pool_exhausted


@pytest.mark.parametrize(
    "exc",
    [
        RedisConnectionError("Connection refused"),
        RedisTimeoutError("Timeout reading from socket"),
        BusyLoadingError("Redis is loading the dataset in memory"),
        OSError("Network is unreachable"),
        ResponseError("MISCONF Redis is configured to save RDB snapshots"),
        ResponseError("READONLY You can't write against a read only replica."),
        ResponseError("OOM command not allowed when used memory > 'maxmemory'."),
    ],
)
def test_a_redis_that_does_not_answer_or_will_not_write_is_an_outage(exc: Exception) -> None:
    assert is_outage(exc)


@pytest.mark.parametrize(
    "exc", [ResponseError("WRONGTYPE Operation against a key"), ValueError("a bug"), KeyError("x")]
)
def test_a_wrong_command_or_a_bug_is_not_an_outage(exc: Exception) -> None:
    assert not is_outage(exc)


def test_a_pool_with_no_free_connection_is_an_overload_not_an_outage() -> None:
    assert is_pool_exhausted(RedisConnectionError("No connection available."))
    assert not is_pool_exhausted(RedisConnectionError("Connection refused"))


class Watched:
    def __init__(self) -> None:
        # A client that never connects: dropping its idle connections costs nothing.
        self.outages = Outages(aioredis.Redis.from_url("redis://127.0.0.1:1/0"))
        self.fail: Exception | None = None

    @answers_outage
    async def read(self) -> str:
        if self.fail is not None:
            raise self.fail
        return "room"


def test_a_public_method_answers_an_outage_as_unavailable_until_redis_answers() -> None:
    async def main() -> None:
        watched = Watched()
        assert watched.outages.available() and await watched.read() == "room"
        watched.fail = RedisConnectionError("Connection refused")
        with pytest.raises(BackendUnavailable) as refused:
            await watched.read()
        assert refused.value.status == 503 and refused.value.code == "unavailable"
        assert refused.value.__cause__ is None  # what Redis said is logged, not shown
        assert not watched.outages.available() and watched.outages.resync_needed
        watched.fail = None
        assert await watched.read() == "room"
        assert watched.outages.available()
        assert watched.outages.resync_needed  # until the housekeeping has written back

    asyncio.run(main())


def test_a_busy_pool_is_unavailable_saying_so_and_a_bug_is_raised_as_it_is() -> None:
    async def main() -> Any:
        watched = Watched()
        watched.fail = RedisConnectionError("No connection available.")
        with pytest.raises(BackendUnavailable) as busy:
            await watched.read()
        assert busy.value.message == "the server is busy; try again in a moment"
        assert watched.outages.available()  # not an outage: Redis answers
        watched.fail = KeyError("a bug")
        with pytest.raises(KeyError):
            await watched.read()

    asyncio.run(main())
