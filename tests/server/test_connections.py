"""Connections below the application (server/connections.py): requests that do not arrive in time
are dropped, connections are capped per address and in all, slow clients are evicted before players
are refused, the open-file limit is raised at start, and a refused WebSocket frame is one short
log line."""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import re
import resource
import signal
import socket
import struct
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from conflictology.server.connections import ConnectionGuard
from conflictology.server.log_caps import RateCappedLog
from conflictology.server.open_files import default_max_connections
from conflictology.server.security import address_key
from server_helpers import (
    Player,
    Server,
    ServerProcess,
    make_table,
    register_toy,
    start,
    thread_server,
)

HTTP_IMPLEMENTATIONS = ["httptools", "h11"]


# ---- raw clients ------------------------------------------------------------------------------------


def address(server: Server) -> tuple[str, int]:
    host, port = server.url.removeprefix("http://").split(":")
    return host, int(port)


def raw(server: Server, source: str | None = None) -> socket.socket:
    """A plain TCP connection to the server (from ``source``, a loopback address, if given)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if source is not None:
        sock.bind((source, 0))
    sock.connect(address(server))
    return sock


def read_until_closed(sock: socket.socket, timeout: float) -> tuple[bytes, bool]:
    """What the server sent, and whether it closed the connection within ``timeout`` seconds."""
    sock.settimeout(0.1)
    received = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        except OSError:
            return received, True
        if not chunk:
            return received, True
        received += chunk
    return received, False


def until(predicate: Callable[[], bool], timeout: float = 60.0) -> None:
    """Until ``predicate()`` holds: generous (a loaded machine gets there late; a pass is at once)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("the server did not get there in time")
        time.sleep(0.01)


def guard(server: Server) -> ConnectionGuard:
    connections: ConnectionGuard = server.app.state.connections
    return connections


def metric(server: Server, name: str, labels: str = "") -> float:
    text = httpx.get(f"{server.url}/metrics", timeout=10).text
    match = re.search(rf"^{re.escape(name + labels)} (\S+)$", text, re.MULTILINE)
    assert match is not None, f"{name}{labels} not in /metrics"
    return float(match.group(1))


def status_of(response: bytes) -> tuple[int, dict[str, Any]]:
    head, _, body = response.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body) if body else {}


# ---- timeouts -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("http", HTTP_IMPLEMENTATIONS)
def test_headers_dribbled_line_by_line_are_dropped_at_the_header_timeout(tmp_path: Path, http: str) -> None:
    """One deadline from the connection's opening: a new header line every 0.3 s does not reset it."""
    with thread_server(tmp_path, uvicorn_http=http, header_timeout=1.0) as server:
        host, port = address(server)
        sock = raw(server)
        opened = time.monotonic()
        sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: {host}:{port}\r\n".encode())
        received, closed = b"", False
        for line in range(40):  # up to 12 s of dribbling
            try:
                sock.sendall(f"X-Line-{line}: {line}\r\n".encode())
            except OSError:
                closed = True
                break
            received, closed = read_until_closed(sock, 0.3)
            if closed:
                break
        lived = time.monotonic() - opened
        sock.close()
        assert closed, "the server kept a connection whose headers never ended"
        assert 0.9 <= lived < 8.0
        if received:  # a reset may beat the answer to the client; when it arrives, it says why
            assert status_of(received) == (
                408,
                {"error": "the request did not arrive in time", "code": "request_timeout"},
            )
        assert guard(server).timed_out["headers"] == 1
        assert metric(server, "conflictology_connections_timed_out_total", '{part="headers"}') == 1


def test_a_connection_that_sends_nothing_is_dropped_too(tmp_path: Path) -> None:
    with thread_server(tmp_path, header_timeout=0.5) as server:
        sock = raw(server)
        _, closed = read_until_closed(sock, 60.0)
        sock.close()
        assert closed
        assert guard(server).timed_out["headers"] == 1


