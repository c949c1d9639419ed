"""What a stranger on the internet may do, bounded per client address (issue 13): guessing room
codes, making rooms, flooding sockets, listing rooms; the Host allow-list and security headers;
names that cannot disguise themselves."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import InvalidStatus

from conflictology.server.rooms import CODE_ALPHABET, CODE_LENGTH
from conflictology.server.security import (
    AddressLimits,
    HostPolicy,
    RateLimits,
    clean_name,
    client_key,
    distinct_name,
)
from server_helpers import Player, make_table, register_toy, thread_server


def raw_handshake(url: str, path: str, host: str) -> bytes:
    """The first bytes a WebSocket handshake with this Host header is answered with."""
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(
            f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        return sock.recv(200)


def missing_code(taken: set[str], n: int) -> str:
    code = (CODE_ALPHABET[n % len(CODE_ALPHABET)] * CODE_LENGTH)[:CODE_LENGTH]
    assert code not in taken
    return code


def test_an_address_guessing_codes_is_refused_every_room_for_a_while(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_toy(monkeypatch)
    with thread_server(tmp_path, room_guess_burst=5, room_guess_seconds=60) as srv, srv.http() as http:
        table = make_table(srv, "toy", humans=1)
        assert http.get(f"/api/rooms/{table.code}").status_code == 200  # a hit costs nothing
        misses = [http.get(f"/api/rooms/{missing_code({table.code}, n)}") for n in range(3)]
        assert [r.status_code for r in misses] == [404, 404, 404]
        # A socket to a room that does not exist is a miss too, and so is a code no server makes.
        with pytest.raises(InvalidStatus) as refused:
            Player(srv, missing_code({table.code}, 7), None, None)
        assert refused.value.response.status_code == 404
        blocked = http.get("/api/rooms/not-a-code!")
        assert blocked.status_code == 404
        # Out of misses: every room, even one that exists, is refused, and for how long is said.
        for path in (f"/api/rooms/{table.code}", f"/api/rooms/{missing_code({table.code}, 9)}"):
            r = http.get(path)
            assert r.status_code == 429 and r.json()["code"] == "too_many_misses"
            assert 1 <= int(r.headers["retry-after"]) <= 60
        with pytest.raises(InvalidStatus) as refused:
            Player(srv, table.code, table.host_token, 0)
        assert refused.value.response.status_code == 429
        # Other routes are not affected.
        assert http.get("/api/info").status_code == 200


def test_room_creation_has_a_quota_per_address_and_the_server_a_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_toy(monkeypatch)
    with thread_server(tmp_path, rooms_burst=3, rooms_per_hour=1) as srv, srv.http() as http:
        made = [http.post("/api/rooms", json={"game": "toy", "name": "A"}) for _ in range(4)]
        assert [r.status_code for r in made] == [201, 201, 201, 429]
        assert made[3].json()["code"] == "room_quota" and int(made[3].headers["retry-after"]) > 60
    (tmp_path / "capped").mkdir()
    with thread_server(tmp_path / "capped", max_rooms=2) as srv, srv.http() as http:
        made = [http.post("/api/rooms", json={"game": "toy", "name": "A"}) for _ in range(3)]
        assert [r.status_code for r in made] == [201, 201, 503]
        assert made[2].json()["code"] == "server_full" and "retry-after" in made[2].headers


def test_the_room_list_is_paged_newest_first_and_shows_only_public_open_rooms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_toy(monkeypatch)
    with thread_server(tmp_path) as srv, srv.http() as http:
        public = [make_table(srv, "toy", humans=1, settings={"public": True}).code for _ in range(5)]
        make_table(srv, "toy", humans=1)  # private: never listed
        time.sleep(1.1)  # the listing is rebuilt at most once a second
        first = http.get("/api/rooms", params={"limit": 2}).json()
        assert first["total"] == 5 and first["next"] == 2
        assert [r["code"] for r in first["rooms"]] == public[::-1][:2]
        codes = [r["code"] for r in first["rooms"]]
        offset = first["next"]
        while offset is not None:
            page = http.get("/api/rooms", params={"limit": 2, "offset": offset}).json()
            codes += [r["code"] for r in page["rooms"]]
            offset = page["next"]
        assert codes == public[::-1]
        assert http.get("/api/rooms", params={"limit": "x"}).status_code == 400
        # A page is never more than 100 rooms, whatever is asked.
        assert len(http.get("/api/rooms", params={"limit": 10_000}).json()["rooms"]) == 5


def test_socket_messages_are_limited_per_address_across_sockets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_toy(monkeypatch)
    config = {"ws_rate_per_second": 1000, "ws_rate_burst": 1000, "ws_address_rate_per_second": 0.5}
    with thread_server(tmp_path, ws_address_burst=10, **config) as srv:
        table = make_table(srv, "toy", humans=1)
        sockets = [Player(srv, table.code, None, None) for _ in range(2)]
        for s in sockets:
            s.next()
        for _ in range(8):
            for s in sockets:
                s.send({"type": "ping"})
        replies = [s.next() for s in sockets for _ in range(8)]
        limited = [m for m in replies if m.get("code") == "rate_limited"]
        # Each socket alone is far below its own limit; together they pass the address's 10.
        assert len(limited) == 6 and sum(1 for m in replies if m["type"] == "pong") == 10
        for s in sockets:
            s.close()


def test_a_seat_keeps_its_newest_tabs_and_tells_the_oldest_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_toy(monkeypatch)
    with thread_server(tmp_path, max_sockets_per_seat=2) as srv:
        table = make_table(srv, "toy", humans=1)
        tabs = []
        for _ in range(3):
            tabs.append(Player(srv, table.code, table.host_token, 0))
            tabs[-1].next()
            time.sleep(0.05)
        assert tabs[0].wait_for(lambda m: m["type"] == "replaced")["message"]
        with pytest.raises(ConnectionError):
            tabs[0].next(timeout=60)
        for tab in tabs[1:]:
            tab.send({"type": "ping"})
            assert tab.wait_for(lambda m: m["type"] == "pong")
            tab.close()


def test_every_response_carries_the_security_headers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    register_toy(monkeypatch)
    with thread_server(tmp_path, room_guess_burst=1) as srv, srv.http() as http:
        for r in (
            http.get("/"),
            http.get("/api/info"),
            http.get("/js/app.js"),
            http.get("/api/rooms/ZZZZZZ"),  # 404
            http.get("/api/rooms/ZZZZZY"),  # 429
            http.post("/api/rooms", json={"game": "nope", "name": "x"}),  # 400
        ):
            csp = r.headers["content-security-policy"]
            assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp, r.url
            assert r.headers["x-content-type-options"] == "nosniff"
            assert r.headers["referrer-policy"] == "no-referrer"
            assert r.headers["x-frame-options"] == "DENY"
            assert "strict-transport-security" not in r.headers  # plain http: HSTS would be a lie


def test_a_dns_rebinding_request_is_refused_by_its_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_toy(monkeypatch)
    with thread_server(tmp_path) as srv:
        port = srv.url.rsplit(":", 1)[1]
        evil = {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}
        with srv.http() as http:
            r = http.post("/api/rooms", json={"game": "toy", "name": "x"}, headers=evil)
            assert r.status_code == 400 and r.json()["code"] == "bad_host"
            assert http.get("/api/info", headers={"Host": "evil.example"}).status_code == 400
            # What a laptop or a LAN game is reached by still works.
            for host in ("localhost", f"127.0.0.1:{port}", "[::1]", "192.168.1.20:8000"):
                assert http.get("/api/info", headers={"Host": host}).status_code == 200, host
        assert raw_handshake(srv.url, "/ws/ABCDEF", "evil.example").startswith(b"HTTP/1.1 400")
        assert raw_handshake(srv.url, "/ws/ABCDEF", "localhost").startswith(b"HTTP/1.1 404")
    with thread_server(tmp_path, allowed_hosts=["play.example"]) as srv, srv.http() as http:
        assert http.get("/api/info", headers={"Host": "play.example"}).status_code == 200
        assert http.get("/api/info", headers={"Host": "other.example"}).status_code == 400
        # (What a health check or a browser on the machine itself sends stays answered.)
        assert http.get("/healthz", headers={"Host": "localhost:8000"}).status_code == 200


def test_names_are_cleaned_and_told_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    register_toy(monkeypatch)
    with thread_server(tmp_path) as srv, srv.http() as http:
        made = http.post("/api/rooms", json={"game": "toy", "name": "Ana\u202e\x00 \t Bel\u200b"}).json()
        code = made["code"]
        assert http.post(f"/api/rooms/{code}/join", json={"name": "ANA bel"}).status_code == 201
        assert http.post(f"/api/rooms/{code}/join", json={"name": "ana BEL"}).status_code == 201
        bad = http.post(f"/api/rooms/{code}/join", json={"name": "\u202e\u2066 \x07"})
        assert bad.status_code == 400 and bad.json()["code"] == "bad_name"
        seats = http.get(f"/api/rooms/{code}").json()["seats"]
        assert [s["name"] for s in seats] == ["Ana Bel", "ANA bel 2", "ana BEL 3"]


def test_clean_name_keeps_what_people_write() -> None:
    assert clean_name("  Jose\u0301 \t María ") == "José María"  # NFC, one space, trimmed
    assert clean_name("Zoë") == "Zoë"
    assert clean_name("李小龙") == "李小龙"
    assert clean_name("👩\u200d👩\u200d👧") == "👩\u200d👩\u200d👧"  # an emoji sequence keeps its joiners
    # (NFC makes "a" + U+0300 one letter, "à"; three more marks stay on it, the rest go.)
    assert clean_name("a\u0300\u0301\u0302\u0303\u0304\u0305b") == "à\u0301\u0302\u0303b"
    assert clean_name("x\u2067y\u2069\u200e") == "xy"
    assert clean_name("\x1b[31mred") == "[31mred"
    assert distinct_name("Bo", ["bo", "BO 2"]) == "Bo 3"
    assert len(distinct_name("x" * 40, ["x" * 40])) == 40


def test_limits_count_ipv6_addresses_by_their_64_prefix() -> None:
    assert client_key("2001:db8:1:2:aaaa::1") == client_key("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert client_key("2001:db8:1:3::1") != client_key("2001:db8:1:2::1")
    assert client_key("::ffff:203.0.113.9") == "203.0.113.9"
    assert client_key("203.0.113.9") == "203.0.113.9"
    limits = RateLimits(1.0, 2.0, max_keys=3)
    assert limits.take("a") and limits.take("a") and not limits.take("a")
    for key in ("b", "c", "d"):  # "a" is the least recently seen: forgotten, in constant time
        limits.take(key)
    assert len(limits._buckets) == 3 and "a" not in limits._buckets


def test_host_policy_defaults_and_lists() -> None:
    default = HostPolicy([], own_names=["mybox", "mybox.local"])
    ours = ("localhost:8000", "a.localhost", "10.0.0.5", "[fe80::1]:80", "mybox", "mybox.local:8000")
    assert all(default.allowed(h) for h in ours)
    assert not any(default.allowed(h) for h in ("evil.example", "localhost.evil.example", "10.0.0.5.nip.io"))
    named = HostPolicy(["play.example", "*.games.example"], own_names=["mybox"])
    assert named.allowed("play.example:443") and named.allowed("eu.games.example")
    assert not named.allowed("games.example.evil") and not named.allowed("mybox")
    # An address literal or localhost is never another site's page: always answered.
    assert named.allowed("127.0.0.1") and named.allowed("localhost")
    assert HostPolicy(["*"]).allowed("anything")


def test_healthz_and_readyz(tmp_path: Path) -> None:
    with thread_server(tmp_path) as srv:
        health = httpx.get(f"{srv.url}/healthz").json()
        assert health["ok"] is True and health["status"] == "ok"
        assert health["checks"] == {"rooms": "ok", "database": "ok"}
        assert httpx.get(f"{srv.url}/readyz").status_code == 200
        assert json.loads(httpx.get(f"{srv.url}/readyz").text)["status"] == "ok"


def test_guesses_made_at_once_cannot_outrun_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Requests that name a room each take a guess before they are answered: twelve held open at
    once (their bodies not sent yet) get no more than the budget of five between them."""
    register_toy(monkeypatch)
    with thread_server(tmp_path, room_guess_burst=5, room_guess_seconds=600) as srv:
        port = int(srv.url.rsplit(":", 1)[1])
        held = []
        for n in range(12):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            code = "ZZZZZ" + CODE_ALPHABET[n]
            head = f"POST /api/rooms/{code}/join HTTP/1.1\r\nHost: localhost\r\nContent-Length: 13\r\n\r\n"
            sock.sendall(head.encode())
            held.append(sock)
        time.sleep(0.5)
        answers = []
        for sock in held:
            sock.sendall(b'{"name":"Al"}')
            answers.append(sock.recv(100).split(b" ")[1])
            sock.close()
        assert answers.count(b"404") == 5 and answers.count(b"429") == 7, answers


