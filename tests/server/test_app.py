"""The route table of server.app: every documented route (docs/protocol.md) answers with its
documented status and shape, every response carries the security headers, and a malformed body is
refused with the documented error and changes nothing."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from server_helpers import Player, Server, auth, play_randomly, register_toy, seat_named, thread_server


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    register_toy(monkeypatch)
    # Generous limits: this test makes many requests from one address in a short while.
    with thread_server(tmp_path, address_limits=False) as srv:
        yield srv


def secured(response: httpx.Response) -> httpx.Response:
    """Every answer of the app, whatever its route or status, carries the same security headers."""
    headers = response.headers
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["x-frame-options"] == "DENY"
    assert headers["referrer-policy"] == "no-referrer"
    return response


def answer(response: httpx.Response, status: int) -> Any:
    assert response.status_code == status, response.text
    secured(response)
    if response.headers["content-type"].startswith("application/json"):
        return response.json()
    return response.text


def test_every_documented_route_answers(server: Server) -> None:
    with server.http() as http:
        health = answer(http.get("/healthz"), 200)
        assert health["ok"] is True and health["status"] == "ok" and "rooms" in health["checks"]
        assert answer(http.get("/readyz"), 200)["ok"] is True
        metrics = http.get("/metrics")
        assert "conflictology_" in answer(metrics, 200)
        assert metrics.headers["content-type"].startswith("text/plain")
        info = answer(http.get("/api/info"), 200)
        assert {"games", "bots", "default_level", "settings", "reactions", "public_url"} <= set(info)
        assert "toy" in [g["name"] for g in info["games"]]

        made = answer(http.post("/api/rooms", json={"game": "toy", "name": "Host"}), 201)
        code, host = made["code"], made["token"]
        assert made["seat"] == 0 and made["join_url"] == f"/?room={code}"
        listing = answer(http.get("/api/rooms?offset=0&limit=50"), 200)
        assert set(listing) == {"rooms", "total", "offset", "next"}
        room = answer(http.get(f"/api/rooms/{code.lower()}"), 200)  # codes ignore case
        assert room["code"] == code and room["status"] == "lobby"
        patched = answer(
            http.patch(f"/api/rooms/{code}", json={"settings": {"public": True}}, headers=auth(host)), 200
        )
        assert patched["settings"]["public"] is True
        deadline = time.monotonic() + 30  # the listing is built at most once a second: wait for it
        while code not in [r["code"] for r in answer(http.get("/api/rooms"), 200)["rooms"]]:
            assert time.monotonic() < deadline, "the public room never reached the listing"
            time.sleep(0.2)

        joined = answer(http.post(f"/api/rooms/{code}/join", json={"name": "Bob"}), 201)
        assert joined["seat"] == 1
        kicked = answer(
            http.post(f"/api/rooms/{code}/kick", json=seat_named(http, code, 1), headers=auth(host)), 200
        )
        assert len(kicked["seats"]) == 1
        bots = answer(http.post(f"/api/rooms/{code}/bots", json={"count": 1}, headers=auth(host)), 201)
        assert bots == {"seats": [1]}
        claimed = answer(http.post(f"/api/rooms/{code}/claim", json={"token": host}), 201)
        assert claimed == {"seat": 0, "token": host, "name": "Host"}
        table = answer(http.get(f"/api/rooms/{code}/standings"), 200)
        assert table["code"] == code
        reset = answer(http.post(f"/api/rooms/{code}/standings/reset", headers=auth(host)), 200)
        assert reset["code"] == code

        page = http.get(f"/r/{code}")
        assert answer(page, 200) and page.headers["content-type"].startswith("text/html")
        assert answer(http.get("/replay/abc123"), 200)

        player = Player(server, code, host, 0)
        try:
            assert player.wait_for(lambda m: m["type"] == "lobby")["you"] == 0
            started = answer(http.post(f"/api/rooms/{code}/start", headers=auth(host)), 200)
            assert started["status"] == "playing" and started["game_id"] and started["seq"] >= 1
            game_id = started["game_id"]
            live = answer(http.get(f"/api/games/{game_id}"), 200)
            assert live["status"] == "playing" and live["room"] == code
            for tail in ("/replay", "/record.txt", "/recap"):
                refused = answer(http.get(f"/api/games/{game_id}{tail}"), 409)
                assert refused["code"] == "not_over"
            paused = answer(http.post(f"/api/rooms/{code}/pause", headers=auth(host)), 200)
            assert paused["pause"] is not None and set(paused) == {"pause", "deadline", "seq"}
            resumed = answer(http.post(f"/api/rooms/{code}/resume", headers=auth(host)), 200)
            assert resumed["pause"] is None
            # Left and taken back while paused: bots wait while the clocks are stopped, so the bot that
            # stands in for the seat cannot finish the (short) game before the seat is taken back.
            answer(http.post(f"/api/rooms/{code}/pause", headers=auth(host)), 200)
            assert answer(http.post(f"/api/rooms/{code}/leave", headers=auth(host)), 200) == {"left": True}
            back = answer(http.post(f"/api/rooms/{code}/rejoin", headers=auth(host)), 200)
            assert back["seat"] == 0 and back["room"]["code"] == code
            assert answer(http.post(f"/api/rooms/{code}/resume", headers=auth(host)), 200)["pause"] is None
            player.close()  # (a seat that left is let go of: a fresh socket for the seat taken back)
            player = Player(server, code, host, 0)
            play_randomly([player])
        finally:
            player.close()

        over = answer(http.get(f"/api/games/{game_id}"), 200)
        assert over["status"] == "over" and over["id"] == game_id and len(over["final_views"]) == 2
        replay = answer(http.get(f"/api/games/{game_id}/replay"), 200)
        assert replay["id"] == game_id
        recap = answer(http.get(f"/api/games/{game_id}/recap"), 200)
        assert recap["id"] == game_id and recap["game"] == "toy"  # a game without a story of its own
        record = http.get(f"/api/games/{game_id}/record.txt")
        answer(record, 200)
        assert record.headers["content-type"].startswith("text/plain")
        assert record.headers["content-disposition"].startswith('attachment; filename="conflictology-toy-')
        assert game_id in [g["id"] for g in answer(http.get("/api/games"), 200)["games"]]
        rematch = answer(http.post(f"/api/rooms/{code}/rematch", headers=auth(host)), 200)
        assert rematch["status"] == "lobby"


def test_missing_rooms_and_games_are_404_with_their_codes(server: Server) -> None:
    with server.http() as http:
        assert answer(http.get("/api/rooms/ZZZZZZ"), 404)["code"] == "no_room"
        assert answer(http.get("/api/rooms/not-a-code!"), 404)["code"] == "no_room"
        assert answer(http.get("/api/games/abc123"), 404)["code"] == "no_game"
        assert answer(http.get("/api/games/abc123/replay"), 404)["code"] == "no_game"
        assert answer(http.get("/api/games/not-an-id!"), 404) == {"error": "no such game", "code": "no_game"}
        assert answer(http.get("/api/rooms?offset=x"), 400)["code"] == "bad_request"


# A body each route refuses before changing anything: a wrong type, an unknown field, not JSON.
MALFORMED: list[tuple[str, str, Any]] = [
    ("PATCH", "", {"options": 3}),
    ("POST", "/join", {"name": 7}),
    ("POST", "/join", {"name": "Ann", "extra": True}),
    ("POST", "/bots", {"count": "two"}),
    ("POST", "/kick", {"seat": "one"}),
    ("POST", "/claim", {}),
    ("POST", "/start", {"now": True}),
    ("POST", "/rematch", [1]),
    ("POST", "/leave", {"x": 1}),
    ("POST", "/rejoin", {"x": 1}),
    ("POST", "/pause", {"x": 1}),
    ("POST", "/resume", {"x": 1}),
    ("POST", "/standings/reset", {"x": 1}),
    ("POST", "/join", b"{not json"),
]


def test_a_malformed_body_is_a_400_bad_request_and_changes_nothing(server: Server) -> None:
    with server.http() as http:
        refused = answer(http.post("/api/rooms", json={"game": "toy", "name": 5}), 400)
        assert refused["code"] == "bad_request" and refused["error"].startswith("malformed body: ")
        made = answer(http.post("/api/rooms", json={"game": "toy", "name": "Host"}), 201)
        code, host = made["code"], made["token"]
        before = answer(http.get(f"/api/rooms/{code}"), 200)
        for method, tail, body in MALFORMED:
            content = body if isinstance(body, bytes) else json.dumps(body).encode()
            r = http.request(
                method,
                f"/api/rooms/{code}{tail}",
                content=content,
                headers={**auth(host), "content-type": "application/json"},
            )
            got = answer(r, 400)
            assert got["code"] == "bad_request", (method, tail, got)
            assert got["error"].startswith("malformed body: ")
        assert answer(http.get(f"/api/rooms/{code}"), 200) == before


def test_bodies_too_large_or_too_deep_are_refused(server: Server) -> None:
    limit = 64 * 1024
    with server.http() as http:
        made = answer(http.post("/api/rooms", json={"game": "toy", "name": "Host"}), 201)
        code = made["code"]
        before = answer(http.get(f"/api/rooms/{code}"), 200)
        big = json.dumps({"name": "x" * (limit + 1)}).encode()
        # Said by its Content-Length, before it is read.
        refused = answer(http.post(f"/api/rooms/{code}/join", content=big), 413)
        assert refused == {"error": f"bodies are limited to {limit} bytes", "code": "too_large"}

        # Sent in chunks without a length: counted as it is read.
        def chunks() -> Iterator[bytes]:
            for i in range(0, len(big), 4096):
                yield big[i : i + 4096]

        refused = answer(http.post(f"/api/rooms/{code}/join", content=chunks()), 413)
        assert refused["code"] == "too_large"
        deep = b'{"name": ' + b"[" * 65 + b"]" * 65 + b"}"
        assert answer(http.post(f"/api/rooms/{code}/join", content=deep), 400)["code"] == "bad_request"
        assert answer(http.get(f"/api/rooms/{code}"), 200) == before


def test_a_host_action_without_the_hosts_token_is_refused_and_changes_nothing(server: Server) -> None:
    with server.http() as http:
        made = answer(http.post("/api/rooms", json={"game": "toy", "name": "Host"}), 201)
        code = made["code"]
        guest = answer(http.post(f"/api/rooms/{code}/join", json={"name": "Bob"}), 201)["token"]
        before = answer(http.get(f"/api/rooms/{code}"), 200)
        assert answer(http.post(f"/api/rooms/{code}/start"), 401)["code"] == "no_token"
        assert answer(http.post(f"/api/rooms/{code}/start", headers=auth(guest)), 403)["code"] == "not_host"
        assert answer(http.get(f"/api/rooms/{code}"), 200) == before