@pytest.mark.parametrize("http", HTTP_IMPLEMENTATIONS)
def test_a_body_that_stalls_is_dropped_at_the_body_timeout(tmp_path: Path, http: str) -> None:
    with thread_server(tmp_path, uvicorn_http=http, header_timeout=30.0, body_timeout=1.0) as server:
        host, port = address(server)
        sock = raw(server)
        sock.sendall(
            (
                f"POST /api/rooms HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
                'Content-Length: 100\r\n\r\n{"game": "capitol",'
            ).encode()
        )
        sent = time.monotonic()
        received, closed = read_until_closed(sock, 60.0)  # (dropped late on a loaded machine)
        stalled = time.monotonic() - sent
        sock.close()
        assert closed, "the server waited for ever for a body"
        assert stalled >= 0.9  # not before the body timeout (a hang is the 60 s above)
        if received:
            assert status_of(received)[0] == 408
        assert guard(server).timed_out == {"headers": 0, "body": 1, "response": 0}
        with server.http() as client:
            assert client.get("/api/rooms").json()["rooms"] == []  # nothing was created


@pytest.mark.parametrize("http", HTTP_IMPLEMENTATIONS)
def test_a_response_the_client_never_reads_is_dropped_at_the_send_timeout(tmp_path: Path, http: str) -> None:
    """A slow reader holds a socket like a slow sender: a response that stays unread is dropped."""
    from starlette.responses import Response
    from starlette.routing import Route

    async def big(request: Any) -> Response:
        return Response(b"x" * (8 << 20), media_type="application/octet-stream")

    with thread_server(tmp_path, uvicorn_http=http, send_timeout=1.0, header_timeout=30.0) as server:
        server.app.router.routes.insert(0, Route("/big", big))
        host, port = address(server)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect((host, port))
        sock.sendall(f"GET /big HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        until(lambda: guard(server).timed_out["response"] == 1)
        until(lambda: guard(server).open_count == 0)
        sock.close()
        assert guard(server).timed_out == {"headers": 0, "body": 0, "response": 1}


@pytest.mark.parametrize("http", HTTP_IMPLEMENTATIONS)
def test_kept_alive_connections_serve_request_after_request(tmp_path: Path, http: str) -> None:
    """The deadlines follow each request: a kept-alive connection whose requests each arrive in time
    lives longer than one timeout. (The pause between requests is well short of the timeout: a
    loaded machine may take a second more to send the next one.)"""
    with thread_server(tmp_path, uvicorn_http=http, header_timeout=2.0, body_timeout=2.0) as server:
        with httpx.Client(base_url=server.url, timeout=5) as client:
            for _ in range(4):
                r = client.post("/api/rooms", json={"game": "capitol", "name": "Host"})
                assert r.status_code == 201
                time.sleep(0.7)
        assert guard(server).timed_out == {"headers": 0, "body": 0, "response": 0}


# ---- caps -----------------------------------------------------------------------------------------------


def test_the_per_address_cap_refuses_beyond_it_and_frees_on_close(tmp_path: Path) -> None:
    with thread_server(tmp_path, max_connections_per_address=3, header_timeout=30.0) as server:
        until(lambda: guard(server).open_count == 0)
        held = [raw(server, "127.0.0.1") for _ in range(3)]
        until(lambda: guard(server).open_from("127.0.0.1") == 3)
        refused = raw(server, "127.0.0.1")
        received, closed = read_until_closed(refused, 5.0)
        refused.close()
        assert closed
        if received:
            assert status_of(received)[0] == 429
            assert status_of(received)[1]["code"] == "too_many_connections"
        # Another address is not held to this one's count.
        with httpx.Client(
            base_url=server.url, transport=httpx.HTTPTransport(local_address="127.0.0.2")
        ) as other:
            assert other.get("/healthz").status_code == 200
        held.pop().close()
        until(lambda: guard(server).open_from("127.0.0.1") == 2)
        with server.http() as client:
            assert client.get("/healthz").status_code == 200
        for sock in held:
            sock.close()
        assert guard(server).refused["address_cap"] == 1
        assert metric(server, "conflictology_connections_refused_total", '{reason="address_cap"}') == 1


def test_an_exempt_address_is_not_held_to_the_per_address_cap(tmp_path: Path) -> None:
    with thread_server(
        tmp_path, max_connections_per_address=1, connection_cap_exempt=["127.0.0.0/30"], header_timeout=30.0
    ) as server:
        held = [raw(server, "127.0.0.1") for _ in range(3)]
        with server.http() as client:
            assert client.get("/healthz").status_code == 200
        for sock in held:
            sock.close()
        assert guard(server).refused["address_cap"] == 0


def test_ipv6_clients_are_counted_by_their_64() -> None:
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:bbbb::9") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key("::ffff:192.0.2.7") == "192.0.2.7"
    assert address_key("192.0.2.7") == "192.0.2.7"
    assert address_key(None) is None and address_key("unix-socket") is None


def test_the_default_cap_keeps_files_for_the_server_itself() -> None:
    assert default_max_connections(1024) == 896
    assert 60_000 < default_max_connections(65_536) < 65_536


def test_at_the_cap_slow_clients_are_evicted_and_a_player_plays_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At the total cap a new connection evicts the one that has waited longest for its request;
    the players' WebSockets are never evicted: a player still plays a move and gets its state."""
    register_toy(monkeypatch)
    with thread_server(
        tmp_path, max_connections=6, max_connections_per_address=0, header_timeout=60.0
    ) as server:
        table = make_table(server, "toy", humans=2, settings={"timers": False})
        players = [Player(server, table.code, table.tokens[seat], seat) for seat in (0, 1)]
        start(table)
        first = players[0].wait_for(lambda m: m["type"] == "state" and bool(m["legal"]))
        until(lambda: guard(server).open_count == 2)
        host, port = address(server)
        slow = []
        for i in range(8):  # 4 fill the cap, each of the next 4 evicts the oldest slow one
            sock = raw(server)
            sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: {host}:{port}\r\nX-Slow: {i}\r\n".encode())
            slow.append(sock)
            admitted = 3 + i
            until(lambda: guard(server).open_count + guard(server).evicted == admitted)  # noqa: B023
        until(lambda: guard(server).evicted == 4)
        for sock in slow[:4]:
            received, closed = read_until_closed(sock, 5.0)
            assert closed
            if received:
                assert status_of(received) == (
                    503,
                    {"error": "the server needed this connection; retry", "code": "server_busy"},
                )
        assert guard(server).open_count == 6
        # The players play on.
        players[0].send({"type": "act", "action": first["legal"][0], "seq": first["seq"]})
        moved = players[0].wait_for(lambda m: m["type"] == "state" and m["seq"] > first["seq"])
        assert moved["view"]["players"][0]["played"] == [first["legal"][0]["card"]]
        players[1].wait_for(lambda m: m["type"] == "state" and m["seq"] == moved["seq"])
        # A fresh request gets in too (it evicts the next slow one).
        with server.http() as client:
            assert client.get(f"/api/rooms/{table.code}").status_code == 200
        assert guard(server).evicted == 5
        until(lambda: guard(server).open_count == 5)
        assert metric(server, "conflictology_connections_evicted_total") == 5
        for sock in slow:
            sock.close()
        for p in players:
            p.close()


def test_at_a_cap_of_only_players_a_new_connection_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_toy(monkeypatch)
    with thread_server(tmp_path, max_connections=2, max_connections_per_address=0) as server:
        table = make_table(server, "toy", humans=2)
        players = [Player(server, table.code, table.tokens[seat], seat) for seat in (0, 1)]
        until(lambda: guard(server).open_count == 2)
        refused = raw(server)
        received, closed = read_until_closed(refused, 5.0)
        refused.close()
        assert closed
        if received:
            assert status_of(received) == (
                503,
                {"error": "the server has too many connections; retry shortly", "code": "server_busy"},
            )
        assert guard(server).refused["server_cap"] == 1 and guard(server).evicted == 0
        players[0].send({"type": "ping"})
        assert players[0].wait_for(lambda m: m["type"] == "pong")
        for p in players:
            p.close()


@pytest.mark.parametrize("http", HTTP_IMPLEMENTATIONS)
def test_a_websocket_is_counted_once_across_its_upgrade_and_released_when_it_closes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, http: str
) -> None:
    register_toy(monkeypatch)
    with thread_server(tmp_path, uvicorn_http=http, max_connections_per_address=1) as server:
        table = make_table(server, "toy", humans=2)
        until(lambda: guard(server).open_count == 0)
        player = Player(server, table.code, table.tokens[0], 0)
        player.next()  # the room as it is: the socket is open
        stats = guard(server).stats()
        assert (stats.open, stats.waiting) == (1, 0)
        assert guard(server).open_from("127.0.0.1") == 1
        # It holds the address's only slot: another connection is refused ...
        refused = raw(server)
        assert read_until_closed(refused, 5.0)[1]
        refused.close()
        # ... until it closes.
        player.close()
        until(lambda: guard(server).open_count == 0)
        with server.http() as client:
            assert client.get("/healthz").status_code == 200


