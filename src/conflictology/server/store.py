"""Durable storage through SQLAlchemy: a snapshot of every room (saved on each change), its game's
action log, and the archive of finished games. SQLite by default; any SQLAlchemy URL (PostgreSQL via
psycopg) works.

A room's action log is kept apart from its snapshot (``conflictology_actions``, one row per record,
appended to): a save writes the snapshot and only the records added since the last one, so a move
costs the same at the 500th record as at the 5th. The snapshot says how many records are its own
(``logged``); rooms saved before carry their log inside the snapshot, are read as they are and are
converted at their next save."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import time
from pathlib import Path
from typing import Any, NamedTuple

import msgspec
from sqlalchemy import (
    Column,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    delete,
    event,
    insert,
    select,
)
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

log = logging.getLogger("conflictology.server")

metadata = MetaData()

rooms_table = Table(
    "conflictology_rooms",
    metadata,
    Column("code", String(16), primary_key=True),
    Column("version", Integer, nullable=False),
    Column("status", String(16), nullable=False),
    Column("updated", Float, nullable=False),
    Column("data", Text, nullable=False),
)

# A room's action log, record by record: ``idx`` is the record's place in the game's log, ``data``
# its JSON. Rows from ``idx = logged`` on (none but for a failure) belong to no snapshot.
actions_table = Table(
    "conflictology_actions",
    metadata,
    Column("code", String(16), primary_key=True),
    Column("idx", Integer, primary_key=True, autoincrement=False),
    Column("data", Text, nullable=False),
)

games_table = Table(
    "conflictology_games",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("room", String(16), nullable=False),
    Column("game", String(40), nullable=False),
    Column("finished", Float, nullable=False),
    Column("data", Text, nullable=False),
)


def _encode(data: Any) -> str:
    return msgspec.json.encode(data).decode()


def _room_row(snapshot: dict[str, Any]) -> tuple[Any, ...]:
    """A snapshot as the upsert's parameters: code, version, status, updated, data (without the
    action log, whose length it says as ``logged``)."""
    body = dict(snapshot)
    body["logged"] = len(body.pop("actions", None) or ())
    return snapshot["code"], snapshot["version"], snapshot["status"], snapshot["updated"], _encode(body)


class _Statements(NamedTuple):
    """The statements a batch is written with, in the database's own SQL (SQLite, PostgreSQL)."""

    upsert: str  # a room's snapshot row
    forget: str  # a room's whole log (before it is written again from its start)
    append: str  # a record of a room's log
    archive: str  # a finished game (kept as first written: one row per game)


class _Log:
    """What a save of a room's action log writes, and what the store knows of the log once it is
    committed: the game it is of, how many records are stored, and the last of them (the record
    itself: a snapshot's log holds the room's own records, so the same object says it is the same
    log, not a new game's or a restored copy's)."""

    __slots__ = ("code", "count", "game_id", "last", "restart", "rows")

    def __init__(self, code: str, game_id: Any, actions: list[Any], start: int | None) -> None:
        self.code = code
        self.game_id = game_id
        self.count = len(actions)
        self.last = actions[-1] if actions else None
        # From scratch (a new game, a rematch, a room this store has not saved since it started or
        # saved in the old format): the room's rows are deleted and the whole log written.
        self.restart = start is None
        self.rows = [(code, i, _encode(actions[i])) for i in range(start or 0, len(actions))]


def is_outage(exc: BaseException) -> bool:
    """The database did not take a write for a reason of its own, not of the rows': it does not
    answer (refused or dropped connections), or it answers but cannot write now (SQLite's file locked
    by another process past the busy timeout, a full disk). Such a write is tried again as it was."""
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    # (sqlite3's own: the snapshots' writes go to the driver directly, see Store._save_direct)
    return isinstance(exc, OperationalError | InterfaceError | sqlite3.OperationalError)


_GAME_COLUMNS = ("id", "room", "game", "finished", "data")


