"""Finished games replayed step by step (conflictology.replay, the games' open views) and served by
the server: every card face up at every step as the engine had it, Capitol's claims and challenges
marked as the engine's own end summary marks them, the text record; a private room's game only for
its players; nothing of a game still being played."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from conflictology import games, replay
from conflictology.engine import GameState
from server_helpers import Player, Server, auth, make_table, play_randomly, start, thread_server


def random_record(name: str, players: int, seed: int) -> tuple[dict[str, Any], list[GameState]]:
    """A game played at random, as the archive records it, and the engine's state after each step."""
    game = games.get(name)
    state = game.new_game(players=players, seed=seed)
    record: dict[str, Any] = {
        "id": f"g{seed}",
        "room": "ROOMXY",
        "game": name,
        "players": [{"seat": i, "name": f"Name{i}", "bot": False} for i in range(players)],
        "initial": state.to_json(),
        "actions": [],
        "started": 1.0,
        "finished": 2.0,
    }
    states = [state.clone()]
    rng = random.Random(seed)
    while not state.is_over():
        seat = rng.choice(state.waiting_for())
        action = rng.choice(state.legal_actions(seat))
        state.apply(seat, action)
        record["actions"].append({"seq": len(states) + 1, "seat": seat, "action": action, "by": "bot"})
        states.append(state.clone())
    return record, states


@pytest.mark.parametrize("seed", range(6))
def test_capitol_steps_show_every_hand_and_mark_every_claim(seed: int) -> None:
    record, states = random_record("capitol", 4, seed)
    built = replay.build(record)
    assert len(built["steps"]) == len(states)
    for step, state in zip(built["steps"], states, strict=True):
        view = step["view"]
        for seat in range(4):
            # Each seat's face-down cards, exactly as its own view (the engine's) shows them.
            assert view["players"][seat]["hidden"] == state.view(seat)["players"][seat]["hidden"]
        log = state.view(None)["log"]
        assert built["log"][: step["log"]] == log  # the log only grows
    final = states[-1].view(None)
    marks = built["claims"]
    plain = [{k: v for k, v in c.items() if k not in ("at", "challenge_at", "won")} for c in marks]
    assert plain == final["summary"]["claims"]
    for claim in marks:
        assert built["log"][claim["at"]]["seat"] == claim["seat"]
        if claim["challenged"]:
            challenge = built["log"][claim["challenge_at"]]
            assert challenge["type"] == "challenge" and challenge["seat"] == claim["challenger"]
            # Won by the challenger exactly when the engine then caught a bluff.
            assert claim["won"] == (built["log"][claim["challenge_at"] + 1]["type"] == "bluff")
    figures = built["figures"]
    assert [f["bluffs"] for f in figures] == final["summary"]["bluffs"]
    assert [f["bluffs_caught"] for f in figures] == final["summary"]["caught"]
    assert sum(f["eliminations"] for f in figures) <= 3


@pytest.mark.parametrize("seed", range(4))
def test_conspiranoicos_steps_show_hands_plays_rows_and_the_pyramid(seed: int) -> None:
    record, states = random_record("conspiranoicos", 2, seed)
    built = replay.build(record)
    for step, state in zip(built["steps"], states, strict=True):
        view = step["view"]
        for seat in (0, 1):
            own = state.view(seat)
            assert view["players"][seat]["hand"] == own["players"][seat]["hand"]
            assert view["players"][seat]["row"] == own["players"][seat]["row"]
            assert view["table"]["plays"][seat] in (None, own["table"]["plays"][seat])
        pyramid = state.view(0)["pyramid"]
        assert [s and s["card"] for s in view["pyramid"]] == [s and s["seen"] for s in pyramid]
    last = built["steps"][-1]["view"]
    final = states[-1].view(None)
    assert last["scores"] == final["scores"] and last["score_detail"] == final["score_detail"]
    assert [f["points"] for f in built["figures"]] == final["scores"]
    assert sum(f["final_challenges"] for f in built["figures"]) == int(final["final_winner"] is not None)


def test_the_text_record_names_players_and_marks_bluffs() -> None:
    for seed in range(20):
        record, _ = random_record("capitol", 3, seed)
        built = replay.build(record)
        if any(c["challenged"] for c in built["claims"]):
            break
    text = replay.text_record(built)
    assert "Seat " not in text and "Name0" in text
    assert "[TRUE" in text or "[BLUFF" in text
    assert "challenge WON" in text or "challenge LOST" in text
    record, _ = random_record("conspiranoicos", 2, 1)
    text = replay.text_record(replay.build(record))
    assert "Score:" in text and "Total:" in text


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with thread_server(tmp_path_factory.mktemp("replay")) as srv:
        yield srv


