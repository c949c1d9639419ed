"""Full games of both real games over a real server: humans on WebSockets and bots at one table,
every message checked against the game's own view for its receiver (no card leaks), replays, the
network bot, and the Conspiranoicos deck-file guard."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from conflictology import bots, games
from server_helpers import (
    Player,
    Server,
    auth,
    check_no_leaks,
    eventually,
    make_table,
    play_randomly,
    start,
    thread_server,
)

BACKS = set("GIAR")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with thread_server(tmp_path_factory.mktemp("games"), bot_delay=0.0) as srv:
        yield srv


def finished_record(server: Server, code: str, token: str) -> dict[str, Any]:
    """The room's game's record once archived (written after its last state is sent: waited for)."""
    with server.http() as http:
        game_id = http.get(f"/api/rooms/{code}").json()["game_id"]
        return dict(
            eventually(
                lambda: http.get(f"/api/games/{game_id}", headers=auth(token)).json(),
                lambda record: record.get("status") == "over",
            )
        )


def assert_hidden_is_hidden(game: str, seat: int | None, messages: list[dict[str, Any]]) -> int:
    """Structural check, independent of the replay: other seats' face-down cards are counts
    (Capitol) or back symbols (Conspiranoicos) in every state message."""
    n = 0
    for msg in messages:
        if msg.get("type") != "state":
            continue
        for i, p in enumerate(msg["view"]["players"]):
            if i == seat:
                continue
            if game == "capitol":
                assert isinstance(p["hidden"], int), (seat, i, p)
            else:
                # A list of backs, or only a count while the rows are built (rulings "Sort Evidence").
                assert isinstance(p["hand"], int) or all(h in BACKS for h in p["hand"]), (seat, i, p)
        n += 1
    return n


def play_table(server: Server, game: str, humans: int, bots: int, level: str, seed: int) -> None:
    table = make_table(server, game, humans=humans, bots=bots, level=level)
    players = [Player(server, table.code, table.tokens[i], i) for i in range(humans)]
    spectator = Player(server, table.code, None, None)
    started = start(table)
    with server.http() as http:
        live = http.get(f"/api/games/{started['game_id']}").json()
    assert live["status"] == "playing" and "actions" not in live and "initial" not in live
    assert live["view"]["you"] is None
    play_randomly(players, seed=seed, timeout=180)
    spectator.wait_for(lambda m: m["type"] == "state" and "winners" in m, timeout=30)
    record = finished_record(server, table.code, table.host_token)
    received = [(p.seat, p.messages) for p in players] + [(None, spectator.messages)]
    checked = check_no_leaks(record, received)
    assert checked > len(record["actions"])
    for seat, messages in received:
        assert assert_hidden_is_hidden(game, seat, messages) > 0
    assert record["winners"] and set(record["winners"]) <= set(range(humans + bots))
    assert len(record["final_views"]) == humans + bots
    for p in [*players, spectator]:
        p.close()


@pytest.mark.parametrize("seed", [1, 2])
def test_capitol_humans_and_bots(server: Server, seed: int) -> None:
    play_table(server, "capitol", humans=3, bots=2, level="normal", seed=seed)


def test_capitol_two_humans(server: Server) -> None:
    play_table(server, "capitol", humans=2, bots=0, level="random", seed=3)


def test_conspiranoicos_human_against_bot(server: Server) -> None:
    play_table(server, "conspiranoicos", humans=1, bots=1, level="normal", seed=4)


def test_bots_without_a_level_get_a_default_that_plays_the_game(server: Server) -> None:
    for game in ("capitol", "conspiranoicos"):
        table = make_table(server, game, humans=1, bots=1)
        with server.http() as http:
            seat = http.get(f"/api/rooms/{table.code}").json()["seats"][1]
        assert seat["bot"] and seat["level"] in bots.names()
        bots.check(seat["level"], games.get(game))


def test_conspiranoicos_two_humans(server: Server) -> None:
    play_table(server, "conspiranoicos", humans=2, bots=0, level="random", seed=5)


def test_conspiranoicos_deck_file_must_be_a_bundled_name(server: Server) -> None:
    with server.http() as http:
        for bad in ["/etc/passwd", "../../x.json", "secret.json", "C:\\deck.json", 7]:
            r = http.post(
                "/api/rooms", json={"game": "conspiranoicos", "name": "x", "options": {"deck_file": bad}}
            )
            assert r.status_code == 400 and r.json()["code"] in ("bad_options", "bad_request"), bad
        r = http.post(
            "/api/rooms", json={"game": "conspiranoicos", "name": "x", "options": {"deck_file": "default"}}
        )
        assert r.status_code == 201
        r = http.post(
            "/api/rooms", json={"game": "capitol", "name": "x", "options": {"steal_blockers": ["x"]}}
        )
        assert r.status_code == 400 and r.json()["code"] == "bad_options"


def test_network_bot_command_joins_and_plays(server: Server) -> None:
    table = make_table(server, "capitol", humans=1)
    host = Player(server, table.code, table.host_token, 0)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "conflictology.cli",
            "bot",
            "--server",
            server.url,
            "--room",
            table.code,
            "--level",
            "normal",
            "--name",
            "Robo",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lobby = host.wait_for(lambda m: m["type"] == "lobby" and len(m["room"]["seats"]) == 2, timeout=30)
    assert lobby["room"]["seats"][1]["name"] == "Robo" and lobby["room"]["seats"][1]["bot"] is False
    host.wait_for(lambda m: m["type"] == "lobby" and m["room"]["seats"][1]["connected"], timeout=30)
    start(table)
    done = threading.Event()

    def play() -> None:
        play_randomly([host], seed=9, timeout=120)
        done.set()

    t = threading.Thread(target=play)
    t.start()
    out, err = proc.communicate(timeout=120)
    t.join(timeout=30)
    assert proc.returncode == 0, err
    assert done.is_set()
    assert "seat 1:" in out and "decisions" in out
    host.close()
