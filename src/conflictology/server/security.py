"""Tokens, the Host and Origin allow-lists, the rate limits, and what a player's name may hold.

Tokens are 192-bit secrets from :mod:`secrets`; the server keeps only their SHA-256, so a stolen
snapshot or database cannot be replayed as a seat, and comparisons are constant-time.

Limits count per *client address*: an IPv4 address, or an IPv6 /64 (one subscriber is given a whole
/64, so counting single IPv6 addresses would hand an attacker 2^64 fresh budgets).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import ipaddress
import math
import secrets
import time
import unicodedata
from collections import OrderedDict
from collections.abc import Iterable


def new_token() -> str:
    return secrets.token_urlsafe(24)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def same_hash(a: str, b: str) -> bool:
    return hmac.compare_digest(a, b)


@functools.lru_cache(maxsize=65_536)
def address_key(host: str | None) -> str | None:
    """What a client address's limits count under: an IPv4 address as it is; an IPv6 address by its
    /64 (``2001:db8:1:2::/64``); an IPv4 address mapped into IPv6 as the IPv4 one. None for anything
    that is not an IP address (a Unix socket)."""
    if not host:
        return None
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])  # (a link-local address's zone goes)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def client_key(host: str | None) -> str:
    """The key an address's rate limits are counted under (:func:`address_key`, else the host as
    given, else ``"?"``)."""
    return address_key(host) or host or "?"


def own_host_names() -> list[str]:
    """This machine's own names (a LAN player may reach a laptop by ``name`` or ``name.local``)."""
    import socket

    names = set()
    for name in (socket.gethostname(), socket.getfqdn()):
        if name:
            names.update({name, f"{name.split('.')[0]}.local"})
    return sorted(names)


