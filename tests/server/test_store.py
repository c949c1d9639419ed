"""The SQLAlchemy store: room snapshots and the archive, on SQLite (the embedded default) and on
PostgreSQL (POSTGRES_URL, or the local trust-auth server when one answers)."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from sqlalchemy import event, insert, select

from conflictology.server.backend import BackendUnavailable
from conflictology.server.config import ServerConfig, default_db_url
from conflictology.server.store import Store, _encode, rooms_table
from server_helpers import Player, auth, make_table, play_randomly, start, thread_server

LOCAL_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def postgres_url() -> str | None:
    url = os.environ.get("POSTGRES_URL")
    if url:
        return url
    try:
        import psycopg

        psycopg.connect("postgresql://postgres@127.0.0.1:5432/test", connect_timeout=2).close()
    except Exception:
        return None
    return LOCAL_POSTGRES


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.sqlite3'}"
        return
    url = postgres_url()
    if url is None:
        pytest.skip("no PostgreSQL server (set POSTGRES_URL)")
    yield url


def snapshot(code: str, version: int) -> dict[str, object]:
    return {"code": code, "version": version, "status": "lobby", "updated": time.time(), "seats": [version]}


def test_snapshots_are_saved_replaced_and_deleted(store_url: str) -> None:
    store = Store(store_url)
    code = uuid.uuid4().hex[:8].upper()
    try:
        store.save_room(snapshot(code, 1))
        store.save_room(snapshot(code, 2))
        mine = [s for s in store.load_rooms() if s["code"] == code]
        assert len(mine) == 1 and mine[0]["version"] == 2 and mine[0]["seats"] == [2]
        game_id = uuid.uuid4().hex
        record = {
            "id": game_id,
            "room": code,
            "game": "capitol",
            "public": True,
            "finished": time.time(),
            "actions": [1, 2],
        }
        private = {**record, "id": uuid.uuid4().hex, "public": False}
        store.archive(record)
        store.archive(private)
        store.archive({**record, "actions": []})  # archiving twice keeps the first
        assert store.get_game(game_id) == record
        listed = [g["id"] for g in store.recent_games(1000)]
        # Only public rooms' games are listed: a private room's code must not reach strangers.
        assert game_id in listed and private["id"] not in listed
        store.delete_room(code)
        assert not [s for s in store.load_rooms() if s["code"] == code]
        assert store.get_game("nope") is None
    finally:
        store.delete_room(code)
        store.close()


def game_snapshot(code: str, game_id: str | None, actions: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "code": code,
        "version": len(actions),
        "status": "playing",
        "updated": time.time(),
        "game_id": game_id,
        "state": "{}",
        "actions": list(actions),  # (as Room.snapshot: a new list of the room's own records)
    }


def log_rows(store: Store, code: str) -> list[tuple[int, str]]:
    from conflictology.server.store import actions_table

    with store.engine.connect() as conn:
        rows = conn.execute(
            select(actions_table.c.idx, actions_table.c.data)
            .where(actions_table.c.code == code)
            .order_by(actions_table.c.idx)
        ).all()
    return [(r[0], r[1]) for r in rows]


class Written:
    """The action rows and snapshot bytes each save sends to the database, on either path: the
    driver's own (SQLite in a file) or SQLAlchemy's (PostgreSQL, SQLite in memory)."""

    def __init__(self, store: Store) -> None:
        self.action_rows = 0
        self.snapshot_bytes = 0
        self.store = store
        event.listen(store.engine, "before_cursor_execute", self._seen)

    def _seen(self, conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: bool) -> None:
        self._count(statement, params if many else [params])

    def _count(self, statement: str, rows: Any) -> None:
        if statement.startswith("INSERT INTO conflictology_actions"):
            self.action_rows += len(rows)
        elif statement.startswith("INSERT INTO conflictology_rooms"):
            self.snapshot_bytes += sum(len(r[4]) for r in rows)

    def save(self, snapshot: dict[str, Any]) -> None:
        if self.store._direct:
            # The direct path bypasses SQLAlchemy's events: its statements are counted here.
            real = self.store._save_direct

            def counted(snapshots: list[dict[str, Any]], records: list[dict[str, Any]], sql: Any) -> None:
                from conflictology.server.store import _room_row

                self._count(sql.upsert, [_room_row(s) for s in snapshots])
                before = self.store._writer.driver_connection.total_changes if self.store._writer else 0
                real(snapshots, records, sql)
                changed = self.store._writer.driver_connection.total_changes - before
                self.action_rows += changed - len(snapshots)  # (a snapshot row each, the rest the log's)

            self.store._save_direct = counted  # type: ignore[method-assign]
            try:
                self.store.save_rooms([snapshot])
            finally:
                del self.store._save_direct
            return
        self.store.save_rooms([snapshot])


def test_a_long_games_save_writes_only_the_records_it_adds(store_url: str) -> None:
    """The action log is appended to, never written again: the 400th move writes one record and a
    snapshot no bigger than the 5th's; a store started afresh reads the log and goes on appending."""
    store = Store(store_url)
    code = uuid.uuid4().hex[:8].upper()
    game_id = uuid.uuid4().hex
    actions: list[dict[str, Any]] = []
    try:
        written = Written(store)
        sizes = []
        for n in range(400):
            actions.append({"seq": n, "seat": n % 4, "action": {"type": "pass", "n": n}, "by": "player"})
            rows_before, bytes_before = written.action_rows, written.snapshot_bytes
            snapshot = game_snapshot(code, game_id, actions)
            snapshot["updated"] = float(int(snapshot["updated"]))  # a clock reading has 11-18 digits
            written.save(snapshot)
            assert written.action_rows - rows_before == 1
            sizes.append(written.snapshot_bytes - bytes_before)
        assert max(sizes) - min(sizes) <= 8  # (the digits of version, logged and updated)
        assert [idx for idx, _ in log_rows(store, code)] == list(range(400))
        store.close()
        store = Store(store_url)
        (loaded,) = [s for s in store.load_rooms() if s["code"] == code]
        assert loaded["actions"] == actions and "logged" not in loaded
        # The loaded records are the room's own from then on (Room.restore keeps them).
        log = loaded["actions"]
        log.append({"seq": 400, "seat": 0, "action": {"type": "pass"}, "by": "timeout"})
        written = Written(store)
        written.save(game_snapshot(code, game_id, log))
        assert written.action_rows == 1
        (again,) = [s for s in Store(store_url).load_rooms() if s["code"] == code]
        assert again["actions"] == log
    finally:
        store.delete_room(code)
        assert log_rows(store, code) == []
        store.close()