def test_a_household_s_many_ipv6_64s_share_a_wider_budget() -> None:
    """Internet providers give a home a /56 or a /48: each /64 has its own budget, and all of a /48
    together sixteen times one."""
    guesses = AddressLimits(rate=0.0001, burst=2, wide=4)
    first = [guesses.take(client_key(f"2001:db8:7:{n:x}::1")) for n in range(6) for _ in range(2)]
    assert first == [True] * 8 + [False] * 4  # 4 /64s of 2 each, then the /48 is spent
    assert guesses.take(client_key("2001:db8:8::1"))  # another /48
    assert guesses.retry_after(client_key("2001:db8:7:9::1")) > 1
    # An IPv4 address has one budget.
    assert [guesses.take("198.51.100.7") for _ in range(3)] == [True, True, False]


def test_one_address_may_watch_only_so_many_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    register_toy(monkeypatch)
    with thread_server(tmp_path, max_spectators_per_address=2) as srv:
        rooms = [make_table(srv, "toy", humans=1) for _ in range(2)]
        watching = [Player(srv, rooms[0].code, None, None), Player(srv, rooms[1].code, None, None)]
        with pytest.raises(InvalidStatus) as refused:
            Player(srv, rooms[1].code, None, None)
        assert refused.value.response.status_code == 429
        # A seat is not a spectator: its player gets in.
        host = Player(srv, rooms[1].code, rooms[1].host_token, 0)
        assert host.next()["type"] == "lobby"
        watching[0].close()
        # One freed, once the server has seen the socket close: a try refused before that is repeated.
        deadline = time.monotonic() + 60
        while True:
            try:
                again = Player(srv, rooms[1].code, None, None)
                break
            except InvalidStatus as early:
                assert early.response.status_code == 429
                assert time.monotonic() < deadline, "the closed socket's place was never freed"
                time.sleep(0.1)
        for p in [*watching, host, again]:
            p.close()


