"""Tokens, the Origin allow-list and the rate limits.

Tokens are 192-bit secrets from :mod:`secrets`; the server keeps only their SHA-256, so a stolen
snapshot or database cannot be replayed as a seat, and comparisons are constant-time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Iterable


def new_token() -> str:
    return secrets.token_urlsafe(24)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def same_hash(a: str, b: str) -> bool:
    return hmac.compare_digest(a, b)


class OriginPolicy:
    """Which browser origins may talk to the server.

    A request with no Origin header (a bot, a script, curl) is allowed: the allow-list protects
    browsers' users from other sites, not the server from programs. The server's own origin (the
    Host the request was sent to) and every ``chrome-extension://`` origin are allowed by default.
    """

    def __init__(self, extra: Iterable[str] = (), allow_extensions: bool = True) -> None:
        self.extra = {o.rstrip("/").lower() for o in extra}
        self.allow_extensions = allow_extensions

    def allowed(self, origin: str | None, host: str | None) -> bool:
        if origin is None:
            return True
        origin = origin.rstrip("/").lower()
        if origin in self.extra or "*" in self.extra:
            return True
        if self.allow_extensions and origin.startswith("chrome-extension://"):
            return True
        if host:
            host = host.lower()
            return origin in (f"http://{host}", f"https://{host}")
        return False


class TokenBucket:
    """A rate limit: ``rate`` events per second on average, bursts of up to ``burst``."""

    __slots__ = ("burst", "level", "rate", "stamp")

    def __init__(self, rate: float, burst: float) -> None:
        self.rate = rate
        self.burst = burst
        self.level = burst
        self.stamp = time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.level = min(self.burst, self.level + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.level >= 1.0:
            self.level -= 1.0
            return True
        return False


class RateLimits:
    """One bucket per key (a client address), forgetting keys that have been full for a while."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate = rate
        self.burst = burst
        self._buckets: dict[str, TokenBucket] = {}

    def take(self, key: str) -> bool:
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) > 10_000:
                self._forget()
            bucket = self._buckets[key] = TokenBucket(self.rate, self.burst)
        return bucket.take()

    def _forget(self) -> None:
        now = time.monotonic()
        full_after = self.burst / max(self.rate, 1e-9)
        self._buckets = {k: b for k, b in self._buckets.items() if now - b.stamp < full_after}