def test_a_log_missing_rows_loads_what_is_there_says_so_and_is_written_whole_next(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Rows gone under a committed snapshot (a table changed by hand, half a backup): the room still
    loads, with the records there are, a warning names it, and its next save writes its log whole."""
    from conflictology.server.store import actions_table

    url = f"sqlite:///{tmp_path / 'holes.sqlite3'}"
    store = Store(url)
    actions = [{"seq": n, "seat": 0, "action": {"type": "pass"}, "by": "player"} for n in range(5)]
    for n in range(1, 6):
        store.save_rooms([game_snapshot("HOLES", "g1", actions[:n])])
    with store.engine.begin() as conn:
        conn.execute(actions_table.delete().where(actions_table.c.idx >= 3))
    store.close()
    store = Store(url)
    try:
        with caplog.at_level("WARNING", logger="conflictology.server"):
            (loaded,) = store.load_rooms()
        assert loaded["actions"] == actions[:3]
        assert "room HOLES: 2 of its 5 logged actions are missing" in caplog.text
        log = loaded["actions"]
        log.append(actions[3])
        store.save_rooms([game_snapshot("HOLES", "g1", log)])
        # The whole log written again, not one row after a hole.
        assert [(idx, msgspec.json.decode(data)) for idx, data in log_rows(store, "HOLES")] == list(
            enumerate(actions[:4])
        )
    finally:
        store.close()


def test_a_room_restored_from_the_store_appends_to_its_log(tmp_path: Path) -> None:
    """Through Room.restore (as the hub starts): the restored room's records are the store's, so
    its next move writes one record, not the game again."""
    from conflictology.server.protocol import RoomSettings
    from conflictology.server.rooms import Room

    url = f"sqlite:///{tmp_path / 'restored.sqlite3'}"
    room, _ = Room.create("RESTO", "capitol", "Ada", {}, RoomSettings(timers=False))
    room.join("Bob")
    room.start(1000.0, seed=3)

    def move(room: Room) -> None:
        assert room.state is not None
        seat = room.state.waiting_for()[0]
        room.act(seat, room.state.legal_actions(seat)[0], room.seq, 1000.0)

    store = Store(url)
    for _ in range(12):
        move(room)
        store.save_rooms([room.snapshot()])
    store.close()
    store = Store(url)
    try:
        (snapshot,) = store.load_rooms()
        restored = Room.restore(snapshot)
        assert restored.actions == room.actions
        move(restored)
        written = Written(store)
        written.save(restored.snapshot())
        assert written.action_rows == 1
        assert Store(url).load_rooms()[0]["actions"] == restored.actions
    finally:
        store.close()


def test_a_rematch_starts_the_log_afresh(store_url: str) -> None:
    store = Store(store_url)
    code = uuid.uuid4().hex[:8].upper()
    first, second = uuid.uuid4().hex, uuid.uuid4().hex
    try:
        old = [{"seq": n, "seat": 0, "action": {"type": "a"}, "by": "player"} for n in range(6)]
        for n in range(1, 7):
            store.save_rooms([game_snapshot(code, first, old[:n])])
        store.save_rooms([game_snapshot(code, None, [])])  # the rematch's lobby
        assert log_rows(store, code) == []
        new = [{"seq": 10 + n, "seat": 1, "action": {"type": "b"}, "by": "player"} for n in range(2)]
        store.save_rooms([game_snapshot(code, second, new[:1])])
        store.save_rooms([game_snapshot(code, second, new)])
        # A new game saved with no lobby between (a game started at once): the same.
        (loaded,) = [s for s in Store(store_url).load_rooms() if s["code"] == code]
        assert loaded["game_id"] == second and loaded["actions"] == new
        third = [{"seq": 20, "seat": 2, "action": {"type": "c"}, "by": "player"}]
        store.save_rooms([game_snapshot(code, uuid.uuid4().hex, third)])
        assert len(log_rows(store, code)) == 1
        (loaded,) = [s for s in Store(store_url).load_rooms() if s["code"] == code]
        assert loaded["actions"] == third
    finally:
        store.delete_room(code)
        store.close()


def test_a_room_saved_with_its_log_in_the_snapshot_loads_and_is_converted_at_its_next_save(
    store_url: str,
) -> None:
    """A room saved by an earlier version (its whole log inside the snapshot's JSON)."""
    store = Store(store_url)
    code = uuid.uuid4().hex[:8].upper()
    game_id = uuid.uuid4().hex
    actions = [{"seq": n, "seat": n % 2, "action": {"type": "x"}, "by": "player"} for n in range(5)]
    old = game_snapshot(code, game_id, actions)
    try:
        with store.engine.begin() as conn:
            conn.execute(
                insert(rooms_table).values(
                    code=code, version=5, status="playing", updated=old["updated"], data=_encode(old)
                )
            )
        (loaded,) = [s for s in store.load_rooms() if s["code"] == code]
        assert loaded == old
        log = loaded["actions"]
        log.append({"seq": 5, "seat": 1, "action": {"type": "y"}, "by": "player"})
        store.save_rooms([game_snapshot(code, game_id, log)])
        assert [idx for idx, _ in log_rows(store, code)] == list(range(6))
        with store.engine.connect() as conn:
            data = conn.execute(select(rooms_table.c.data).where(rooms_table.c.code == code)).scalar_one()
        assert "actions" not in msgspec.json.decode(data)
        (loaded,) = [s for s in Store(store_url).load_rooms() if s["code"] == code]
        assert loaded["actions"] == log
    finally:
        store.delete_room(code)
        store.close()


def test_a_failed_write_of_the_log_is_written_again_with_the_next_batch(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'log.sqlite3'}")
    game_id = uuid.uuid4().hex
    actions = [{"seq": n, "seat": 0, "action": {"type": "x"}, "by": "player"} for n in range(4)]
    try:
        store.save_rooms([game_snapshot("LOGGD", game_id, actions[:2])])
        assert store._writer is not None
        store._writer.driver_connection.close()
        with pytest.raises(Exception, match="closed"):
            store.save_rooms([game_snapshot("LOGGD", game_id, actions[:3])])
        assert len(log_rows(store, "LOGGD")) == 2
        store.save_rooms([game_snapshot("LOGGD", game_id, actions)])
        (loaded,) = store.load_rooms()
        assert loaded["actions"] == actions and loaded["version"] == 4
    finally:
        store.close()


def test_a_batch_of_snapshots_on_sqlite_goes_to_the_driver_and_a_failed_write_changes_nothing(
    tmp_path: Path,
) -> None:
    """SQLite in a file: snapshots and the games they end are written on the writer's own
    connection. A write that fails (here its connection closed under it, or a game's row refused)
    leaves the rows as they were, and the next batch is written on a fresh connection; a game
    written twice keeps its first row."""
    store = Store(f"sqlite:///{tmp_path / 'direct.sqlite3'}")
    try:
        store.save_rooms([snapshot("AAAA", 1), snapshot("BBBB", 1)])
        assert store._writer is not None  # the direct path was taken
        store._writer.driver_connection.close()
        with pytest.raises(Exception, match="closed"):
            store.save_rooms([snapshot("AAAA", 2), snapshot("BBBB", 2)])
        assert {s["code"]: s["version"] for s in store.load_rooms()} == {"AAAA": 1, "BBBB": 1}
        store.save_rooms([snapshot("AAAA", 3)])
        record = {"id": uuid.uuid4().hex, "room": "BBBB", "game": "capitol", "public": True, "finished": 1.0}
        through_sqlalchemy: list[str] = []
        event.listen(store.engine, "before_cursor_execute", lambda *a: through_sqlalchemy.append(a[2]))
        store.save_rooms([snapshot("BBBB", 3)], [record])
        assert through_sqlalchemy == []  # the game went with its snapshot, on the writer's connection
        assert {s["code"]: s["version"] for s in store.load_rooms()} == {"AAAA": 3, "BBBB": 3}
        assert store.get_game(record["id"]) == record
        store.save_rooms([snapshot("BBBB", 4)], [{**record, "finished": 2.0}])
        assert store.get_game(record["id"]) == record
        refused = {**record, "id": uuid.uuid4().hex, "room": None}  # the room column is NOT NULL
        with pytest.raises(Exception, match="NOT NULL"):
            store.save_rooms([snapshot("AAAA", 5)], [refused])
        assert {s["code"]: s["version"] for s in store.load_rooms()} == {"AAAA": 3, "BBBB": 4}
        assert store.get_game(refused["id"]) is None
    finally:
        store.close()
    # What was committed on the writer's connection is in the file for whoever opens it next.
    again = Store(f"sqlite:///{tmp_path / 'direct.sqlite3'}")
    try:
        assert {s["code"]: s["version"] for s in again.load_rooms()} == {"AAAA": 3, "BBBB": 4}
    finally:
        again.close()


@pytest.mark.postgres
def test_a_server_on_postgresql_plays_and_restores(tmp_path: Path) -> None:
    url = postgres_url()
    if url is None:
        pytest.skip("no PostgreSQL server (set POSTGRES_URL)")
    with thread_server(tmp_path, db_url=url) as srv:
        table = make_table(srv, "capitol", humans=2, bots=1, level="random", settings={"timers": False})
        players = [Player(srv, table.code, table.tokens[i], i) for i in range(2)]
        start(table)
        play_randomly(players, stop_after=2)
        with srv.http() as http:
            before = http.get(f"/api/rooms/{table.code}").json()
        for p in players:
            p.close()
    with thread_server(tmp_path, db_url=url) as srv:
        with srv.http() as http:
            after = http.get(f"/api/rooms/{table.code}").json()
        assert after["game_id"] == before["game_id"] and after["status"] == before["status"]
        players = [Player(srv, table.code, table.tokens[i], i) for i in range(2)]
        play_randomly(players, seed=5)
        with srv.http() as http:
            assert (
                http.get(f"/api/games/{before['game_id']}", headers=auth(table.host_token)).json()["status"]
                == "over"
            )
        for p in players:
            p.close()
    store = Store(url)
    store.delete_room(table.code)
    store.close()


def test_the_default_database_is_a_sqlite_file_in_the_user_data_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path))
    url = default_db_url()
    assert url.startswith("sqlite:///") and url.endswith("conflictology.sqlite3")
    assert str(tmp_path) in url
    assert ServerConfig().resolved_db_url() == url
    assert ServerConfig(db_url="sqlite:///x.db").resolved_db_url() == "sqlite:///x.db"


