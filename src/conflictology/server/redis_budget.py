"""A per-address budget every process shares (in Redis): behind a balancer that spreads a client's
requests over N processes, the client still has one budget, not N."""

from __future__ import annotations

import redis.asyncio as aioredis

from conflictology.server import redis_scripts
from conflictology.server.redis_outage import is_outage, is_pool_exhausted
from conflictology.server.security import Budget, wide_key


class SharedBudget(Budget):
    """A token bucket per address and per IPv6 /48 (``redis_scripts.BUDGET``). While Redis does not
    answer, each process counts on its own."""

    def __init__(
        self, redis: aioredis.Redis, prefix: str, rate: float, burst: float, wide: float = 16.0
    ) -> None:
        super().__init__(rate, burst, wide)
        self.prefix = prefix  # RedisKeys.budget(name)
        self.args = [rate, burst, rate * wide, burst * wide]
        self.script = redis.register_script(redis_scripts.BUDGET)

    def _keys(self, key: str) -> list[str]:
        wider = wide_key(key)
        return [self.prefix + key, self.prefix + wider if wider else ""]

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