# ---- the open-file limit and shutdown --------------------------------------------------------------------


def _soft_open_files(pid: int) -> int:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            return int(line.split()[3])
    raise AssertionError("no open-file limit in /proc")


@pytest.mark.skipif(not Path("/proc/self/limits").exists(), reason="reads /proc")
def test_serve_raises_its_open_file_limit_and_caps_connections_below_it(tmp_path: Path) -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard <= 1024:
        pytest.skip("the hard open-file limit leaves nothing to raise")
    expected = 65_536 if hard == resource.RLIM_INFINITY else min(hard, 65_536)
    proc = ServerProcess(f"sqlite:///{tmp_path / 'db.sqlite3'}", None, open_files=1024)
    try:
        assert _soft_open_files(proc.proc.pid) == expected
        assert metric(proc.server, "conflictology_max_connections") == default_max_connections(expected)
    finally:
        proc.stop()


def test_sigterm_with_open_websockets_and_a_stalled_request_exits_promptly(tmp_path: Path) -> None:
    """uvicorn waited for every request to finish: one whose body never came held SIGTERM for good."""
    proc = ServerProcess(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    stalled = None
    try:
        table = make_table(proc.server, "capitol", humans=2)
        players = [Player(proc.server, table.code, table.tokens[seat], seat) for seat in (0, 1)]
        for p in players:
            p.next()
        stalled = raw(proc.server)
        stalled.sendall(
            b"POST /api/rooms HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n{"
        )
        time.sleep(0.3)  # the application is reading the body
        proc.proc.send_signal(signal.SIGTERM)
        proc.proc.wait(timeout=15)  # a hang, not a speed, is what this bounds (it takes about 3 s)
        # uvicorn raises the signal it caught again once it has shut down.
        assert proc.proc.returncode in (0, -signal.SIGTERM)
        for p in players:
            p.close()
    finally:
        if stalled is not None:
            stalled.close()
        proc.kill()


# ---- refused WebSocket frames ------------------------------------------------------------------------------


def ws_handshake(server: Server, path: str) -> socket.socket:
    host, port = address(server)
    sock = raw(server)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    head = b""
    sock.settimeout(10)
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock


def frame(opcode: int, payload: bytes, masked: bool = True) -> bytes:
    length = len(payload)
    mask_bit = 0x80 if masked else 0
    if length < 126:
        head = struct.pack("!BB", 0x80 | opcode, mask_bit | length)
    elif length < 65536:
        head = struct.pack("!BBH", 0x80 | opcode, mask_bit | 126, length)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, mask_bit | 127, length)
    if not masked:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def close_code(received: bytes) -> int | None:
    """The code of the server's close frame at the end of what it sent (unmasked, short)."""
    at = received.rfind(b"\x88")
    if at < 0 or len(received) < at + 4:
        return None
    code: int = struct.unpack("!H", received[at + 2 : at + 4])[0]
    return code