def test_the_batched_writer_retries_an_archive_until_the_database_takes_it(tmp_path: Path) -> None:
    """A database that refuses an archive gets it on a later batch, however many tries that takes:
    a finished game is never given up (issue 31). Readers' flushes (GET /api/games…) try too."""
    import asyncio

    from sqlalchemy.exc import OperationalError

    from conflictology.server.config import ServerConfig
    from conflictology.server.hub import Hub

    store = Store(f"sqlite:///{tmp_path / 'retry.sqlite3'}")
    hub = Hub(ServerConfig(), store)
    real_save = store.save_rooms
    refusals = [12]

    def save_rooms(snapshots: list[dict[str, Any]], records: list[dict[str, Any]] | None = None) -> None:
        if records and refusals[0] > 0:
            refusals[0] -= 1
            raise OperationalError("INSERT", {}, Exception("database or disk is full"))
        real_save(snapshots, records)

    store.save_rooms = save_rooms  # type: ignore[method-assign]

    async def main() -> None:
        for game_id in ("flaky", "fine"):
            hub.durability.unarchived[game_id] = {
                "id": game_id, "room": "ABCDE", "game": "capitol", "public": True, "finished": time.time()
            }  # fmt: skip
        for _ in range(2):
            await hub.persist()
        assert set(hub.durability.unarchived) == {"flaky", "fine"}
        assert hub.health()["database"] == "failing"
        assert hub.durability.archive_stats().waiting == 2
        for _ in range(10):  # more tries than the writer used to allow before giving up
            await hub.persist(by_writer=True)
        assert set(hub.durability.unarchived) == {"flaky", "fine"}
        await hub.persist(by_writer=True)
        assert hub.durability.unarchived == {}
        assert hub.health()["database"] == "ok" and hub.durability.archive_stats().waiting == 0

    try:
        asyncio.run(main())
        assert refusals == [0]
        assert store.get_game("flaky") is not None and store.get_game("fine") is not None
    finally:
        store.close()


