"""Where replays are built (server/replay_builds.py): in a child process of its own, byte for byte as
in a thread; identical requests merged into one process; a process killed mid-build, over its CPU
cap or its wall cap, answered 503 and the next request built anew; a build that raises answered 500; stopping
kills the builds under way, in a bare builder and with the server; a game the build's process does
not know is built in the server; ``replay_workers = 0`` builds in a thread."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest

from conflictology import games
from conflictology.server import replay_builds
from conflictology.server.replay_builds import ProcessBuilds, ThreadBuilds, builds_for
from conflictology.server.replay_cache import ReplayCache, build
from conflictology.server.rooms import RoomError
from replay_builders import begun, broken, hang, hang_always, spin
from server_helpers import Player, make_table, play_randomly, register_toy, start, thread_server
from test_replay import random_record

TIMEOUT = 60.0  # generous: the first build also starts the fork server, on a loaded machine


async def until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen in time")
        await asyncio.sleep(0.02)


def gone(pid: int) -> bool:
    """The process has ended (a build's process is the fork server's child: reaped there)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def loader(record: dict[str, Any]) -> Callable[[], Any]:
    async def load() -> dict[str, Any]:
        return record

    return load


def test_a_build_in_a_process_is_byte_identical_to_one_in_a_thread() -> None:
    records = []
    for name, players, seed in (("capitol", 4, 2), ("conspiranoicos", 2, 3)):
        record, states = random_record(name, players, seed)
        final = states[-1]
        record.update(final=final.to_json(), options={}, winners=final.winners(), log=final.view(None)["log"])
        records.append(record)

    async def main() -> None:
        processes, thread = ProcessBuilds(1), ThreadBuilds()
        try:
            for r in records:
                for kind in ("replay", "game"):
                    here = await thread.build(kind, r)
                    assert await processes.build(kind, r) == here
                    assert here == build(kind, r) and here.json
            assert processes.started == 4  # each in a process of its own
        finally:
            await processes.stop()

    asyncio.run(main())


def test_concurrent_requests_are_one_build_in_one_process() -> None:
    record, _ = random_record("capitol", 3, 1)

    async def main() -> None:
        processes = ProcessBuilds(1)
        cache = ReplayCache(processes)
        try:
            answers = await asyncio.gather(*(cache.get("g1", loader(record)) for _ in range(5)))
            assert processes.started == 1
            assert all(a is answers[0] for a in answers)
            assert answers[0] == build("replay", record)
            assert await cache.get("g1", loader(record)) is answers[0]  # kept
            assert processes.started == 1
        finally:
            await cache.stop()

    asyncio.run(main())


def test_a_process_killed_mid_build_is_answered_503_and_the_next_request_builds(tmp_path: Path) -> None:
    record, _ = random_record("capitol", 3, 1)

    async def main() -> None:
        processes = ProcessBuilds(1, function=partial(hang, str(tmp_path)))
        cache = ReplayCache(processes)
        try:
            asked = asyncio.ensure_future(cache.get("g1", loader({**record, "hang": True})))
            await until(lambda: bool(begun(tmp_path)), "the build's beginning")
            [pid] = begun(tmp_path)
            assert processes.running == [pid]
            os.kill(pid, signal.SIGKILL)  # as the OOM killer would
            with pytest.raises(RoomError) as refused:
                await asyncio.wait_for(asyncio.shield(asked), TIMEOUT)
            assert (refused.value.status, refused.value.code) == (503, "replay_unavailable")
            assert "died" in refused.value.message
            assert not cache.kept("g1") and processes.running == []
            answer = await cache.get("g1", loader(record))  # a new process
            assert answer == build("replay", record)
            assert processes.started == 2 and cache.kept("g1")
        finally:
            await cache.stop()

    asyncio.run(main())