def test_listings_have_a_limit_of_their_own(tmp_path: Path) -> None:
    """The room list and the recent games are polled by a lobby every few seconds: an address asking
    for them hundreds of times a second is refused long before it costs the server anything."""
    with thread_server(tmp_path, listing_rate_per_second=0.5, listing_burst=3) as srv, srv.http() as http:
        statuses = [http.get("/api/rooms").status_code for _ in range(4)]
        assert statuses == [200, 200, 200, 429]
        assert http.get("/api/games").status_code == 429  # the same budget
        assert http.get("/api/info").status_code == 200  # other reads are not affected


def test_a_socket_that_floods_far_past_its_limit_is_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client told to slow down that does not: past 200 refusals in 10 s its socket is closed
    (answering each refused message costs more than the message)."""
    register_toy(monkeypatch)
    with thread_server(tmp_path, ws_rate_per_second=1, ws_rate_burst=5) as srv:
        table = make_table(srv, "toy", humans=1)
        flood = Player(srv, table.code, None, None)
        flood.next()
        with contextlib.suppress(Exception):  # (the server closes it half-way)
            for _ in range(400):
                flood.send({"type": "ping"})
        codes = []
        with pytest.raises(ConnectionError):
            while True:
                codes.append(flood.next(timeout=60).get("code"))
        # What was still in flight towards it may be lost when the connection goes (one loaded CI
        # run read 5 pongs and then the close): the server's counts are the measure.
        assert set(codes) <= {None, "rate_limited", "flooding"}, codes
        with srv.http() as http:
            metrics = http.get("/metrics").text
        assert 'conflictology_refused_messages_total{code="flooding"} 1.0' in metrics
        assert 'conflictology_refused_messages_total{code="rate_limited"} 200.0' in metrics
        # A player who slows down when told is never near it: a fresh socket works.
        calm = Player(srv, table.code, table.host_token, 0)
        calm.next()
        calm.send({"type": "ping"})
        assert calm.wait_for(lambda m: m["type"] == "pong")
        calm.close()