def test_a_record_the_database_refuses_does_not_stop_the_snapshots(tmp_path: Path) -> None:
    """The database answers but refuses a game's row (not an outage): the snapshots are saved alone,
    the game waits (health failing), and it is written once the database takes it."""
    import asyncio

    from conflictology.server.config import ServerConfig
    from conflictology.server.hub import Hub
    from conflictology.server.protocol import RoomSettings
    from conflictology.server.rooms import Room

    store = Store(f"sqlite:///{tmp_path / 'refused.sqlite3'}")
    hub = Hub(ServerConfig(), store)
    real_save = store.save_rooms
    refuse = [True]

    def save_rooms(snapshots: list[dict[str, Any]], records: list[dict[str, Any]] | None = None) -> None:
        if records and refuse[0]:
            raise ValueError("a row it will not take")
        real_save(snapshots, records)

    store.save_rooms = save_rooms  # type: ignore[method-assign]

    async def main() -> None:
        room, _ = Room.create("REFRE", "capitol", "Host", None, RoomSettings())
        await hub.backend.insert(room)
        hub.durability.unarchived["g1"] = {
            "id": "g1", "room": "REFRE", "game": "capitol", "public": True, "finished": time.time()
        }  # fmt: skip
        await hub.persist(by_writer=True)
        assert [s["code"] for s in store.load_rooms()] == ["REFRE"]
        assert set(hub.durability.unarchived) == {"g1"} and hub.health()["database"] == "failing"
        refuse[0] = False
        await hub.persist(by_writer=True)
        assert hub.durability.unarchived == {} and hub.health()["database"] == "ok"

    try:
        asyncio.run(main())
        assert store.get_game("g1") is not None
    finally:
        store.close()


