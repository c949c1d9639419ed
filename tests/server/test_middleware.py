"""The guard every request passes (middleware.py), around a stand-in application: the Host and
Origin allow-lists, CORS preflights, the body cap, the per-address limits and the security headers
on every answer, refusals included."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from conflictology.server.config import ServerConfig
from conflictology.server.middleware import GuardMiddleware, _csp, _heavy, _names_room


class Client:
    """Requests straight into the ASGI app (no server, no lifespan: the guard needs neither)."""

    def __init__(self, app: ASGIApp, base_url: str = "http://testserver") -> None:
        self.app = app
        self.base_url = base_url

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        async def send() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app)
            async with httpx.AsyncClient(transport=transport, base_url=self.base_url) as http:
                return await http.request(method, path, **kwargs)

        return asyncio.run(send())

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", path, **kwargs)

    def options(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("OPTIONS", path, **kwargs)


def client(**overrides: object) -> Client:
    async def hello(request: Request) -> Response:
        return JSONResponse({"hello": True})

    async def missing(request: Request) -> Response:
        return JSONResponse({"error": "no room", "code": "no_room"}, status_code=404)

    app = Starlette(
        routes=[
            Route("/api/info", hello),
            Route("/api/rooms", hello, methods=["GET", "POST"]),
            Route("/api/rooms/{code}", missing),
        ]
    )
    config = replace(ServerConfig(allowed_hosts=["testserver"]), **overrides)  # type: ignore[arg-type]
    app.add_middleware(GuardMiddleware, config=config)
    return Client(app)


def test_the_csp_names_the_hosts_sockets_only_for_a_plain_host() -> None:
    assert b"connect-src 'self' wss://play.example:8000 ws://play.example:8000;" in _csp("play.example:8000")
    assert b"wss://[::1]:8000" in _csp("[::1]:8000")
    for odd in ["evil'; script-src *", "a b", None, ""]:
        assert b"connect-src 'self';" in _csp(odd)


def test_listings_replays_and_room_paths_are_told_apart() -> None:
    assert _heavy("/api/rooms") and _heavy("/api/games")
    assert _heavy("/api/games/abc/replay") and _heavy("/api/games/abc/record.txt")
    assert not _heavy("/api/games/abc") and not _heavy("/api/rooms/ABC234")
    assert _names_room("/api/rooms/ABC234") and _names_room("/ws/ABC234")
    assert not _names_room("/api/rooms") and not _names_room("/ws/")


def test_every_answer_carries_the_security_headers_and_https_adds_hsts() -> None:
    with client() as http:
        r = http.get("/api/info")
        assert r.status_code == 200
        assert r.headers["x-frame-options"] == "DENY" and r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["referrer-policy"] == "no-referrer"
        assert r.headers["cross-origin-opener-policy"] == "same-origin"
        assert "camera=()" in r.headers["permissions-policy"]
        assert "wss://testserver" in r.headers["content-security-policy"]
        assert "strict-transport-security" not in r.headers
    with Client(client().app, base_url="https://testserver") as https:
        assert https.get("/api/info").headers["strict-transport-security"] == "max-age=31536000"


def test_a_host_not_answered_and_an_origin_not_allowed_are_refused_with_the_headers() -> None:
    with client() as http:
        r = http.get("/api/info", headers={"host": "evil.example"})
        assert r.status_code == 400 and r.json() == {
            "error": "this server does not answer for evil.example",
            "code": "bad_host",
        }
        assert r.headers["x-frame-options"] == "DENY"
        r = http.get("/api/info", headers={"origin": "https://evil.example"})
        assert r.status_code == 403 and r.json()["code"] == "origin_refused"
        assert r.json()["error"] == "origin https://evil.example is not allowed"


def test_an_allowed_origin_gets_cors_and_its_preflight_is_answered_here() -> None:
    with client(allow_origins=["https://friend.example"]) as http:
        r = http.options("/api/rooms", headers={"origin": "https://friend.example"})
        assert r.status_code == 204
        assert r.headers["access-control-allow-origin"] == "https://friend.example"
        assert r.headers["access-control-allow-methods"] == "GET, POST, PATCH, OPTIONS"
        assert r.headers["access-control-allow-headers"] == "authorization, content-type"
        assert r.headers["vary"] == "Origin" and r.headers["access-control-max-age"] == "600"
        r = http.get("/api/info", headers={"origin": "https://friend.example"})
        assert r.status_code == 200 and r.headers["access-control-allow-origin"] == "https://friend.example"
        assert "access-control-allow-origin" not in http.get("/api/info").headers


def test_a_body_said_to_be_too_large_is_refused_before_it_is_read() -> None:
    with client(max_body_bytes=10) as http:
        r = http.post("/api/rooms", content=b"x" * 11)
        assert r.status_code == 413
        assert r.json() == {"error": "bodies are limited to 10 bytes", "code": "too_large"}
        assert http.post("/api/rooms", content=b"x" * 10).status_code == 200


def test_writes_reads_and_room_quota_have_budgets_of_their_own() -> None:
    with client(http_rate_per_second=0.001, http_rate_burst=2, rooms_per_hour=1, rooms_burst=1) as http:
        assert http.post("/api/rooms").status_code == 200
        quota = http.post("/api/rooms")
        assert quota.status_code == 429 and quota.json()["code"] == "room_quota"
        assert int(quota.headers["retry-after"]) >= 1
        limited = http.post("/api/rooms")
        assert limited.status_code == 429 and limited.json()["code"] == "rate_limited"
        assert limited.json()["error"] == "too many requests; slow down"
        assert http.get("/api/info").status_code == 200  # reads are counted apart


def test_the_client_s_files_have_a_wide_budget_of_their_own() -> None:
    # A first visit asks for ~110 files (the page and the installed app's worker): from one router
    # a few first visits must not spend the API's reads, nor the API's reads the visits' files.
    slow = {"http_read_rate_per_second": 0.001, "client_file_rate_per_second": 0.001}
    with client(http_read_burst=3, client_file_burst=12, **slow) as http:
        for path in ("/", "/index.html", "/js/app.js", "/i18n/fr.js") * 3:
            assert http.get(path).status_code != 429, path
        refused = http.get("/style.css")
        assert refused.status_code == 429 and refused.json()["code"] == "rate_limited"
        for _ in range(3):
            assert http.get("/api/info").status_code == 200
        assert http.get("/api/info").status_code == 429
        assert http.get("/metrics").status_code == 429  # the metrics are the API's reads


@pytest.mark.parametrize("on", [True, False])
def test_misses_on_room_codes_are_counted_and_hits_given_back(on: bool) -> None:
    with client(room_guess_burst=2, room_guess_seconds=3600, address_limits=on) as http:
        assert [http.get(f"/api/rooms/ABC23{n}").status_code for n in range(2)] == [404, 404]
        third = http.get("/api/rooms/ABC239")
        if on:
            assert third.status_code == 429 and third.json()["code"] == "too_many_misses"
        else:
            assert third.status_code == 404
