"""Connections below the application: who is open, from where, in which phase, and the caps.

uvicorn 0.54 lets a connection take as long as it likes to send a request: one that dribbles a
header line every few seconds holds a socket (an open file) for good, and with a 1,024-file limit
about a thousand of them leave no file for anyone else (issue 13: every request failed, nothing was
logged). The application never sees such a connection (its request never completes), so the limits
live below it: this module counts (:class:`ConnectionGuard`), and the protocol classes of
``guarded_protocols`` — subclasses of uvicorn's HTTP protocols (httptools, h11) and WebSocket
protocols, which ``uvicorn_options`` hands to uvicorn — report to it and enforce:

- **timeouts**: a request's line and headers must all arrive within ``header_timeout`` seconds of
  the connection opening (or, on a kept-alive connection, of the request's first byte) — one
  deadline, not reset by each line — and its body within ``body_timeout`` of its headers; a
  response the client stops reading (the transport's buffer stays full) for ``send_timeout`` is
  dropped too;
- **caps**: at most ``max_connections_per_address`` connections per client address (an IPv6 client
  is counted by its /64, which one host usually gets whole) and ``max_connections`` in all, a number
  below the process's open-file limit (``open_files``) so the database, Redis and worker pipes
  always have files;
- **eviction**: at the total cap, a new connection closes the one that has waited longest for its
  client's request (a slow sender's, not a player's: an open WebSocket is never evicted) before it
  is ever refused;
- a connection is counted once, from accept to close, across its HTTP → WebSocket upgrade.

Each refusal, eviction, timeout and refused WebSocket frame is counted in ``/metrics`` and logged in
one short line, at most one line per kind every ten seconds (``log_caps``), so an attack cannot flood
the log.
"""

from __future__ import annotations

import enum
import ipaddress
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from conflictology.server.log_caps import RateCappedLog
from conflictology.server.open_files import default_max_connections
from conflictology.server.security import address_key

if TYPE_CHECKING:
    from conflictology.server.config import ServerConfig

log = logging.getLogger("conflictology.server.connections")

# ---- what the guard counts ----------------------------------------------------------------------------

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout: float
    body_timeout: float
    send_timeout: float
    max_connections: int
    max_per_address: int  # 0: no per-address cap
    # Client networks not held to the per-address cap. A hook for a trusted reverse proxy (every
    # client arrives from its address); reading the client's real address from the proxy's headers
    # is issue 14's, not done here.
    exempt: tuple[Network, ...] = ()

    @classmethod
    def from_config(cls, config: ServerConfig) -> ConnectionLimits:
        exempt = list(config.connection_cap_exempt)
        per_address = config.max_connections_per_address if config.address_limits else 0
        if config.proxy_headers:
            # Every client arrives through a trusted proxy: the proxy's own connections are not one
            # client's (the proxy limits each client's connections; deploy/nginx.conf does).
            if "*" in config.forwarded_allow_ips:
                per_address = 0
            else:
                exempt += config.forwarded_allow_ips
        return cls(
            header_timeout=config.header_timeout,
            body_timeout=config.body_timeout,
            send_timeout=config.send_timeout,
            max_connections=config.max_connections or default_max_connections(),
            # (--no-address-limits, a load test from one machine, lifts this per-address cap too.)
            max_per_address=per_address,
            exempt=tuple(ipaddress.ip_network(n, strict=False) for n in exempt),
        )


class Phase(enum.Enum):
    """Where a connection is. The first three wait on the client (and may be evicted); the last two
    wait on the server or belong to an open WebSocket."""

    HEADERS = "headers"  # a request's line and headers are arriving
    BODY = "body"  # its body is arriving
    IDLE = "idle"  # kept alive between requests
    HANDLING = "handling"  # the application has the request
    UNREAD = "unread"  # a response waits for the client to read it (writing is paused)
    WEBSOCKET = "websocket"  # upgraded


WAITING_ON_CLIENT = frozenset({Phase.HEADERS, Phase.BODY, Phase.IDLE, Phase.UNREAD})


@dataclass
class _Open:
    key: str | None
    evict: Callable[[], None]
    client: str
    waiting_since: float = 0.0


@dataclass
class ConnectionStats:
    open: int
    waiting: int
    max_connections: int
    refused: dict[str, int]
    evicted: int
    timed_out: dict[str, int]
    frames_refused: dict[str, int]