def test_stopping_during_a_snapshot_write_keeps_the_newest_snapshot(tmp_path: Path) -> None:
    """The server stops while the batched writer's thread is saving an older snapshot of a room: the
    newer one written at the stop must not be overwritten by it (a restart would resume a move back,
    from a state the players had already left)."""
    import asyncio
    import threading

    from conflictology.server.config import ServerConfig
    from conflictology.server.hub import Hub
    from conflictology.server.protocol import RoomSettings
    from conflictology.server.rooms import Room

    store = Store(f"sqlite:///{tmp_path / 'stop.sqlite3'}")
    store.local = False  # its first write waits on purpose: in a thread, as a remote database's are
    hub = Hub(ServerConfig(snapshot_seconds=0.01), store)
    real_save = store.save_rooms
    release = threading.Event()
    first = threading.Event()

    def save_rooms(snapshots: list[dict[str, Any]], records: list[dict[str, Any]] | None = None) -> None:
        if not first.is_set():
            first.set()
            release.wait(5)  # the first write (version 1) is slow
        real_save(snapshots, records)

    store.save_rooms = save_rooms  # type: ignore[method-assign]

    async def main() -> None:
        await hub.start()
        room, _ = Room.create("STOPW", "capitol", "Host", None, RoomSettings())
        await hub.backend.insert(room)
        await asyncio.to_thread(first.wait, 5)  # version 1 is being written
        # Version 2, not waited for (hub.change would wait for it to be saved, behind version 1).
        await hub.backend.update("STOPW", lambda r: r.past_games.append("newer"))
        asyncio.get_running_loop().call_later(0.3, release.set)
        await hub.stop()

    try:
        asyncio.run(main())
        (saved,) = store.load_rooms()
        assert saved["version"] == 2 and saved["past_games"] == ["newer"]
    finally:
        store.close()