@contextlib.contextmanager
def captured_logs(caplog: pytest.LogCaptureFixture) -> Iterator[list[logging.LogRecord]]:
    # uvicorn's loggers stop at "uvicorn" (it does not propagate to the root logger, where the
    # capture listens): listen there too, once, so that each record is seen once.
    uvicorn_logger = logging.getLogger("uvicorn")
    uvicorn_logger.addHandler(caplog.handler)
    caplog.set_level(logging.INFO)
    logging.getLogger("uvicorn.error").error("control")
    logging.getLogger("conflictology.server").error("control")
    assert [r.getMessage() for r in caplog.records] == ["control", "control"]
    caplog.clear()
    try:
        yield caplog.records
    finally:
        uvicorn_logger.removeHandler(caplog.handler)


def quiet(record: logging.LogRecord) -> bool:
    """uvicorn's own line for each socket accepted or opened: not about the frame."""
    message = record.getMessage()
    return "[accepted]" in message or message in ("connection open", "connection closed")


MALFORMED = {
    "invalid_utf8": (frame(1, b'{"type": "ping", "x": "\xff\xfe"}'), 1007, "UTF-8"),
    "bad_opcode": (frame(3, b"x"), 1002, "invalid opcode"),
    "unmasked": (frame(1, b'{"type": "ping"}', masked=False), 1002, "incorrect masking"),
    "oversize": (frame(2, b"x" * 40_000), 1009, "larger than"),
}