def finish_game(server: Server, settings: dict[str, Any]) -> tuple[Any, str]:
    table = make_table(server, "capitol", humans=1, bots=1, level="random", settings=settings)
    game_id = start(table)["game_id"]
    host = Player(server, table.code, table.host_token, 0)
    play_randomly([host])
    host.close()
    return table, game_id


def test_a_private_games_replay_refuses_a_stranger(server: Server) -> None:
    table, game_id = finish_game(server, {"timers": False})
    other, _ = finish_game(server, {"timers": False})
    paths = [f"/api/games/{game_id}", f"/api/games/{game_id}/replay", f"/api/games/{game_id}/record.txt",
             f"/api/games/{game_id}/recap"]  # fmt: skip
    with server.http() as http:
        for path in paths:
            r = http.get(path)
            assert r.status_code == 401 and r.json()["code"] == "no_token", r.text
            r = http.get(path, headers=auth(other.host_token))  # a player of another room
            assert r.status_code == 403 and r.json()["code"] == "private_game", r.text
            assert "hidden" not in r.text and "initial" not in r.text
            assert http.get(path, headers=auth(table.host_token)).status_code == 200
        built = http.get(paths[1], headers=auth(table.host_token)).json()
        assert built["id"] == game_id and built["steps"][0]["action"] is None
        text = http.get(paths[2], headers=auth(table.host_token))
        assert text.headers["content-type"].startswith("text/plain")
        assert "attachment" in text.headers["content-disposition"]
        assert text.text.startswith("Conflictology: Capitol")


def test_a_public_games_replay_is_anyones(server: Server) -> None:
    _, game_id = finish_game(server, {"timers": False, "public": True})
    with server.http() as http:
        assert http.get(f"/api/games/{game_id}/replay").status_code == 200


def test_a_live_game_shows_nothing_face_up(server: Server) -> None:
    table = make_table(server, "capitol", humans=2, settings={"timers": False})
    game_id = start(table)["game_id"]
    p0 = Player(server, table.code, table.tokens[0], 0)
    state = p0.wait_for(lambda m: m.get("type") == "state")
    mine = state["view"]["players"][0]["hidden"]
    with server.http() as http:
        for tail in ("replay", "record.txt", "recap"):
            r = http.get(f"/api/games/{game_id}/{tail}", headers=auth(table.host_token))
            assert r.status_code == 409 and r.json()["code"] == "not_over", r.text
            assert not any(card in r.text for card in mine)
        assert http.get("/api/games/abc/replay").status_code == 404
    p0.close()


def test_replays_are_bounded_per_address(tmp_path: Path) -> None:
    with thread_server(tmp_path) as srv:
        _, game_id = finish_game(srv, {"timers": False, "public": True})
        with srv.http() as http:
            codes = [http.get(f"/api/games/{game_id}/replay").status_code for _ in range(30)]
    assert codes[0] == 200 and 429 in codes  # the listings' budget: bursts of 20, then 2/s


def test_a_step_carries_neither_the_log_nor_the_claims() -> None:
    # The log and the claims are sent once for the whole game: a replay grows with the game's length.
    record, states = random_record("capitol", 4, 3)
    built = replay.build(record)
    for step in built["steps"]:
        assert "log" not in step["view"] and "claims" not in step["view"]
    final = states[-1].view(None)
    assert built["log"] == final["log"]
    assert all(c["at"] < len(built["log"]) for c in built["claims"])


def test_a_long_game_replay_grows_linearly() -> None:
    # Claiming the Reporter in a loop until the stalemate rule ends it: twice the game, about twice
    # the bytes (each step used to carry every claim so far).
    import json

    def size(turns: int) -> int:
        game = games.get("capitol")
        state = game.new_game(4, seed=1, options={"first_player": 0, "stalemate_turns": turns})
        record: dict[str, Any] = {
            "id": "g", "room": "R", "game": "capitol", "started": 1.0, "finished": 2.0,
            "players": [{"seat": i, "name": f"N{i}", "bot": False} for i in range(4)],
            "initial": state.to_json(), "actions": [],
        }
        while not state.is_over():
            seat = state.waiting_for()[0]
            legal = state.legal_actions(seat)
            action = next((a for a in legal if a["type"] in ("reporter", "pass")), legal[0])
            state.apply(seat, action)
            record["actions"].append({"seq": len(record["actions"]) + 1, "seat": seat, "action": action})
        return len(json.dumps(replay.build(record)))

    small, large = size(50), size(200)
    assert large < 4.6 * small