def test_snapshots_the_database_refused_are_written_with_a_later_batch(tmp_path: Path) -> None:
    """A database that refuses snapshot writes for a moment (a full disk, a lock held too long) gets
    them later, the newest of each room, instead of losing them until the room changes again."""
    import asyncio

    from conflictology.server.config import ServerConfig
    from conflictology.server.hub import Hub
    from conflictology.server.protocol import RoomSettings
    from conflictology.server.rooms import Room

    store = Store(f"sqlite:///{tmp_path / 'refuse.sqlite3'}")
    hub = Hub(ServerConfig(), store)
    real_save = store.save_rooms
    refusals = [2]

    def save_rooms(snapshots: list[dict[str, Any]], records: list[dict[str, Any]] | None = None) -> None:
        if refusals[0] > 0:
            refusals[0] -= 1
            raise RuntimeError("database unavailable")
        real_save(snapshots, records)

    store.save_rooms = save_rooms  # type: ignore[method-assign]

    async def main() -> None:
        for code in ("REFUA", "REFUB"):
            room, _ = Room.create(code, "capitol", "Host", None, RoomSettings())
            await hub.backend.insert(room)
        await hub.persist(by_writer=True)  # refused
        assert store.load_rooms() == []
        # While the database refuses them, no new change is taken (nothing would be shown)...
        with pytest.raises(BackendUnavailable):
            await hub.change("REFUA", lambda r: r.past_games.append("refused"))
        # ...but one already made (in memory) when the refusal came is saved with the next batch.
        await hub.backend.update("REFUA", lambda r: r.past_games.append("meanwhile"))
        await hub.persist(by_writer=True)  # refused again
        await hub.persist(by_writer=True)  # accepted: both rooms, the newest of each
        assert hub.durability.unsaved == {}

    try:
        asyncio.run(main())
        saved = {s["code"]: s for s in store.load_rooms()}
        assert set(saved) == {"REFUA", "REFUB"}
        assert saved["REFUA"]["version"] == 2 and saved["REFUA"]["past_games"] == ["meanwhile"]
    finally:
        store.close()


def test_a_reader_of_the_archive_flushes_finished_games_only(tmp_path: Path) -> None:
    """GET /api/games… writes what is waiting to be archived first (so a game is listed as soon as it
    ends), but leaves the rooms' snapshots to the batched writer: reads do not set off writes."""
    import asyncio

    from conflictology.server.config import ServerConfig
    from conflictology.server.hub import Hub
    from conflictology.server.protocol import RoomSettings
    from conflictology.server.rooms import Room

    store = Store(f"sqlite:///{tmp_path / 'reader.sqlite3'}")
    hub = Hub(ServerConfig(), store)

    async def main() -> None:
        room, _ = Room.create("READR", "capitol", "Host", None, RoomSettings())
        await hub.backend.insert(room)
        hub.durability.unarchived["g1"] = {
            "id": "g1", "room": "READR", "game": "capitol", "public": True, "finished": time.time()
        }  # fmt: skip
        await hub.persist()
        assert store.load_rooms() == [] and "READR" in hub.durability.unsaved
        assert hub.durability.unarchived == {}
        await hub.persist(by_writer=True)
        assert [s["code"] for s in store.load_rooms()] == ["READR"]

    try:
        asyncio.run(main())
    finally:
        store.close()
