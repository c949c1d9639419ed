"""Durable storage through SQLAlchemy: a snapshot of every room (saved on each change) and the
archive of finished games. SQLite by default; any SQLAlchemy URL (PostgreSQL via psycopg) works."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from pathlib import Path
from typing import Any

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
    update,
)
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

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
    """A snapshot as the upsert's parameters: code, version, status, updated, data."""
    return snapshot["code"], snapshot["version"], snapshot["status"], snapshot["updated"], _encode(snapshot)


def is_outage(exc: BaseException) -> bool:
    """The database did not take a write for a reason of its own, not of the rows': it does not
    answer (refused or dropped connections), or it answers but cannot write now (SQLite's file locked
    by another process past the busy timeout, a full disk). Such a write is tried again as it was."""
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    # (sqlite3's own: the snapshots' writes go to the driver directly, see Store._save_direct)
    return isinstance(exc, OperationalError | InterfaceError | sqlite3.OperationalError)


def _game_row(record: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": record["id"],
        "room": record["room"],
        "game": record["game"],
        "finished": record["finished"] or time.time(),
        "data": _encode(record),
    }


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
        self._upsert: str | None = None
        if marker is not None and parsed.get_backend_name() in ("sqlite", "postgresql"):
            self._upsert = (
                "INSERT INTO conflictology_rooms (code, version, status, updated, data) "
                f"VALUES ({', '.join([marker] * 5)}) ON CONFLICT (code) DO UPDATE SET "
                "version = excluded.version, status = excluded.status, updated = excluded.updated, "
                "data = excluded.data"
            )
        # SQLite in a file: a batch of snapshots alone (the hub's writer, every few milliseconds while
        # rooms change) goes to the driver directly on a connection kept for it. Through SQLAlchemy's
        # transaction (a pool checkout with its pre-ping, the events, the commit) a batch of one
        # snapshot cost 110-170 µs against 35 µs (benchmarks/server.md, 2026-12-04).
        self._direct = self.local and parsed.database not in (None, "", ":memory:")
        self._writer: Any = None
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
        row = {
            "version": snapshot["version"],
            "status": snapshot["status"],
            "updated": snapshot["updated"],
            "data": _encode(snapshot),
        }
        with self.engine.begin() as conn:
            result = conn.execute(
                update(rooms_table).where(rooms_table.c.code == snapshot["code"]).values(**row)
            )
            if result.rowcount == 0:
                conn.execute(insert(rooms_table).values(code=snapshot["code"], **row))

    def save_rooms(
        self, snapshots: list[dict[str, Any]], records: list[dict[str, Any]] | None = None
    ) -> None:
        """Several snapshots in one transaction (the hub's group commit: on the move's path, so as
        little as possible between the rows and the driver), with the finished games they end: a
        game's end and its archive are committed together or not at all."""
        if not snapshots and not records:
            return
        if not records and self._direct and self._upsert is not None:
            self._save_direct(snapshots, self._upsert)
            return
        with self.engine.begin() as conn:
            self._save_rooms(conn, snapshots)
            self._archive_rows(conn, records or [])

    def _save_direct(self, snapshots: list[dict[str, Any]], upsert: str) -> None:
        """The snapshots in one transaction of the writer's own connection (SQLite in a file). A
        write that fails is rolled back and its connection dropped: the next one starts afresh."""
        if self._writer is None:
            self._writer = self.engine.raw_connection()
        conn = self._writer.driver_connection
        try:
            conn.executemany(upsert, [_room_row(s) for s in snapshots])
            conn.commit()
        except BaseException:
            writer, self._writer = self._writer, None
            with contextlib.suppress(Exception):
                conn.rollback()
            with contextlib.suppress(Exception):
                writer.invalidate()
            raise

    def _save_rooms(self, conn: Connection, snapshots: list[dict[str, Any]]) -> None:
        if not snapshots:
            return
        if self._upsert is not None:
            conn.exec_driver_sql(self._upsert, [_room_row(s) for s in snapshots])
            return
        rows = [
            {
                "code": s["code"],
                "version": s["version"],
                "status": s["status"],
                "updated": s["updated"],
                "data": _encode(s),
            }
            for s in snapshots
        ]
        conn.execute(delete(rooms_table).where(rooms_table.c.code.in_([r["code"] for r in rows])))
        conn.execute(insert(rooms_table), rows)

    def delete_room(self, code: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(delete(rooms_table).where(rooms_table.c.code == code))

    def load_rooms(self) -> list[dict[str, Any]]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(rooms_table.c.data)).all()
        return [msgspec.json.decode(r[0]) for r in rows]

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
        # Keyed by the game's id: one row per game, whoever writes it how many times.
        rows = list({r["id"]: _game_row(r) for r in records}.values())
        backend = self.engine.dialect.name
        if backend in ("sqlite", "postgresql"):
            make = sqlite_insert if backend == "sqlite" else postgresql_insert
            conn.execute(make(games_table).on_conflict_do_nothing(index_elements=["id"]), rows)
            return
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