class HostPolicy:
    """Which Host headers the server answers (the defence against DNS rebinding: a page of
    ``evil.example`` whose name is made to resolve to this server sends ``Host: evil.example``).

    ``localhost`` names and IP address literals are always answered: a browser sends them only for a
    page loaded from that very address, never for another site's page, and they are what health
    checks, a laptop and a LAN game use. Other names must be listed in ``allowed`` (``play.example``,
    ``*.example`` for a suffix, ``*`` for any); with none listed, this machine's own host names are
    (``name``, ``name.local``). ``--public-url`` adds its host to the list.
    """

    def __init__(self, allowed: Iterable[str] = (), own_names: Iterable[str] = ()) -> None:
        names = [a.strip().lower().rstrip(".") for a in allowed if a.strip()]
        self.any = "*" in names
        self.exact = {n for n in names if not n.startswith("*.")}
        self.suffixes = tuple(n[1:] for n in names if n.startswith("*."))
        if not names:
            self.exact = {n.lower().rstrip(".") for n in own_names if n}

    @staticmethod
    def name_of(host: str) -> str:
        """The host name of a Host header, without its port (IPv6 literals keep their brackets)."""
        host = host.strip().lower()
        if host.startswith("["):
            return host[: host.find("]") + 1] if "]" in host else host
        return host.rsplit(":", 1)[0] if host.count(":") == 1 else host

    def allowed(self, host: str | None) -> bool:
        if host is None:
            return True  # HTTP/1.0 without Host: no browser sends that
        if self.any:
            return True
        name = self.name_of(host).rstrip(".")
        if name in self.exact or (self.suffixes and name.endswith(self.suffixes)):
            return True
        if name == "localhost" or name.endswith(".localhost"):
            return True
        try:
            ipaddress.ip_address(name.strip("[]"))
        except ValueError:
            return False
        return True


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

    def _fill(self) -> None:
        now = time.monotonic()
        self.level = min(self.burst, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def take(self) -> bool:
        self._fill()
        if self.level >= 1.0:
            self.level -= 1.0
            return True
        return False

    def refund(self) -> None:
        """Give back one event taken that turned out not to count (a guess that found its room)."""
        self._fill()
        self.level = min(self.burst, self.level + 1.0)

    def retry_after(self) -> int:
        """Whole seconds until one event is allowed again (for a Retry-After header)."""
        self._fill()
        if self.level >= 1.0 or self.rate <= 0:
            return 0 if self.level >= 1.0 else 3600
        return max(1, math.ceil((1.0 - self.level) / self.rate))


class RateLimits:
    """One bucket per key (a client address). The keys kept are bounded: past ``max_keys`` the
    least recently seen is forgotten (O(1); an address seen again starts with a full bucket, which a
    crowd of addresses big enough to push it out would have anyway)."""

    def __init__(self, rate: float, burst: float, max_keys: int = 100_000) -> None:
        self.rate = rate
        self.burst = burst
        self.max_keys = max_keys
        self._buckets: OrderedDict[str, TokenBucket] = OrderedDict()

    @property
    def enabled(self) -> bool:
        return self.rate > 0

    def bucket(self, key: str) -> TokenBucket:
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self.max_keys:
                self._buckets.popitem(last=False)
            bucket = self._buckets[key] = TokenBucket(self.rate, self.burst)
        else:
            self._buckets.move_to_end(key)
        return bucket

    def take(self, key: str) -> bool:
        return not self.enabled or self.bucket(key).take()

    def refund(self, key: str) -> None:
        bucket = self._buckets.get(key)
        if bucket is not None:
            bucket.refund()

    def retry_after(self, key: str) -> int:
        bucket = self._buckets.get(key)
        return 0 if bucket is None else bucket.retry_after()


@functools.lru_cache(maxsize=65_536)
def wide_key(key: str) -> str | None:
    """The /48 an IPv6 /64 key belongs to (``2001:db8:1::/48``); None for anything else. Internet
    providers give a home a /56 or a /48, so one household holds 256 to 65,536 /64s."""
    if not key.endswith("/64"):
        return None
    return str(ipaddress.IPv6Network(key).supernet(new_prefix=48))


class AddressLimits:
    """A limit per client address, and for IPv6 a second one per /48 that allows ``wide`` times as
    much: one household's many /64s cannot each have the whole budget."""

    def __init__(self, rate: float, burst: float, wide: float = 16.0) -> None:
        self.narrow = RateLimits(rate, burst)
        self.wide = RateLimits(rate * wide, burst * wide)

    def take(self, key: str) -> bool:
        if not self.narrow.take(key):
            return False
        wider = wide_key(key)
        if wider is not None and not self.wide.take(wider):
            self.narrow.refund(key)
            return False
        return True

    def refund(self, key: str) -> None:
        self.narrow.refund(key)
        wider = wide_key(key)
        if wider is not None:
            self.wide.refund(wider)

    def retry_after(self, key: str) -> int:
        wider = wide_key(key)
        return max(self.narrow.retry_after(key), self.wide.retry_after(wider) if wider else 0)


class Budget:
    """A per-address budget that server processes may share (``take`` and ``refund`` are awaited: a
    shared one asks Redis). This one is the process's own."""

    def __init__(self, rate: float, burst: float, wide: float = 16.0) -> None:
        self.limits = AddressLimits(rate, burst, wide)

    async def take(self, key: str) -> int | None:
        """None when one is taken; else the seconds until one is back (for Retry-After)."""
        if self.limits.take(key):
            return None
        return self.limits.retry_after(key)

    async def refund(self, key: str) -> None:
        self.limits.refund(key)


# Characters a name may not hold: controls, surrogates, private-use and unassigned code points, and
# format characters (bidirectional overrides and isolates, which turn "Ana" into "anA" and reorder
# the text after it; zero-width spaces) — but the joiners that emoji sequences are made of.
_NAME_DROPPED = {"Cc", "Cs", "Co", "Cn", "Cf"}
_NAME_KEPT_FORMAT = {"\u200c", "\u200d"}
_MAX_MARKS = 3  # combining marks on one letter: enough for any script, not for "Zalgo" towers


def clean_name(name: str) -> str:
    """A player's name as the table shows it: NFC, without control or format characters, runs of
    white space as one space, at most three combining marks per letter. May return ``""``."""
    out: list[str] = []
    marks = 0
    for ch in unicodedata.normalize("NFC", name):
        category = unicodedata.category(ch)
        if category in _NAME_DROPPED and ch not in _NAME_KEPT_FORMAT:
            continue
        if category.startswith("Z") or ch.isspace():
            if out and out[-1] != " ":
                out.append(" ")
            marks = 0
            continue
        if category.startswith("M"):
            marks += 1
            if marks > _MAX_MARKS:
                continue
        else:
            marks = 0
        out.append(ch)
    return "".join(out).strip()


def distinct_name(name: str, taken: Iterable[str], limit: int = 40) -> str:
    """``name``, or ``name 2``, ``name 3``… — the first that no one at the table has (compared
    without case), so two players are always told apart."""
    seen = {t.casefold() for t in taken}
    if name.casefold() not in seen:
        return name
    n = 2
    while True:
        suffix = f" {n}"
        candidate = name[: limit - len(suffix)].rstrip() + suffix
        if candidate.casefold() not in seen:
            return candidate
        n += 1
