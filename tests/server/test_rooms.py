"""The room layer over HTTP: creating, joining, host powers, options, the lobby contract, Origin
checks and limits — against a real uvicorn on 127.0.0.1 (a throwaway game keeps it fast)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import InvalidStatus

from conflictology.server.rooms import (
    CODE_ALPHABET,
    CODE_LENGTH,
    MAX_PAST_GAMES,
    Room,
    RoomError,
    RoomStatus,
    check_options_safe,
)
from room_helpers import capitol_room
from server_helpers import (
    Player,
    Server,
    auth,
    eventually,
    make_table,
    register_toy,
    seat_named,
    start,
    thread_server,
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with pytest.MonkeyPatch.context() as mp:
        register_toy(mp)
        with thread_server(
            tmp_path_factory.mktemp("rooms"), allow_origins=["https://friends.example"]
        ) as srv:
            yield srv


def test_create_join_and_room_info_never_shows_a_token(server: Server) -> None:
    with server.http() as http:
        r = http.post("/api/rooms", json={"game": "toy", "name": "Ada", "settings": {"public": True}})
        assert r.status_code == 201
        body = r.json()
        code, host_token = body["code"], body["token"]
        assert len(code) == CODE_LENGTH and set(code) <= set(CODE_ALPHABET)
        assert not set(code) & set("0O1I")
        assert body["seat"] == 0 and body["join_url"] == f"/?room={code}"
        assert len(host_token) >= 32
        r = http.post(f"/api/rooms/{code.lower()}/join", json={"name": "Bob"})
        assert r.status_code == 201 and r.json()["seat"] == 1
        bob = r.json()["token"]
        assert bob != host_token
        info = http.get(f"/api/rooms/{code}").json()
        assert info["status"] == "lobby" and info["game"] == "toy"
        assert [(s["seat"], s["name"], s["host"], s["bot"]) for s in info["seats"]] == [
            (0, "Ada", True, False),
            (1, "Bob", False, False),
        ]
        text = http.get(f"/api/rooms/{code}").text
        assert host_token not in text and bob not in text
        assert code in [room["code"] for room in http.get("/api/rooms").json()["rooms"]]


def test_private_rooms_are_not_listed(server: Server) -> None:
    table = make_table(server, "toy", humans=1)
    with server.http() as http:
        assert table.code not in [room["code"] for room in http.get("/api/rooms").json()["rooms"]]
        assert http.get(f"/api/rooms/{table.code}").status_code == 200


def test_errors_have_the_contract_statuses_and_change_nothing(server: Server) -> None:
    table = make_table(server, "toy", humans=2)
    code = table.code
    with server.http() as http:
        before = http.get(f"/api/rooms/{code}").json()
        cases = [
            (http.post("/api/rooms", json={"game": "nope", "name": "x"}), 400, "unknown_game"),
            (
                http.post("/api/rooms", json={"game": "toy", "name": "x", "options": {"cards": 9}}),
                400,
                "bad_options",
            ),
            (
                http.post("/api/rooms", json={"game": "toy", "name": "x", "options": {"colour": 1}}),
                400,
                "bad_options",
            ),
            (http.post("/api/rooms", json={"game": "toy"}), 400, "bad_request"),
            (http.post("/api/rooms", content=b"{not json"), 400, "bad_request"),
            (http.post("/api/rooms", json={"game": "toy", "name": "x", "extra": 1}), 400, "bad_request"),
            (http.post("/api/rooms", json={"game": "toy", "name": ""}), 400, "bad_request"),
            (
                http.post("/api/rooms", json={"game": "toy", "name": "x", "settings": {"turn_seconds": -5}}),
                400,
                "bad_request",
            ),
            (http.post(f"/api/rooms/{code}/bots", json={"count": 1}), 401, "no_token"),
            (
                http.post(f"/api/rooms/{code}/bots", json={"count": 1}, headers=auth("guess")),
                401,
                "bad_token",
            ),
            (
                http.post(f"/api/rooms/{code}/bots", json={"count": 1}, headers=auth(table.tokens[1])),
                403,
                "not_host",
            ),
            (http.post(f"/api/rooms/{code}/start", headers=auth(table.tokens[1])), 403, "not_host"),
            (
                http.post(
                    f"/api/rooms/{code}/bots",
                    json={"count": 1, "level": "zz"},
                    headers=auth(table.host_token),
                ),
                400,
                "unknown_level",
            ),
            (
                http.post(
                    f"/api/rooms/{code}/bots",
                    json={"count": 3, "level": "random"},
                    headers=auth(table.host_token),
                ),
                409,
                "full",
            ),
            (
                http.post(f"/api/rooms/{code}/kick", json={"seat": 7}, headers=auth(table.host_token)),
                400,
                "seat_id_needed",
            ),
            (
                http.post(
                    f"/api/rooms/{code}/kick", json=seat_named(http, code, 0), headers=auth(table.host_token)
                ),
                400,
                "bad_seat",
            ),
            (
                http.patch(
                    f"/api/rooms/{code}", json={"options": {"cards": 0}}, headers=auth(table.host_token)
                ),
                400,
                "bad_options",
            ),
            (http.post(f"/api/rooms/{code}/rematch", headers=auth(table.host_token)), 409, "not_over"),
            (http.post("/api/rooms/ZZZZZ/join", json={"name": "x"}), 404, "no_room"),
            (http.get("/api/rooms/ZZZZZ"), 404, "no_room"),
            (http.get("/api/games/nope"), 404, "no_game"),
        ]
        for response, status, error_code in cases:
            assert response.status_code == status, (response.request.url, response.text)
            assert response.json()["code"] == error_code
            assert response.json()["error"]
        assert http.get(f"/api/rooms/{code}").json() == before


def test_start_needs_enough_players_and_only_once(server: Server) -> None:
    table = make_table(server, "toy", humans=1)
    with server.http() as http:
        r = http.post(f"/api/rooms/{table.code}/start", headers=auth(table.host_token))
        assert r.status_code == 409 and r.json()["code"] == "player_count"
        r = http.post(
            f"/api/rooms/{table.code}/bots",
            json={"count": 1, "level": "random"},
            headers=auth(table.host_token),
        )
        assert r.status_code == 201 and r.json()["seats"] == [1]
        assert http.post(f"/api/rooms/{table.code}/start", headers=auth(table.host_token)).status_code == 200
        r = http.post(f"/api/rooms/{table.code}/start", headers=auth(table.host_token))
        assert r.status_code == 409 and r.json()["code"] == "not_in_lobby"
        r = http.post(f"/api/rooms/{table.code}/join", json={"name": "late"})
        assert r.status_code == 409


def test_option_changes_change_only_the_options_named(server: Server) -> None:
    table = make_table(server, "capitol", humans=1, bots=6)
    url, host = f"/api/rooms/{table.code}", auth(table.host_token)
    with server.http() as http:
        # Two edits built from the same look at the room (as a lobby sends them): both hold.
        assert http.patch(url, json={"option_changes": {"copies": 5}}, headers=host).status_code == 200
        r = http.patch(url, json={"option_changes": {"stalemate_turns": 20}}, headers=host)
        assert r.status_code == 200 and r.json()["options"] == {"copies": 5, "stalemate_turns": 20}
        r = http.patch(url, json={"option_changes": {"stalemate_turns": None}}, headers=host)
        assert r.status_code == 200 and r.json()["options"] == {"copies": 5}
        before = http.get(url).json()
        refused = [
            http.patch(url, json={"option_changes": {"copies": 0}}, headers=host),
            http.patch(url, json={"option_changes": {"copies": 4}, "options": {}}, headers=host),
            http.patch(url, json={"option_changes": {"copies": 4}}, headers=auth(table.tokens.get(1, "x"))),
        ]
        assert [(r.status_code, r.json()["code"]) for r in refused][:2] == [(400, "bad_options")] * 2
        assert refused[2].status_code in (401, 403)
        assert http.get(url).json() == before


def test_host_changes_options_and_settings_kicks_and_host_passes_on(server: Server) -> None:
    table = make_table(server, "toy", humans=3)
    with server.http() as http:
        r = http.patch(
            f"/api/rooms/{table.code}",
            json={"options": {"cards": 3}, "settings": {"turn_seconds": 20, "timers": False}},
            headers=auth(table.host_token),
        )
        assert r.status_code == 200, r.text
        assert r.json()["options"] == {"cards": 3}
        assert r.json()["settings"]["turn_seconds"] == 20 and r.json()["settings"]["timers"] is False
        assert r.json()["settings"]["response_seconds"] == 12  # untouched fields stay
        r = http.post(
            f"/api/rooms/{table.code}/kick",
            json=seat_named(http, table.code, 1),
            headers=auth(table.host_token),
        )
        assert r.status_code == 200 and [s["name"] for s in r.json()["seats"]] == ["Host", "Player 2"]
        # The kicked token is worthless now.
        r = http.post(f"/api/rooms/{table.code}/leave", headers=auth(table.tokens[1]))
        assert r.status_code == 401
        r = http.post(f"/api/rooms/{table.code}/leave", headers=auth(table.host_token))
        assert r.status_code == 200
        seats = http.get(f"/api/rooms/{table.code}").json()["seats"]
        assert seats[0].pop("id")
        assert seats == [{"seat": 0, "name": "Player 2", "bot": False, "host": True, "connected": False}]
        # The new host (Player 2) has the host's powers; the old host has none.
        r = http.post(
            f"/api/rooms/{table.code}/bots",
            json={"count": 1, "level": "random"},
            headers=auth(table.tokens[2]),
        )
        assert r.status_code == 201


def test_option_values_that_are_paths_are_refused() -> None:
    for bad in ["/etc/passwd", "../decks/x.json", "decks\\x", "~/deck", ".hidden"]:
        with pytest.raises(RoomError) as info:
            check_options_safe({"deck_file": bad})
        assert info.value.status == 400
    check_options_safe({"deck_file": "default", "steal_blockers": ["mafia", "reporter"]})


def test_origin_allow_list_and_cors(server: Server) -> None:
    with server.http() as http:
        own = server.url
        ok = [own, "chrome-extension://abcdefghijklmnop", "https://friends.example"]
        for origin in ok:
            r = http.get("/api/info", headers={"Origin": origin})
            assert r.status_code == 200, origin
            assert r.headers["access-control-allow-origin"] == origin
        r = http.get("/api/info", headers={"Origin": "https://evil.example"})
        assert r.status_code == 403 and r.json()["code"] == "origin_refused"
        r = http.post(
            "/api/rooms", json={"game": "toy", "name": "x"}, headers={"Origin": "https://evil.example"}
        )
        assert r.status_code == 403
        pre = http.options(
            "/api/rooms",
            headers={"Origin": "chrome-extension://abc", "Access-Control-Request-Method": "POST"},
        )
        assert pre.status_code == 204 and "authorization" in pre.headers["access-control-allow-headers"]
        info = http.get("/api/info").json()
        assert "toy" in [g["name"] for g in info["games"]] and "random" in info["bots"]
    table = make_table(server, "toy", humans=1)
    with pytest.raises(InvalidStatus) as refused:
        Player(server, table.code, table.host_token, 0, Origin="https://evil.example")
    assert refused.value.response.status_code == 403
    p = Player(server, table.code, table.host_token, 0, Origin="chrome-extension://abcdefghijklmnop")
    assert p.next()["type"] == "lobby"
    p.close()


def test_websocket_handshake_refuses_unknown_room_and_token(server: Server) -> None:
    table = make_table(server, "toy", humans=1)
    with pytest.raises(InvalidStatus) as no_room:
        Player(server, "ZZZZZ", None, None)
    assert no_room.value.response.status_code == 404
    with pytest.raises(InvalidStatus) as bad_token:
        Player(server, table.code, "not-a-token", None)
    assert bad_token.value.response.status_code == 403


def test_lobby_messages_follow_every_change(server: Server) -> None:
    table = make_table(server, "toy", humans=1)
    host = Player(server, table.code, table.host_token, 0)
    spectator = Player(server, table.code, None, None)
    first = host.next()
    assert first["type"] == "lobby" and first["room"]["seats"][0]["connected"] is True
    assert first["you"] == 0 and spectator.next()["you"] is None
    with server.http() as http:
        http.post(f"/api/rooms/{table.code}/join", json={"name": "Cy"})
    msg = host.wait_for(lambda m: m["type"] == "lobby" and len(m["room"]["seats"]) == 2)
    assert msg["room"]["seats"][1]["name"] == "Cy"
    spectator.wait_for(lambda m: m["type"] == "lobby" and len(m["room"]["seats"]) == 2)
    for p in (host, spectator):
        p.close()


def test_rate_and_size_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    register_toy(monkeypatch)
    with (
        thread_server(tmp_path, http_rate_per_second=1.0, http_rate_burst=5.0, max_body_bytes=2000) as srv,
        srv.http() as http,
    ):
        statuses = [http.post("/api/rooms", json={"game": "toy", "name": "x"}).status_code for _ in range(8)]
        assert statuses[:5] == [201] * 5 and 429 in statuses[5:]
        time.sleep(1.5)
        r = http.post("/api/rooms", json={"game": "toy", "name": "x" * 3000})
        assert r.status_code == 413
        # Reads have a limit of their own, far above what a page load needs.
        assert all(http.get("/healthz").status_code == 200 for _ in range(20))


def test_idle_rooms_are_cleaned_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    register_toy(monkeypatch)
    with thread_server(tmp_path, idle_seconds=0.5, sweep_seconds=0.2) as srv:
        idle = make_table(srv, "toy", humans=1)
        watched = make_table(srv, "toy", humans=1)
        p = Player(srv, watched.code, None, None)
        with srv.http() as http:
            # The sweep (every 0.2 s) removes the idle room: waited for.
            eventually(lambda: http.get(f"/api/rooms/{idle.code}").status_code, lambda status: status == 404)
            time.sleep(1.0)  # (sweeps that would wrongly remove the watched room run meanwhile)
            assert http.get(f"/api/rooms/{watched.code}").status_code == 200
        p.close()


def test_join_link_serves_the_client(server: Server) -> None:
    table = make_table(server, "toy", humans=1)
    r = httpx.get(f"{server.url}/r/{table.code}")
    assert r.status_code == 200 and "<" in r.text
    r2 = httpx.get(f"{server.url}/?room={table.code}")
    assert r2.status_code == 200 and r2.text == r.text
    assert start is not None


def test_streamed_bodies_and_spectators_per_room_are_capped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_toy(monkeypatch)
    with thread_server(tmp_path, max_body_bytes=2000, max_spectators_per_room=3) as srv:
        table = make_table(srv, "toy", humans=1)

        def chunks() -> Iterator[bytes]:
            yield b'{"name": "'
            for _ in range(100):
                yield b"x" * 100
            yield b'"}'

        with srv.http() as http:
            r = http.post(f"/api/rooms/{table.code}/join", content=chunks())
            assert r.status_code == 413 and r.json()["code"] == "too_large"
            assert len(http.get(f"/api/rooms/{table.code}").json()["seats"]) == 1
        watchers = [Player(srv, table.code, None, None) for _ in range(3)]
        with pytest.raises(InvalidStatus) as refused:
            Player(srv, table.code, None, None)
        assert refused.value.response.status_code == 429
        assert json.loads(refused.value.response.body)["code"] == "too_many_spectators"
        # The room is full of spectators, and its player still gets in.
        host = Player(srv, table.code, table.host_token, 0)
        assert host.next()["type"] == "lobby"
        for w in [*watchers, host]:
            w.close()


def test_rooms_without_spectators_refuse_tokenless_sockets(server: Server) -> None:
    table = make_table(server, "toy", humans=1, settings={"spectators": False})
    with pytest.raises(InvalidStatus) as refused:
        Player(server, table.code, None, None)
    assert refused.value.response.status_code == 403
    p = Player(server, table.code, table.host_token, 0)
    assert p.next()["type"] == "lobby"
    p.close()


def test_serve_refuses_a_redis_that_does_not_answer() -> None:
    from typer.testing import CliRunner

    from conflictology.cli import app
    from server_helpers import free_port

    url = f"redis://:secret@127.0.0.1:{free_port()}/0"
    result = CliRunner().invoke(app, ["serve", "--port", str(free_port()), "--redis", url])
    assert result.exit_code == 2
    assert "no Redis answers" in result.output and "secret" not in result.output


def test_a_working_copy_of_a_room_shares_nothing_a_change_touches() -> None:
    """A shared backend changes a copy of the room and keeps the original until the save lands: a
    change to the copy must leave the original exactly as it was."""
    import msgspec

    from conflictology.server.protocol import RoomSettings
    from conflictology.server.rooms import Room

    room, _ = Room.create("COPYY", "capitol", "Host", None, RoomSettings(timers=False))
    room.join("Guest")
    room.start(time.time(), seed=5)
    # Frozen as text: the snapshot itself holds the room's own lists and dicts.
    before = msgspec.json.encode(room.snapshot())
    work = room.copy()
    assert msgspec.json.encode(work.snapshot()) == before and work is not room
    seat = min(work.state.waiting_for())  # type: ignore[union-attr]
    work.act(seat, work.state.legal_actions(seat)[0], work.seq, time.time())  # type: ignore[union-attr]
    work.seats[1].afk = True
    work.seats.append(work.seats[0])
    work.options["first_player"] = 1
    work.past_games.append("g")
    work.decision[9] = "x"
    assert msgspec.json.encode(room.snapshot()) == before
    assert msgspec.json.encode(work.snapshot()) != before


def test_a_kick_names_a_stable_seat_id_and_never_hits_the_seat_that_moved_up(server: Server) -> None:
    # Seats [Host, P1, Bot]; P1 leaves while the host is about to kick them as seat 1.
    table = make_table(server, "toy", humans=2, bots=1, level="random")
    with server.http() as http:
        url = f"/api/rooms/{table.code}"
        before = http.get(url).json()["seats"]
        p1, bot = before[1]["id"], before[2]["id"]
        assert len({s["id"] for s in before}) == 3
        assert http.post(f"{url}/leave", headers=auth(table.tokens[1])).status_code == 200
        host = auth(table.host_token)
        for body, status, code in [
            ({"seat": 1}, 400, "seat_id_needed"),  # a number alone could name the bot now
            ({"seat": 1, "seat_id": p1}, 409, "seat_moved"),
            ({"seat_id": p1}, 409, "seat_moved"),
            ({"seat": 2, "seat_id": bot}, 409, "seat_moved"),
        ]:
            r = http.post(f"{url}/kick", json=body, headers=host)
            assert (r.status_code, r.json()["code"]) == (status, code), body
        seats = http.get(url).json()["seats"]
        assert [s["id"] for s in seats] == [before[0]["id"], bot] and seats[1]["bot"]
        r = http.post(f"{url}/kick", json={"seat_id": bot}, headers=host)
        assert r.status_code == 200 and [s["id"] for s in r.json()["seats"]] == [before[0]["id"]]


def test_a_rooms_list_of_past_games_keeps_the_newest_only() -> None:
    room = capitol_room(0.0)
    for n in range(MAX_PAST_GAMES + 30):
        room.status, room.game_id = RoomStatus.OVER, f"game-{n}"
        room.rematch()
    assert room.past_games == [f"game-{n}" for n in range(30, MAX_PAST_GAMES + 30)]
    # A snapshot saved before the cap is cut on reading.
    data = room.snapshot()
    data["past_games"] = [f"old-{n}" for n in range(500)]
    assert Room.restore(data).past_games == [f"old-{n}" for n in range(450, 500)]