@pytest.mark.parametrize("kind", list(MALFORMED))
def test_a_malformed_frame_closes_its_socket_with_one_short_line_and_no_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, kind: str
) -> None:
    data, code, words = MALFORMED[kind]
    with thread_server(tmp_path) as server:
        table = make_table(server, "capitol", humans=2)
        with captured_logs(caplog) as records:
            sock = ws_handshake(server, f"/ws/{table.code}?token={table.tokens[0]}")
            sock.sendall(data)
            received, closed = read_until_closed(sock, 10.0)
            sock.close()
            until(lambda: guard(server).open_count == 0)
            lines = [r for r in records if not quiet(r)]
        assert closed and close_code(received) == code
        assert len(lines) == 1, [r.getMessage() for r in lines]
        line = lines[0]
        assert words in line.getMessage() and "\n" not in line.getMessage() and len(line.getMessage()) < 160
        assert line.levelno == logging.WARNING and line.exc_info is None
        reason = {"bad_opcode": "protocol_error", "unmasked": "protocol_error", "oversize": "too_big"}.get(
            kind, kind
        )
        assert metric(server, "conflictology_frames_refused_total", f'{{reason="{reason}"}}') == 1
        with server.http() as client:
            assert client.get("/healthz").status_code == 200


def test_repeated_invalid_utf8_frames_log_one_line_and_count_every_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = MALFORMED["invalid_utf8"][0]
    with thread_server(tmp_path) as server:
        table = make_table(server, "capitol", humans=2)
        with captured_logs(caplog) as records:
            for _ in range(5):
                sock = ws_handshake(server, f"/ws/{table.code}?token={table.tokens[0]}")
                sock.sendall(data)
                assert read_until_closed(sock, 10.0)[1]
                sock.close()
            until(lambda: guard(server).open_count == 0)
            lines = [r for r in records if not quiet(r)]
        assert [r.levelno for r in lines] == [logging.WARNING]
        assert all(r.exc_info is None and r.levelno < logging.ERROR for r in records)
        assert guard(server).frames_refused["invalid_utf8"] == 5
        # A text frame that is valid UTF-8 is still read and answered.
        player = Player(server, table.code, table.tokens[0], 0)
        player.send({"type": "ping", "note": "é ✓"})
        assert player.wait_for(lambda m: m["type"] in ("pong", "error"))["type"] in ("pong", "error")
        player.close()


def test_malformed_http_requests_log_one_line_in_ten_seconds(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """uvicorn's own warning for a malformed request, once per connection, is capped the same way."""
    with thread_server(tmp_path) as server, captured_logs(caplog) as records:
        for _ in range(5):
            sock = raw(server)
            sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
            received, closed = read_until_closed(sock, 10.0)
            sock.close()
            assert closed and received.startswith(b"HTTP/1.1 400")
        until(lambda: guard(server).open_count == 0)
        lines = [r.getMessage() for r in records if not quiet(r)]
    assert lines == ["Invalid HTTP request received."]


def test_the_rate_cap_says_how_many_lines_it_left_out(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    lines = RateCappedLog(logging.getLogger("conflictology.test"), interval=10.0, clock=lambda: now[0])
    caplog.set_level(logging.WARNING, logger="conflictology.test")
    assert lines("utf8", "refused %s", "a")
    for _ in range(4):
        now[0] += 1.0
        assert not lines("utf8", "refused %s", "b")
    assert lines("opcode", "refused %s", "c")  # another kind has its own allowance
    now[0] += 10.0
    assert lines("utf8", "refused %s", "d")
    assert [r.getMessage() for r in caplog.records] == [
        "refused a",
        "refused c",
        "refused d (4 more like it since the last such line)",
    ]