class ConnectionGuard:
    """The connections of one server (one event loop): who is open, from where, and in which phase.
    The protocol classes bound to it (``uvicorn_options``) report to it; ``/metrics`` reads ``stats``."""

    def __init__(
        self,
        limits: ConnectionLimits,
        log_line: RateCappedLog | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limits = limits
        self.log = log_line or RateCappedLog(log)
        self.clock = clock
        # By transport: the same object before and after a WebSocket upgrade.
        self._open: dict[object, _Open] = {}
        self._per_key: dict[str, int] = {}
        # Connections waiting on their client, the longest waiting first.
        self._waiting: OrderedDict[object, None] = OrderedDict()
        self.refused = {"address_cap": 0, "server_cap": 0}
        self.evicted = 0
        self.timed_out = {"headers": 0, "body": 0, "response": 0}
        self.frames_refused = {"invalid_utf8": 0, "protocol_error": 0, "too_big": 0, "other": 0}

    @property
    def open_count(self) -> int:
        return len(self._open)

    def open_from(self, host: str) -> int:
        key = address_key(host)
        return self._per_key.get(key, 0) if key is not None else 0

    def _capped(self, host: str | None) -> str | None:
        key = address_key(host)
        if key is None or self.limits.max_per_address <= 0:
            return None
        if self.limits.exempt:
            ip = ipaddress.ip_address(host.split("%", 1)[0]) if host else None
            if ip is not None and any(ip in net for net in self.limits.exempt):
                return None
        return key

    def admit(
        self, transport: object, client: tuple[str, int] | None, evict: Callable[[], None]
    ) -> str | None:
        """Count a new connection in, or say why not ("address_cap" or "server_cap"). At the total
        cap the connection that has waited longest on its client is evicted to make room."""
        host = client[0] if client else None
        key = self._capped(host)
        if key is not None and self._per_key.get(key, 0) >= self.limits.max_per_address:
            self.refused["address_cap"] += 1
            self.log(
                "address_cap",
                "connection from %s refused: %d open from its address (--max-connections-per-address)",
                host,
                self._per_key[key],
            )
            return "address_cap"
        if len(self._open) >= self.limits.max_connections and not self._evict_one():
            self.refused["server_cap"] += 1
            self.log(
                "server_cap",
                "connection from %s refused: %d open, none of them evictable (--max-connections)",
                host,
                len(self._open),
            )
            return "server_cap"
        self._open[transport] = _Open(key, evict, host or "?")
        if key is not None:
            self._per_key[key] = self._per_key.get(key, 0) + 1
        return None

    def _evict_one(self) -> bool:
        if not self._waiting:
            return False
        transport = next(iter(self._waiting))
        entry = self._open[transport]
        self.release(transport)
        self.evicted += 1
        self.log(
            "evicted",
            "connection from %s evicted after waiting %.1f s for its request: %d open (--max-connections)",
            entry.client,
            self.clock() - entry.waiting_since,
            self.limits.max_connections,
        )
        entry.evict()
        return True

    def enter(self, transport: object, phase: Phase) -> None:
        entry = self._open.get(transport)
        if entry is None:
            return
        if phase in WAITING_ON_CLIENT:
            if transport not in self._waiting:
                entry.waiting_since = self.clock()
                self._waiting[transport] = None
        else:
            self._waiting.pop(transport, None)

    def upgraded(self, transport: object, client: tuple[str, int] | None) -> None:
        """A WebSocket protocol took the transport over: the same connection, now never evicted.
        (One not admitted by an HTTP protocol of this guard is counted, never refused: it is open.)"""
        if transport not in self._open:
            key = self._capped(client[0] if client else None)
            self._open[transport] = _Open(key, lambda: None, client[0] if client else "?")
            if key is not None:
                self._per_key[key] = self._per_key.get(key, 0) + 1
        self.enter(transport, Phase.WEBSOCKET)

    def release(self, transport: object) -> None:
        entry = self._open.pop(transport, None)
        if entry is None:
            return
        self._waiting.pop(transport, None)
        if entry.key is not None:
            left = self._per_key[entry.key] - 1
            if left:
                self._per_key[entry.key] = left
            else:
                del self._per_key[entry.key]

    def timed_out_waiting(self, phase: Phase, client: str) -> None:
        limits = self.limits
        if phase is Phase.UNREAD:
            self.timed_out["response"] += 1
            self.log(
                "send_timeout",
                "connection from %s dropped: its response unread for %g s (--send-timeout)",
                client,
                limits.send_timeout,
            )
            return
        part, flag, seconds = (
            ("headers", "header", limits.header_timeout)
            if phase is Phase.HEADERS
            else ("body", "body", limits.body_timeout)
        )
        self.timed_out[part] += 1
        self.log(
            f"{part}_timeout",
            "connection from %s dropped: request %s incomplete after %g s (--%s-timeout)",
            client,
            part,
            seconds,
            flag,
        )

    def refused_frame(self, client: str, reason: str, detail: str, close_code: int | None) -> None:
        self.frames_refused[reason if reason in self.frames_refused else "other"] += 1
        self.log(
            f"frame_{reason}",
            "WebSocket frame from %s refused: %s (closed with %s)",
            client,
            detail,
            close_code if close_code is not None else "no code",
        )

    def stats(self) -> ConnectionStats:
        return ConnectionStats(
            open=len(self._open),
            waiting=len(self._waiting),
            max_connections=self.limits.max_connections,
            refused=dict(self.refused),
            evicted=self.evicted,
            timed_out=dict(self.timed_out),
            frames_refused=dict(self.frames_refused),
        )
