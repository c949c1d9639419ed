"""Who the client is behind a reverse proxy: the address that X-Forwarded-For names, read from the
right, believed only as far as the proxies are trusted.

Each proxy APPENDS the address it saw to X-Forwarded-For (nginx's ``$proxy_add_x_forwarded_for``,
most PaaS routers), so everything left of the nearest proxy's entry was written by someone the server
cannot trust: the client itself may send ``X-Forwarded-For: 1.2.3.4`` and be counted as ``1.2.3.4``.
The client is therefore the rightmost entry that is not a trusted proxy (uvicorn's own middleware
takes the leftmost when every proxy is trusted, ``'*'``: a client could then pick its address and
escape every per-address limit). ``'*'`` here trusts the socket's peer, whatever it is, and no hop
further: the rightmost entry is the client. A value that is not an IP address (``junk0``) is not a
client: the address stops at the hop that sent it (the socket's peer when it is the nearest).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from starlette.types import Scope

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
IP = ipaddress.IPv4Address | ipaddress.IPv6Address

# Bounds on what is read: a header of thousands of hops is not a chain of proxies.
MAX_HOPS = 32
_SCHEMES = {"http": ("http", "ws"), "https": ("https", "wss")}


def parse_ip(text: str) -> IP | None:
    """An address as a proxy writes it (``1.2.3.4``, ``::1``, ``[::1]``, with a port or not), else None."""
    text = text.strip()
    if text.startswith("["):  # [v6]:port
        text = text[1 : text.find("]")] if "]" in text else ""
    elif text.count(":") == 1:  # v4:port
        text = text.split(":", 1)[0]
    try:
        ip = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


class TrustedProxies:
    """The proxies whose X-Forwarded-* headers are believed: addresses and networks, or ``'*'``
    (the socket's peer, whatever it is, and only that hop)."""

    def __init__(self, trusted: Iterable[str]) -> None:
        entries = [t.strip() for t in trusted if t.strip()]
        self.any_peer = "*" in entries
        self.networks: tuple[Network, ...] = tuple(
            ipaddress.ip_network(t, strict=False) for t in entries if t != "*"
        )

    def trusts(self, ip: IP | None) -> bool:
        return ip is not None and any(ip in n for n in self.networks)

    def client(self, peer: str | None, forwarded: str | None) -> str | None:
        """The client's address: the socket's ``peer`` unless it is a trusted proxy; then, from the
        right of ``forwarded`` (X-Forwarded-For), the first entry that is not a trusted proxy. An
        entry that is not an address ends the walk at the hop that wrote it."""
        peer_ip = parse_ip(peer) if peer else None
        if peer_ip is None or not forwarded or not (self.any_peer or self.trusts(peer_ip)):
            return peer
        chosen: IP = peer_ip
        for hop in reversed(forwarded.split(",")[-MAX_HOPS:]):
            ip = parse_ip(hop)
            if ip is None:
                break
            chosen = ip
            if not self.trusts(ip):  # ('*' trusts the peer only, not the hops it names)
                break
        return str(chosen)

    def scheme(self, peer: str | None, proto: str | None, websocket: bool) -> str | None:
        """The scheme the client used (X-Forwarded-Proto from a trusted peer: its last value), else None."""
        peer_ip = parse_ip(peer) if peer else None
        if not proto or peer_ip is None or not (self.any_peer or self.trusts(peer_ip)):
            return None
        schemes = _SCHEMES.get(proto.split(",")[-1].strip().lower())
        return None if schemes is None else schemes[1 if websocket else 0]


def _header(scope: Scope, name: bytes) -> str | None:
    values = [v.decode("latin-1") for k, v in scope.get("headers", []) if k == name]
    # Several header lines are one list (RFC 9110), in order.
    return ",".join(values) if values else None


def apply_forwarded(proxies: TrustedProxies, scope: Scope) -> None:
    """Set the scope's client and scheme from the trusted proxies' headers (in place, so that the
    server's access log names the client too)."""
    client = scope.get("client")
    peer = str(client[0]) if client else None
    address = proxies.client(peer, _header(scope, b"x-forwarded-for"))
    if address is not None and address != peer:
        scope["client"] = (address, 0)
    scheme = proxies.scheme(peer, _header(scope, b"x-forwarded-proto"), scope["type"] == "websocket")
    if scheme is not None:
        scope["scheme"] = scheme
