"""security.py on its own: tokens and their hashes, the address keys limits count under, the Host
and Origin allow-lists, the token buckets (on a clock the test moves), and names."""

from __future__ import annotations

import asyncio

import pytest

from conflictology.server import security
from conflictology.server.security import (
    AddressLimits,
    Budget,
    HostPolicy,
    OriginPolicy,
    RateLimits,
    TokenBucket,
    address_key,
    clean_name,
    client_key,
    distinct_name,
    hash_token,
    new_token,
    same_hash,
    wide_key,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(security.time, "monotonic", fake)
    return fake


# ---- tokens --------------------------------------------------------------------------------------


def test_tokens_are_192_bit_url_safe_and_fresh_each_time() -> None:
    tokens = {new_token() for _ in range(200)}
    assert len(tokens) == 200
    for token in tokens:
        assert len(token) == 32  # 24 bytes in URL-safe base64, no padding
        assert set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def test_a_token_is_kept_as_its_sha256_and_compared_by_hash() -> None:
    token = new_token()
    kept = hash_token(token)
    assert kept == hash_token(token) and len(kept) == 64 and token not in kept
    assert same_hash(kept, hash_token(token))
    assert not same_hash(kept, hash_token(token + "x"))
    # A lone surrogate (what a JSON body may carry) is hashed, not an error.
    assert len(hash_token("\ud800")) == 64


# ---- addresses -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "key"),
    [
        ("203.0.113.7", "203.0.113.7"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"),
        ("::ffff:203.0.113.7", "203.0.113.7"),
        ("fe80::1%eth0", "fe80::/64"),
        ("unix-socket", None),
        ("", None),
        (None, None),
    ],
)
def test_an_address_counts_as_its_ipv4_or_its_ipv6_64(host: str | None, key: str | None) -> None:
    assert address_key(host) == key


def test_client_key_falls_back_to_the_host_then_to_a_question_mark() -> None:
    assert client_key("2001:db8::5") == "2001:db8::/64"
    assert client_key("testclient") == "testclient"
    assert client_key(None) == "?"
    assert client_key("") == "?"


def test_an_ipv6_64_belongs_to_its_48_and_nothing_else_has_a_wider_key() -> None:
    assert wide_key("2001:db8:1:2::/64") == "2001:db8:1::/48"
    assert wide_key("2001:db8:1:ff00::/64") == "2001:db8:1::/48"
    assert wide_key("203.0.113.7") is None
    assert wide_key("?") is None


# ---- Host and Origin -----------------------------------------------------------------------------


def test_hosts_listed_suffixes_local_names_and_ip_literals_are_answered() -> None:
    policy = HostPolicy(["play.example", "*.games.example"], own_names=["laptop"])
    for host in [
        "play.example",
        "PLAY.example.:8000",
        "a.games.example",
        "localhost:8000",
        "x.localhost",
        "127.0.0.1:8000",
        "[::1]:8000",
        None,  # HTTP/1.0 without a Host
    ]:
        assert policy.allowed(host), host
    for host in ["evil.example", "games.example", "laptop", "play.example.evil"]:
        assert not policy.allowed(host), host


def test_with_no_host_listed_the_machines_own_names_are_answered_and_star_answers_all() -> None:
    own = HostPolicy([], own_names=["laptop", "laptop.local"])
    assert own.allowed("laptop:8000") and own.allowed("laptop.local")
    assert not own.allowed("evil.example")
    assert HostPolicy(["*"]).allowed("anything.example")


def test_a_host_header_is_named_without_its_port() -> None:
    assert HostPolicy.name_of("Example.COM:8080") == "example.com"
    assert HostPolicy.name_of("[2001:db8::1]:443") == "[2001:db8::1]"
    assert HostPolicy.name_of("2001:db8::1") == "2001:db8::1"  # a bare IPv6 literal has no port


def test_origins_own_listed_and_extension_are_allowed_others_refused() -> None:
    policy = OriginPolicy(["https://friend.example/"])
    assert policy.allowed(None, "play.example")  # a program, not a browser
    assert policy.allowed("https://play.example", "play.example")
    assert policy.allowed("http://PLAY.example:8000", "play.example:8000")
    assert policy.allowed("https://friend.example", "play.example")
    assert policy.allowed("chrome-extension://abcdef", "play.example")
    assert not policy.allowed("https://evil.example", "play.example")
    assert not policy.allowed("https://play.example", None)
    assert not OriginPolicy(allow_extensions=False).allowed("chrome-extension://abcdef", "x")
    assert OriginPolicy(["*"]).allowed("https://evil.example", "play.example")


# ---- rate limits ---------------------------------------------------------------------------------


def test_a_bucket_allows_its_burst_then_its_rate(clock: Clock) -> None:
    bucket = TokenBucket(rate=2, burst=3)
    assert [bucket.take() for _ in range(4)] == [True, True, True, False]
    assert bucket.retry_after() == 1
    clock.now += 0.5  # one more at 2 a second
    assert bucket.take() and not bucket.take()
    clock.now += 100  # never more than the burst
    assert [bucket.take() for _ in range(4)] == [True, True, True, False]


def test_a_refund_gives_one_back_but_never_past_the_burst(clock: Clock) -> None:
    bucket = TokenBucket(rate=1, burst=2)
    assert bucket.take() and bucket.take() and not bucket.take()
    bucket.refund()
    assert bucket.take() and not bucket.take()
    full = TokenBucket(rate=1, burst=2)
    full.refund()
    assert [full.take() for _ in range(3)] == [True, True, False]


def test_retry_after_is_whole_seconds_and_an_hour_for_a_closed_bucket(clock: Clock) -> None:
    slow = TokenBucket(rate=0.1, burst=1)
    assert slow.retry_after() == 0
    assert slow.take() and slow.retry_after() == 10
    clock.now += 9.5
    assert slow.retry_after() == 1
    closed = TokenBucket(rate=0, burst=1)
    assert closed.take() and not closed.take() and closed.retry_after() == 3600


def test_rate_limits_keep_a_bucket_per_key_and_forget_the_least_recent(clock: Clock) -> None:
    limits = RateLimits(rate=1, burst=1, max_keys=2)
    assert limits.take("a") and not limits.take("a")
    assert limits.take("b") and limits.retry_after("a") == 1
    assert not limits.take("a")  # "a" seen again: "b" is now the least recent
    assert limits.take("c")  # pushes "b" out, keeps "a"
    assert not limits.take("a")
    assert limits.take("b")  # forgotten, so a full bucket again
    assert limits.retry_after("never-seen") == 0
    limits.refund("never-seen")  # nothing to give back to: no bucket made
    assert "never-seen" not in limits._buckets


def test_rate_limits_at_rate_zero_are_off() -> None:
    off = RateLimits(rate=0, burst=1)
    assert not off.enabled
    assert all(off.take("a") for _ in range(100))


def test_an_ipv6_household_shares_one_wider_budget_over_its_64s(clock: Clock) -> None:
    limits = AddressLimits(rate=1, burst=2, wide=2)  # each /64: 2; the /48: 4
    keys = [client_key(f"2001:db8:1:{n:x}::1") for n in range(4)]
    taken = [limits.take(key) for key in keys for _ in range(2)]
    assert taken == [True, True, True, True, False, False, False, False]
    # The /64 refused by the wider budget was not charged for it.
    limits.refund(keys[0])
    assert limits.take(keys[2])
    assert limits.retry_after(keys[3]) >= 1
    # An IPv4 address has no wider budget.
    assert all(limits.take("203.0.113.9") for _ in range(2)) and not limits.take("203.0.113.9")


def test_a_process_own_budget_says_how_long_to_wait(clock: Clock) -> None:
    async def main() -> None:
        budget = Budget(rate=0.5, burst=1)
        assert await budget.take("203.0.113.1") is None
        assert await budget.take("203.0.113.1") == 2
        await budget.refund("203.0.113.1")
        assert await budget.take("203.0.113.1") is None

    asyncio.run(main())


# ---- names ---------------------------------------------------------------------------------------


def test_a_name_loses_controls_and_format_characters_but_keeps_emoji_joiners() -> None:
    assert clean_name("  Ana\u202e\u200b  \t Lu\x00cía ") == "Ana Lucía"
    assert clean_name("Cafe\u0301") == "Café"  # NFC
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    assert clean_name(family) == family
    assert clean_name("\u200b\u202e") == ""


def test_a_name_keeps_at_most_three_marks_per_letter() -> None:
    zalgo = "q" + "\u0301\u0302\u0303\u0304\u0305" + "b"  # (no q has a precomposed mark)
    assert clean_name(zalgo) == "q\u0301\u0302\u0303b"


def test_a_taken_name_gets_the_first_free_number_within_the_limit() -> None:
    assert distinct_name("Ana", ["Bo"]) == "Ana"
    assert distinct_name("Ana", ["ana"]) == "Ana 2"
    assert distinct_name("Ana", ["Ana", "ANA 2", "Ana 3"]) == "Ana 4"
    long = "x" * 40
    named = distinct_name(long, [long], limit=40)
    assert named == "x" * 38 + " 2" and len(named) == 40
