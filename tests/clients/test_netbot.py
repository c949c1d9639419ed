"""The network bot (`conflictology bot`, the client a bot writer starts from): an answer the server
refused for its rate is sent again, so a bot on a busy address never leaves its seat waiting."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conflictology.clients.netbot import Answer, run_bot
from server_helpers import Server, make_table, start, thread_server


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    # One message a second per socket, a burst of two: every bot's answers are refused now and then.
    with thread_server(tmp_path, ws_rate_per_second=1.0, ws_rate_burst=2.0) as srv:
        yield srv


def play_game(server: Server, bots: int) -> list[Any]:
    """A table of ``bots`` random network bots, the host's seat the first (the others join by
    themselves: run_bot takes a seat), played through one game; every bot's result."""
    table = make_table(server, "capitol", humans=1, settings={"timers": False})
    results: list[Any] = []

    def play(token: str | None, seed: int) -> None:
        results.append(asyncio.run(run_bot(server.url, table.code, "random", token=token, seed=seed)))

    threads = [threading.Thread(target=play, args=(table.host_token if seed == 1 else None, seed))
               for seed in range(1, bots + 1)]  # fmt: skip
    for t in threads:
        t.start()
    with server.http() as http:
        for _ in range(600):
            if len(http.get(f"/api/rooms/{table.code}").json()["seats"]) == bots:
                break
            threading.Event().wait(0.1)
        else:
            raise AssertionError("the bots never sat down")
    start(table)
    for t in threads:
        t.join(timeout=300)
    assert len(results) == bots, "a bot did not finish its game"
    assert all(r.winners == results[0].winners for r in results) and results[0].winners
    return results


def test_a_rate_limited_answer_is_sent_again_and_the_game_ends(server: Server) -> None:
    results = play_game(server, 2)
    # The limit did bite: some answers were refused and sent again.
    assert sum(r.errors for r in results) > 0


def test_an_answer_in_flight_is_not_sent_again_for_the_same_decision() -> None:
    answer = Answer()
    window = [{"type": "pass"}, {"type": "challenge"}]
    assert answer.wanted(7, window, 7)
    answer.sent(7)
    # Another seat passed: the same window goes on, and the pass on its way will be taken.
    assert not answer.wanted(8, window, 7)
    # The pass landed: this seat is not awaited; later, a new decision is answered.
    assert not answer.wanted(9, [], 9)
    assert answer.wanted(11, [{"type": "income"}], 11)
    answer.sent(11)
    # Someone challenged first: a new decision under the answer in flight is answered.
    assert answer.wanted(12, [{"type": "lose"}], 12)
    answer.sent(12)
    # The answer was refused: the state it answered is not answered twice, a newer one is.
    answer.refused()
    assert not answer.wanted(12, [{"type": "lose"}], 12)
    assert answer.wanted(13, [{"type": "lose"}], 12)
    # A server that does not say decision_since: every newer state is answered, as before.
    answer.sent(13)
    assert answer.wanted(14, [{"type": "pass"}], None)


def test_four_network_bots_finish_a_game_of_response_windows(tmp_path: Path) -> None:
    """Three seats answer each window: answers in flight, windows that go on and windows that end
    under an answer (a challenge first), all through to the end (no bot waits for ever on an answer
    it believes in flight)."""
    with thread_server(tmp_path) as server:
        play_game(server, 4)