def _game_rows(records: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Finished games as rows of ``_GAME_COLUMNS``, one per game (keyed by its id: whoever wrote it
    how many times)."""
    games = {r["id"]: r for r in records}.values()
    return [(r["id"], r["room"], r["game"], r["finished"] or time.time(), _encode(r)) for r in games]


class Store:
    def __init__(self, url: str) -> None:
        parsed = make_url(url)
        if parsed.drivername in ("postgresql", "postgres"):
            # A plain postgresql:// URL means psycopg 3 (the driver this project installs);
            # SQLAlchemy's own default would be psycopg2.
            parsed = parsed.set(drivername="postgresql+psycopg")
            url = parsed.render_as_string(hide_password=False)
        if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        self.engine: Engine = create_engine(url, future=True, pool_pre_ping=True)
        # A file on this machine: a write is a few hundred microseconds of work, done where it is
        # asked for (the hub's writer does it on its event loop: from a thread, each of SQLite's
        # steps would wait for the busy loop to hand back the GIL, several times a write).
        self.local = parsed.get_backend_name() == "sqlite"
        if self.local:

            @event.listens_for(self.engine, "connect")
            def _pragmas(dbapi_conn: Any, _record: Any) -> None:
                # WAL with synchronous=NORMAL: a committed change survives the process being killed
                # (SIGKILL), which is the promise; only a power cut could lose the last instant. A
                # commit then writes to the log and never waits for the disk, except at a
                # checkpoint: those are made apart (checkpoint()), not by whichever commit comes.
                cur = dbapi_conn.cursor()
                cur.execute("PRAGMA journal_mode=WAL")
                cur.execute("PRAGMA synchronous=NORMAL")
                cur.execute("PRAGMA busy_timeout=5000")
                cur.execute("PRAGMA wal_autocheckpoint=0")
                cur.close()

        # SQLite and PostgreSQL write a batch as one statement the driver runs row after row (five
        # times faster than through the query builder); another database, as delete and insert.
        marker = {"qmark": "?", "format": "%s", "pyformat": "%s"}.get(self.engine.dialect.paramstyle)
        self._sql: _Statements | None = None
        if marker is not None and parsed.get_backend_name() in ("sqlite", "postgresql"):
            self._sql = _Statements(
                upsert=(
                    "INSERT INTO conflictology_rooms (code, version, status, updated, data) "
                    f"VALUES ({', '.join([marker] * 5)}) ON CONFLICT (code) DO UPDATE SET "
                    "version = excluded.version, status = excluded.status, updated = excluded.updated, "
                    "data = excluded.data"
                ),
                forget=f"DELETE FROM conflictology_actions WHERE code = {marker}",
                # (a row already there, which no snapshot counts, is replaced)
                append=(
                    "INSERT INTO conflictology_actions (code, idx, data) "
                    f"VALUES ({', '.join([marker] * 3)}) "
                    "ON CONFLICT (code, idx) DO UPDATE SET data = excluded.data"
                ),
                archive=(
                    f"INSERT INTO conflictology_games ({', '.join(_GAME_COLUMNS)}) "
                    f"VALUES ({', '.join([marker] * len(_GAME_COLUMNS))}) ON CONFLICT (id) DO NOTHING"
                ),
            )
        # SQLite in a file: a batch of snapshots and the games they end (the hub's writer, every few
        # milliseconds while rooms change) goes to the driver directly on a connection kept for it.
        # Through SQLAlchemy's transaction (a pool checkout with its pre-ping, the events, the
        # commit) a batch of one snapshot cost 110-170 µs against 35 µs (benchmarks/server.md,
        # 2026-12-04).
        self._direct = self.local and parsed.database not in (None, "", ":memory:")
        self._writer: Any = None
        # Each room's log as stored, by room code: what the next save need not write again. Known
        # only of the logs this store wrote or read; any other is written whole at its next save.
        self._logs: dict[str, _Log] = {}
        try:
            metadata.create_all(self.engine)
        except DBAPIError:
            # Several processes started together on a fresh database: another one created the
            # tables between our check and our CREATE. Once more, now that they exist.
            time.sleep(0.2)
            metadata.create_all(self.engine)

    def close(self) -> None:
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._writer.close()
            self._writer = None
        if self.local:
            with contextlib.suppress(Exception):
                self.checkpoint()
        self.engine.dispose()

    def checkpoint(self) -> None:
        """Copy SQLite's write-ahead log into the database file (in a thread of the caller's: it
        waits for the disk). A no-op elsewhere."""
        if self.local:
            with self.engine.connect() as conn:
                conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")

    # ---- rooms -----------------------------------------------------------------------------------

    def save_room(self, snapshot: dict[str, Any]) -> None:
        self.save_rooms([snapshot])

    def _log_of(self, snapshot: dict[str, Any]) -> _Log:
        """The records of this snapshot's log that are not stored yet."""
        actions = snapshot.get("actions") or []
        known = self._logs.get(snapshot["code"])
        start = None
        if (
            known is not None
            and known.game_id == snapshot.get("game_id")
            and known.count <= len(actions)
            and (known.count == 0 or actions[known.count - 1] is known.last)
        ):
            start = known.count
        return _Log(snapshot["code"], snapshot.get("game_id"), actions, start)

    def _logged(self, logs: list[_Log]) -> None:
        """The logs' rows are committed: the next saves append to them."""
        for entry in logs:
            entry.rows = []
            self._logs[entry.code] = entry

    def save_rooms(
        self, snapshots: list[dict[str, Any]], records: list[dict[str, Any]] | None = None
    ) -> None:
        """Several snapshots in one transaction (the hub's group commit: on the move's path, so as
        little as possible between the rows and the driver), with the finished games they end: a
        game's end and its archive are committed together or not at all."""
        if not snapshots and not records:
            return
        if self._direct and self._sql is not None:
            self._save_direct(snapshots, records or [], self._sql)
            return
        logs = [self._log_of(s) for s in snapshots]
        with self.engine.begin() as conn:
            self._save_rooms(conn, snapshots, logs)
            self._archive_rows(conn, records or [])
        self._logged(logs)

    def _save_direct(
        self, snapshots: list[dict[str, Any]], records: list[dict[str, Any]], sql: _Statements
    ) -> None:
        """The snapshots, their new log records and the games they end in one transaction of the
        writer's own connection (SQLite in a file). A write that fails is rolled back and its
        connection dropped: the next one starts afresh. (A game ends every few dozen moves a room:
        through SQLAlchemy's transaction, the batches holding one took nearly half of the writes'
        time at 100 rooms playing at once; benchmarks/server.md.)"""
        if self._writer is None:
            self._writer = self.engine.raw_connection()
        conn = self._writer.driver_connection
        logs = [self._log_of(s) for s in snapshots]
        try:
            conn.executemany(sql.upsert, [_room_row(s) for s in snapshots])
            restarted = [(entry.code,) for entry in logs if entry.restart]
            if restarted:
                conn.executemany(sql.forget, restarted)
            rows = [row for entry in logs for row in entry.rows]
            if rows:
                conn.executemany(sql.append, rows)
            if records:
                conn.executemany(sql.archive, _game_rows(records))
            conn.commit()
        except BaseException:
            writer, self._writer = self._writer, None
            with contextlib.suppress(Exception):
                conn.rollback()
            with contextlib.suppress(Exception):
                writer.invalidate()
            raise
        self._logged(logs)

    def _save_rooms(self, conn: Connection, snapshots: list[dict[str, Any]], logs: list[_Log]) -> None:
        if not snapshots:
            return
        restarted = [entry.code for entry in logs if entry.restart]
        rows = [row for entry in logs for row in entry.rows]
        if self._sql is not None:
            conn.exec_driver_sql(self._sql.upsert, [_room_row(s) for s in snapshots])
            if restarted:
                conn.exec_driver_sql(self._sql.forget, [(code,) for code in restarted])
            if rows:
                conn.exec_driver_sql(self._sql.append, rows)
            return
        fields = ("code", "version", "status", "updated", "data")
        rooms = [dict(zip(fields, _room_row(s), strict=True)) for s in snapshots]
        conn.execute(delete(rooms_table).where(rooms_table.c.code.in_([r["code"] for r in rooms])))
        conn.execute(insert(rooms_table), rooms)
        if restarted:
            conn.execute(delete(actions_table).where(actions_table.c.code.in_(restarted)))
        for entry in logs:
            if entry.rows and not entry.restart:
                conn.execute(
                    delete(actions_table).where(
                        actions_table.c.code == entry.code, actions_table.c.idx >= entry.rows[0][1]
                    )
                )
        if rows:
            conn.execute(insert(actions_table), [{"code": c, "idx": i, "data": d} for c, i, d in rows])

    def delete_room(self, code: str) -> None:
        """The room's snapshot and its action log."""
        with self.engine.begin() as conn:
            conn.execute(delete(rooms_table).where(rooms_table.c.code == code))
            conn.execute(delete(actions_table).where(actions_table.c.code == code))
        self._logs.pop(code, None)

    def load_rooms(self) -> list[dict[str, Any]]:
        """Every room's snapshot with its action log, read in one transaction (a rematch saved
        between two reads cannot pair a snapshot with another game's log)."""
        with self.engine.connect() as conn:
            if self.local:
                conn.exec_driver_sql("BEGIN")  # (pysqlite begins nothing before a write)
            elif self.engine.dialect.name == "postgresql":
                conn.execution_options(isolation_level="REPEATABLE READ")
            rows = conn.execute(select(rooms_table.c.data)).all()
            logged = conn.execute(
                select(actions_table.c.code, actions_table.c.data).order_by(
                    actions_table.c.code, actions_table.c.idx
                )
            ).all()
        logs: dict[str, list[str]] = {}
        for code, data in logged:
            logs.setdefault(code, []).append(data)
        snapshots = []
        for (data,) in rows:
            snapshot = msgspec.json.decode(data)
            if "actions" not in snapshot:
                count = snapshot.pop("logged", 0)
                stored = logs.get(snapshot["code"], [])
                snapshot["actions"] = [msgspec.json.decode(r) for r in stored[:count]]
                code, actions = snapshot["code"], snapshot["actions"]
                if len(stored) >= count:
                    self._logs[code] = _Log(code, snapshot.get("game_id"), actions, count)
                else:
                    # Rows missing under a committed snapshot (the table changed by hand, a partial
                    # restore of a backup): the room plays on from its saved state and the moves
                    # there are after it (a state saved after more moves than are left cannot be
                    # rebuilt: Room.restore refuses it, and the hub names the room in its log); its
                    # replay lacks what is missing, and the log is written whole at its next save.
                    log.warning(
                        "room %s: %d of its %d logged actions are missing", code, count - len(stored), count
                    )
            snapshots.append(snapshot)
        return snapshots

    # ---- the archive -----------------------------------------------------------------------------

    def archive(self, record: dict[str, Any]) -> None:
        self.archive_many([record])

    def archive_many(self, records: list[dict[str, Any]]) -> None:
        """Finished games, in one transaction. Idempotent: a game the archive holds already (another
        process, or this one before a restart or a lost reply, wrote it) is left as it is, so a game
        written again and again is archived once."""
        if records:
            with self.engine.begin() as conn:
                self._archive_rows(conn, records)

    def _archive_rows(self, conn: Connection, records: list[dict[str, Any]]) -> None:
        if not records:
            return
        if self._sql is not None:  # SQLite, PostgreSQL: the driver's own statement, as _save_direct's
            conn.exec_driver_sql(self._sql.archive, _game_rows(records))
            return
        rows = [dict(zip(_GAME_COLUMNS, row, strict=True)) for row in _game_rows(records)]
        # Another database: the rows it lacks (two writers at the same instant: one of them fails on
        # the key and tries again, and then finds the row).
        ids = [row["id"] for row in rows]
        held = {r[0] for r in conn.execute(select(games_table.c.id).where(games_table.c.id.in_(ids)))}
        fresh = [row for row in rows if row["id"] not in held]
        if fresh:
            conn.execute(insert(games_table), fresh)

    def ping(self) -> None:
        """Whether the database answers (raises when it does not)."""
        with self.engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")

    def get_game(self, game_id: str) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(games_table.c.data).where(games_table.c.id == game_id)).first()
        return None if row is None else msgspec.json.decode(row[0])

    def recent_games(self, limit: int = 50) -> list[dict[str, Any]]:
        """The latest finished games of public rooms only: a private room's code (which a rematch
        reuses) must not be handed to strangers. Games archived without the flag count as private."""
        out: list[dict[str, Any]] = []
        with self.engine.connect() as conn:
            rows = conn.execution_options(yield_per=200).execute(
                select(
                    games_table.c.id,
                    games_table.c.room,
                    games_table.c.game,
                    games_table.c.finished,
                    games_table.c.data,
                )
                .order_by(games_table.c.finished.desc())
                # Bounded work for an unauthenticated request: only the latest games are looked at.
                .limit(max(limit, 1) * 20)
            )
            for r in rows:
                if not msgspec.json.decode(r[4]).get("public", False):
                    continue
                out.append({"id": r[0], "room": r[1], "game": r[2], "finished": r[3]})
                if len(out) >= limit:
                    break
        return out
