"""The client's address behind proxies (issue 25): the rightmost X-Forwarded-For entry that is not a
trusted proxy; what a client writes to the left of its proxy's entry never counts; junk ends the walk."""

from __future__ import annotations

import pytest

from conflictology.server.proxies import TrustedProxies, apply_forwarded, parse_ip

LOCAL = TrustedProxies(["127.0.0.1", "::1"])


@pytest.mark.parametrize(
    ("forwarded", "client"),
    [
        # nginx appending: the client wrote the left part, the proxy added what it saw.
        ("203.0.113.7", "203.0.113.7"),
        ("1.2.3.4, 203.0.113.7", "203.0.113.7"),
        ("1.2.3.4,203.0.113.7", "203.0.113.7"),
        ("  1.2.3.4 ,   203.0.113.7  ", "203.0.113.7"),
        ("2001:db8::1", "2001:db8::1"),
        ("1.2.3.4, [2001:db8::1]:4711", "2001:db8::1"),
        ("1.2.3.4, 203.0.113.7:4711", "203.0.113.7"),
        ("::ffff:198.51.100.2", "198.51.100.2"),
        # A trusted hop named in the header is skipped: the client is behind it.
        ("203.0.113.7, 127.0.0.1", "203.0.113.7"),
        # Junk from the trusted proxy: the proxy itself (the socket's peer) counts.
        ("junk0", "127.0.0.1"),
        ("203.0.113.7, junk1", "127.0.0.1"),
        ("", "127.0.0.1"),
        # Junk to the left of a real entry is the client's own writing, never read.
        ("junk0, 203.0.113.7", "203.0.113.7"),
    ],
)
def test_the_client_is_the_rightmost_untrusted_address(forwarded: str, client: str) -> None:
    assert LOCAL.client("127.0.0.1", forwarded) == client


def test_an_untrusted_peer_is_the_client_whatever_it_forwards() -> None:
    assert LOCAL.client("192.0.2.9", "203.0.113.7") == "192.0.2.9"
    assert LOCAL.client("192.0.2.9", None) == "192.0.2.9"
    assert LOCAL.client(None, "203.0.113.7") is None  # (a Unix socket: nothing to read)


def test_trusted_networks_and_chains_of_proxies() -> None:
    platform = TrustedProxies(["10.0.0.0/8", "fd00::/8"])
    # The platform's router, then a load balancer, both in its networks: the client is left of them.
    assert platform.client("10.1.2.3", "6.6.6.6, 198.51.100.4, 10.9.9.9") == "198.51.100.4"
    assert platform.client("fd00::5", "6.6.6.6, 2001:db8::4, fd00::9") == "2001:db8::4"
    # Every hop trusted: the furthest one is the client.
    assert platform.client("10.1.2.3", "10.0.0.1, 10.0.0.2") == "10.0.0.1"


def test_a_star_trusts_the_peer_for_one_hop_only() -> None:
    star = TrustedProxies(["*"])
    assert star.client("192.0.2.1", "6.6.6.6, 7.7.7.7, 198.51.100.4") == "198.51.100.4"
    assert star.client("192.0.2.1", "6.6.6.6, junk") == "192.0.2.1"
    assert star.client("192.0.2.1", "junk0") == "192.0.2.1"


def test_a_huge_header_is_read_only_near_its_end() -> None:
    header = ", ".join(["127.0.0.1"] * 10_000)
    assert LOCAL.client("127.0.0.1", header) == "127.0.0.1"


def test_parse_ip_takes_what_proxies_write_and_nothing_else() -> None:
    assert str(parse_ip("[::1]:80")) == "::1"
    assert str(parse_ip("1.2.3.4:80")) == "1.2.3.4"
    assert parse_ip("junk") is None and parse_ip("1.2.3.4.5") is None and parse_ip("[::1") is None


def test_the_scope_gets_the_client_and_scheme_of_a_trusted_proxy_only() -> None:
    headers = [(b"x-forwarded-for", b"6.6.6.6"), (b"x-forwarded-for", b"203.0.113.7"),
               (b"x-forwarded-proto", b"https")]  # fmt: skip
    scope = {"type": "websocket", "client": ("127.0.0.1", 5000), "scheme": "ws", "headers": headers}
    apply_forwarded(LOCAL, scope)
    assert scope["client"] == ("203.0.113.7", 0) and scope["scheme"] == "wss"
    scope = {"type": "http", "client": ("192.0.2.9", 5000), "scheme": "http", "headers": headers}
    apply_forwarded(LOCAL, scope)
    assert scope["client"] == ("192.0.2.9", 5000) and scope["scheme"] == "http"
    scope = {"type": "http", "client": ("127.0.0.1", 1), "scheme": "http",
             "headers": [(b"x-forwarded-proto", b"gopher")]}  # fmt: skip
    apply_forwarded(LOCAL, scope)
    assert scope["scheme"] == "http"
