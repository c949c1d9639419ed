"""Several processes, one table: two real server processes share one Redis; players sit on both;
one process is killed with SIGKILL mid-game; its players reconnect to the other with the same
tokens, the dead process's bot and clocks are taken over, the game finishes, and nothing is lost
(every seq applied exactly once, every view received matches the replayed game)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from redis_helpers import clear_prefix, new_prefix, redis_server
from server_helpers import (
    Player,
    ServerProcess,
    auth,
    check_no_leaks,
    eventually,
    make_table,
    play_randomly,
    start,
)

pytestmark = pytest.mark.redis


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


def two_processes(redis_url: str, db: str, prefix: str, *extra: str) -> tuple[ServerProcess, ServerProcess]:
    args = ("--redis", redis_url, "--redis-prefix", prefix, "--redis-lease", "2", *extra)
    first = ServerProcess(db, None, *args)
    try:
        second = ServerProcess(db, None, *args)
    except Exception:
        first.kill()
        raise
    return first, second


def reconnect(server: ServerProcess, code: str, token: str, seat: int, timeout: float = 20.0) -> Player:
    """What a client does when its socket drops: retry, with the same token, until a server answers."""
    deadline = time.time() + timeout
    while True:
        try:
            return Player(server.server, code, token, seat)
        except Exception:
            if time.time() > deadline:
                raise
            time.sleep(0.2)


def consecutive_seqs(record: dict[str, object]) -> None:
    actions = record["actions"]
    assert isinstance(actions, list) and actions
    seqs = [a["seq"] for a in actions]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), "a seq was applied twice or skipped"


def test_kill_one_of_two_processes_mid_game(redis_url: str, tmp_path: Path) -> None:
    prefix = new_prefix()
    db = f"sqlite:///{tmp_path / 'shared.sqlite3'}"
    a, b = two_processes(redis_url, db, prefix, "--bot-delay", "0.05", "--grace", "600")
    try:
        # The room is made on A (A owns its bot and clocks); seats 0 and 1 play through A, seat 2
        # through B, seat 3 is a bot.
        table = make_table(a.server, "capitol", humans=3, bots=1, level="random", settings={"timers": False})
        with httpx.Client(base_url=b.url, timeout=60) as http:
            assert http.get(f"/api/rooms/{table.code}").json()["code"] == table.code
        players = [Player(a.server, table.code, table.tokens[i], i) for i in range(2)]
        players.append(Player(b.server, table.code, table.tokens[2], 2))
        start(table)
        play_randomly(players, seed=5, stop_after=8)
        # B hears of A's sockets through Redis: waited for, every seat connected as B shows it.
        before = eventually(
            lambda: httpx.get(f"{b.url}/api/rooms/{table.code}", timeout=60).json(),
            lambda room: [s["connected"] for s in room["seats"]] == [True, True, True, True],
        )
        assert before["status"] == "playing"
        seen = max(m["seq"] for p in players for m in p.messages if m["type"] == "state")

        a.kill()
        assert a.proc.returncode == -9
        # The dead process's players come back through B, with the same tokens.
        resumed = [reconnect(b, table.code, table.tokens[i], i) for i in range(2)]
        states = [p.wait_for(lambda m: m["type"] == "state") for p in resumed]
        assert all(s["seq"] >= seen for s in states)
        assert [s["view"]["you"] for s in states] == [0, 1]
        # The game goes on (the bot is now B's, after A's lease expires) to its end.
        play_randomly([*resumed, players[2]], seed=6, timeout=120)
        # The archive is written after the last state is sent: waited for.
        archived = f"{b.url}/api/games/{before['game_id']}"
        record = eventually(
            lambda: httpx.get(archived, headers=auth(table.host_token), timeout=60).json(),
            lambda got: got.get("status") == "over",
        )
        consecutive_seqs(record)
        assert "bot" in {x["by"] for x in record["actions"]}
        received = [
            (0, players[0].messages + resumed[0].messages),
            (1, players[1].messages + resumed[1].messages),
            (2, players[2].messages),
        ]
        assert check_no_leaks(record, received) > 0
        # Nothing stale survives the dead process: every human seat shows connected through B.
        info = httpx.get(f"{b.url}/api/rooms/{table.code}", timeout=60).json()
        assert [s["connected"] for s in info["seats"]] == [True, True, True, True]
        for p in [*players, *resumed]:
            p.close()
    finally:
        a.kill()
        b.stop()
        clear_prefix(redis_url, prefix)