def test_a_build_over_its_cpu_cap_is_stopped_and_answered_503(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(replay_builds, "WALL_FACTOR", 10_000)  # only the CPU cap can stop it
    record, _ = random_record("capitol", 3, 1)

    async def main() -> None:
        processes = ProcessBuilds(1, time_cap=0.5, function=partial(spin, str(tmp_path)))
        try:
            with pytest.raises(RoomError) as refused:
                await processes.build("replay", {**record, "spin": True})
            assert (refused.value.status, refused.value.code) == (503, "replay_unavailable")
            assert "more than 0.5 s of CPU" in refused.value.message and "was stopped" in caplog.text
            [pid] = begun(tmp_path)
            await until(lambda: gone(pid), "the stopped build's end")
            assert processes.running == []
            assert await processes.build("replay", record) == build("replay", record)
        finally:
            await processes.stop()

    asyncio.run(main())


def test_a_build_that_waits_past_its_wall_cap_is_killed_and_answered_503(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    record, _ = random_record("capitol", 3, 1)

    async def main() -> None:
        # Waiting uses no CPU: the wall cap (WALL_FACTOR times the CPU cap) stops it.
        processes = ProcessBuilds(1, time_cap=0.05, function=partial(hang, str(tmp_path)))
        try:
            with pytest.raises(RoomError) as refused:
                await processes.build("replay", {**record, "hang": True})
            assert (refused.value.status, refused.value.code) == (503, "replay_unavailable")
            assert "more than 0.5 s" in refused.value.message and "is killed" in caplog.text
            assert processes.running == []
            for pid in begun(tmp_path):  # (a loaded machine may not have let it begin in 0.5 s)
                await until(lambda pid=pid: gone(pid), "the killed build's end")  # type: ignore[misc]
        finally:
            await processes.stop()

    asyncio.run(main())


def test_a_build_that_raises_is_answered_500_and_leaves_the_builder_working(tmp_path: Path) -> None:
    record, _ = random_record("capitol", 3, 1)

    async def main() -> None:
        processes = ProcessBuilds(1, function=partial(broken, str(tmp_path)))
        try:
            with pytest.raises(RoomError) as refused:
                await processes.build("replay", {**record, "broken": True})
            assert (refused.value.status, refused.value.code) == (500, "replay_failed")
            assert "bug" not in refused.value.message  # the traceback is logged, not sent
            assert await processes.build("replay", record) == build("replay", record)
        finally:
            await processes.stop()

    asyncio.run(main())


def test_stopping_kills_the_builds_under_way_and_refuses_new_ones(tmp_path: Path) -> None:
    record, _ = random_record("capitol", 3, 1)

    async def main() -> None:
        processes = ProcessBuilds(2, function=partial(hang, str(tmp_path)))
        asked = [
            asyncio.ensure_future(processes.build("replay", {**record, "id": f"g{i}", "hang": True}))
            for i in range(3)  # two build, one waits for a driver
        ]
        await until(lambda: len(begun(tmp_path)) == 2, "two builds' beginning")
        await processes.stop()
        for ask in asked:
            with pytest.raises(RoomError) as refused:
                await ask
            assert refused.value.status == 503
        for pid in begun(tmp_path):
            await until(lambda pid=pid: gone(pid), f"the end of build {pid}")  # type: ignore[misc]
        assert len(begun(tmp_path)) == 2 and processes.running == []
        with pytest.raises(RoomError):
            await processes.build("replay", record)

    asyncio.run(main())


def test_a_game_only_the_server_knows_is_built_in_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    register_toy(monkeypatch)  # in this process only: a build's process does not know the game
    game = games.get("toy")
    state = game.new_game(players=2, seed=1)
    record: dict[str, Any] = {
        "id": "t1", "room": "ROOMXY", "game": "toy", "started": 1.0, "finished": 2.0,
        "players": [{"seat": i, "name": f"Name{i}", "bot": False} for i in range(2)],
        "initial": state.to_json(), "actions": [],
    }  # fmt: skip

    async def main() -> None:
        processes = ProcessBuilds(1)
        try:
            assert await processes.build("replay", record) == build("replay", record)
            assert processes.started == 1  # asked, and answered that it does not know the game
        finally:
            await processes.stop()

    asyncio.run(main())


def test_the_number_of_workers_must_make_sense() -> None:
    assert isinstance(builds_for(0), ThreadBuilds)
    assert isinstance(builds_for(2), ProcessBuilds)
    with pytest.raises(ValueError, match="replay_workers"):
        builds_for(-1)
    with pytest.raises(ValueError, match="time_cap"):
        ProcessBuilds(1, time_cap=0)


def finished_game(server: Any) -> str:
    table = make_table(server, "capitol", humans=1, bots=1, level="random", settings={"public": True})
    game_id = str(start(table)["game_id"])
    host = Player(server, table.code, table.host_token, 0)
    play_randomly([host])
    host.close()
    return game_id


def test_a_server_stops_the_replay_build_under_way(tmp_path: Path) -> None:
    marks = tmp_path / "begun"
    marks.mkdir()
    answered: list[int] = []
    with thread_server(tmp_path) as server:
        replays: ReplayCache = server.app.state.replays
        processes = replays.builds
        assert isinstance(processes, ProcessBuilds)
        game_id = finished_game(server)
        processes.function = partial(hang_always, str(marks))

        def ask() -> None:
            try:
                r = httpx.get(f"{server.url}/api/games/{game_id}/replay", timeout=TIMEOUT)
                answered.append(r.status_code)
            except httpx.HTTPError:
                answered.append(0)  # the server closed the connection as it stopped

        asker = threading.Thread(target=ask)
        asker.start()
        asyncio.run(until(lambda: bool(begun(marks)), "the build's beginning"))
        [pid] = begun(marks)
    asker.join(TIMEOUT)
    asyncio.run(until(lambda: gone(pid), "the build's end with the server"))
    assert answered and answered[0] != 200


def test_replay_workers_0_builds_in_a_thread_and_answers_alike(tmp_path: Path) -> None:
    with thread_server(tmp_path, replay_workers=0) as server:
        assert isinstance(server.app.state.replays.builds, ThreadBuilds)
        game_id = finished_game(server)
        with server.http() as http:
            replay = http.get(f"/api/games/{game_id}/replay")
            text = http.get(f"/api/games/{game_id}/record.txt")
            whole = http.get(f"/api/games/{game_id}")
        record = server.app.state.hub.store.get_game(game_id)
    assert replay.status_code == text.status_code == whole.status_code == 200
    assert replay.content == build("replay", record).json
    assert text.content == build("replay", record).text
    assert whole.content == build("game", record).json
