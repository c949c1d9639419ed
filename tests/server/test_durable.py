"""Nothing is shown before it is durable: a change reaches the sockets, and its caller, only once the
snapshot that holds it is committed (issue 13, item 6: a killed server took back moves players saw)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conflictology.server import master
from conflictology.server.backend import BackendUnavailable
from conflictology.server.config import ServerConfig
from conflictology.server.hub import Connection, Hub
from conflictology.server.messages import RoomMessage
from conflictology.server.protocol import RoomSettings
from conflictology.server.rooms import Room
from conflictology.server.store import Store


class RecordingSocket:
    """What a WebSocket connection would have sent, as decoded messages."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def send_text(self, text: str) -> None:
        self.sent.append(json.loads(text))

    async def close(self) -> None:
        pass


class SlowStore(Store):
    """A store whose snapshot writes wait for ``release`` while ``hold`` is set."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.local = False  # its writes wait on purpose: in a thread, as a remote database's are
        self.hold = threading.Event()
        self.release = threading.Event()
        self.writing = threading.Event()
        self.refuse = False

    def save_rooms(
        self, snapshots: list[dict[str, Any]], records: list[dict[str, Any]] | None = None
    ) -> None:
        if self.hold.is_set():
            self.writing.set()
            self.release.wait(60)  # (released by the test: the bound is for a hang only)
        if self.refuse:
            raise RuntimeError("disk full")
        super().save_rooms(snapshots, records)


def stored_version(store: Store, code: str) -> int | None:
    return next((s["version"] for s in store.load_rooms() if s["code"] == code), None)


async def settle() -> None:
    """A few turns of the loop and 0.1 s: for what must NOT happen meanwhile."""
    for _ in range(5):
        await asyncio.sleep(0.02)


async def until(check: Callable[[], bool], timeout: float = 60.0) -> None:
    """Until ``check()`` holds: what must happen is waited for, however loaded the machine."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the condition never held"
        await asyncio.sleep(0.02)


def seats_shown(socket: RecordingSocket) -> list[str]:
    """The seats of the last room message the socket got."""
    return [s["name"] for s in socket.sent[-1]["room"]["seats"]] if socket.sent else []


async def writing(store: SlowStore) -> None:
    """Until the held batch is being written (in the writer's thread)."""
    assert await asyncio.to_thread(store.writing.wait, 60), "no batch was written"


def test_a_change_is_shown_and_returned_only_once_its_snapshot_is_committed(tmp_path: Path) -> None:
    store = SlowStore(f"sqlite:///{tmp_path / 'durable.sqlite3'}")
    hub = Hub(ServerConfig(), store)

    async def main() -> None:
        await hub.start()
        room, _ = Room.create("DURAB", "capitol", "Host", None, RoomSettings())
        await hub.backend.insert(room)
        await hub.until_durable()
        socket = RecordingSocket()
        conn = Connection(socket, "DURAB", room.seats[0].id, hub.config)
        await hub.attach(conn)
        await until(lambda: seats_shown(socket) == ["Host"])
        await settle()
        before = len(socket.sent)

        store.hold.set()
        change = asyncio.create_task(hub.change("DURAB", lambda r: r.join("Bea")))
        await writing(store)
        await settle()
        # The join is made in memory, but neither the socket nor the caller has heard of it.
        assert not change.done()
        assert len(socket.sent) == before
        assert [s.name for s in (await hub.room("DURAB")).seats] == ["Host"]
        assert stored_version(store, "DURAB") == 1

        store.hold.clear()
        store.release.set()
        await asyncio.wait_for(change, 60)
        assert stored_version(store, "DURAB") == 2
        await until(lambda: seats_shown(socket) == ["Host", "Bea"])
        await hub.detach(conn)
        await hub.stop()

    try:
        asyncio.run(main())
    finally:
        store.close()


def test_a_change_the_database_refuses_is_a_503_and_is_shown_once_saved(tmp_path: Path) -> None:
    store = SlowStore(f"sqlite:///{tmp_path / 'refused.sqlite3'}")
    hub = Hub(ServerConfig(durable_timeout=0.3), store)

    async def main() -> None:
        await hub.start()
        room, _ = Room.create("REFUS", "capitol", "Host", None, RoomSettings())
        await hub.backend.insert(room)
        await hub.until_durable()
        socket = RecordingSocket()
        await hub.attach(Connection(socket, "REFUS", None, hub.config))
        await until(lambda: bool(socket.sent))
        await settle()
        before = len(socket.sent)

        store.refuse = True
        with pytest.raises(BackendUnavailable) as refused:
            await hub.change("REFUS", lambda r: r.join("Bea"))
        assert refused.value.status == 503 and refused.value.code == "unavailable"
        assert len(socket.sent) == before and stored_version(store, "REFUS") == 1

        store.refuse = False  # the disk has room again: the writer's retry saves and shows it
        await until(lambda: len(socket.sent) > before)
        assert seats_shown(socket) == ["Host", "Bea"]
        assert stored_version(store, "REFUS") == 2
        await hub.stop()

    try:
        asyncio.run(main())
    finally:
        store.close()


def test_changes_sharing_a_batch_are_shown_once_as_the_newest_after_the_batch_before(tmp_path: Path) -> None:
    store = SlowStore(f"sqlite:///{tmp_path / 'order.sqlite3'}")
    hub = Hub(ServerConfig(), store)

    async def main() -> None:
        await hub.start()
        room, _ = Room.create("ORDER", "capitol", "Host", None, RoomSettings())
        await hub.backend.insert(room)
        await hub.until_durable()
        socket = RecordingSocket()
        await hub.attach(Connection(socket, "ORDER", None, hub.config))
        await until(lambda: bool(socket.sent))
        store.hold.set()
        first = asyncio.create_task(hub.change("ORDER", lambda r: r.join("A")))
        await writing(store)
        # Three more changes while the first batch is being written: they go together in the next,
        # and are shown together, after it (one message: the log of a game holds every change).
        others = [asyncio.create_task(hub.change("ORDER", lambda r, n=n: r.join(n))) for n in "BCD"]
        await settle()
        store.hold.clear()
        store.release.set()
        await asyncio.wait_for(asyncio.gather(first, *others), 60)
        await until(lambda: seats_shown(socket) == ["Host", "A", "B", "C", "D"])
        names = [[s["name"] for s in m["room"]["seats"]] for m in socket.sent if m["type"] == "lobby"]
        assert names[-2:] == [["Host", "A"], ["Host", "A", "B", "C", "D"]]
        assert ["Host", "A", "B"] not in names
        await hub.stop()

    try:
        asyncio.run(main())
    finally:
        store.close()


def test_a_waiting_change_whose_caller_leaves_does_not_stop_the_others_waiting(tmp_path: Path) -> None:
    """The changes waiting for one commit share its timer but not their waits: a caller cancelled
    (a socket gone) leaves the others waiting, and they resume when the batch commits."""
    store = SlowStore(f"sqlite:///{tmp_path / 'cancel.sqlite3'}")
    hub = Hub(ServerConfig(), store)

    async def main() -> None:
        await hub.start()
        room, _ = Room.create("CANCL", "capitol", "Host", None, RoomSettings())
        await hub.backend.insert(room)
        await hub.until_durable()
        store.hold.set()
        first = asyncio.create_task(hub.change("CANCL", lambda r: r.join("A")))
        await writing(store)
        others = [asyncio.create_task(hub.change("CANCL", lambda r, n=n: r.join(n))) for n in "BC"]
        await settle()
        others[0].cancel()
        await settle()
        assert not first.done() and not others[1].done()
        store.hold.clear()
        store.release.set()
        await asyncio.wait_for(asyncio.gather(first, others[1]), 60)
        with pytest.raises(asyncio.CancelledError):
            await others[0]
        # (the cancelled caller's change was made: only its wait was given up)
        assert [s.name for s in (await hub.room("CANCL")).seats] == ["Host", "A", "B", "C"]
        await hub.stop()

    try:
        asyncio.run(main())
    finally:
        store.close()


def test_a_restored_room_is_shown_as_saved_until_its_next_change_is(tmp_path: Path) -> None:
    """After a restart a room is shown as it was on disk: a change made since (not saved yet) reaches
    no one, whether they ask over HTTP, open a socket or sync."""
    url = f"sqlite:///{tmp_path / 'restart.sqlite3'}"
    first = Store(url)
    room, _ = Room.create("RESTOR", "capitol", "Host", None, RoomSettings())
    room.version = 1
    first.save_rooms([room.snapshot()])
    first.close()
    store = SlowStore(url)
    hub = Hub(ServerConfig(), store)

    async def main() -> None:
        await hub.start()
        store.hold.set()
        change = asyncio.create_task(hub.change("RESTOR", lambda r: r.join("Bea")))
        await writing(store)
        assert [s.name for s in (await hub.room("RESTOR")).seats] == ["Host"]
        socket = RecordingSocket()
        await hub.attach(Connection(socket, "RESTOR", None, hub.config))
        await until(lambda: bool(socket.sent))
        await settle()  # (the unsaved join must not be shown meanwhile)
        assert seats_shown(socket) == ["Host"]
        store.hold.clear()
        store.release.set()
        await asyncio.wait_for(change, 60)
        await until(lambda: seats_shown(socket) == ["Host", "Bea"])
        await hub.stop()

    try:
        asyncio.run(main())
    finally:
        store.close()


def test_the_writer_outlives_a_view_that_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A room whose message cannot be built (a bug in a view) costs its own sockets that message,
    not the writer: other rooms' changes are still saved and shown, and their callers answered."""
    store = SlowStore(f"sqlite:///{tmp_path / 'writer.sqlite3'}")
    hub = Hub(ServerConfig(), store)
    real = master.message_for

    def message_for(room: Room, *args: Any, **kwargs: Any) -> RoomMessage:
        if room.code == "BROKEN" and len(room.seats) > 1:
            raise RuntimeError("a view that fails")
        return real(room, *args, **kwargs)

    monkeypatch.setattr(master, "message_for", message_for)

    async def main() -> None:
        await hub.start()
        sockets = {}
        for code in ("BROKEN", "HEALTH"):
            room, _ = Room.create(code, "capitol", "Host", None, RoomSettings())
            await hub.backend.insert(room)
            await hub.until_durable()
            sockets[code] = RecordingSocket()
            await hub.attach(Connection(sockets[code], code, None, hub.config))
        await until(lambda: all(socket.sent for socket in sockets.values()))
        await asyncio.wait_for(hub.change("BROKEN", lambda r: r.join("Bea")), 60)
        await asyncio.wait_for(hub.change("HEALTH", lambda r: r.join("Cy")), 60)
        await until(lambda: seats_shown(sockets["HEALTH"]) == ["Host", "Cy"])
        assert stored_version(store, "BROKEN") == 2 and stored_version(store, "HEALTH") == 2
        assert hub.durability.writer is not None and not hub.durability.writer.done()
        await hub.stop()

    try:
        asyncio.run(main())
    finally:
        store.close()


def test_a_snapshot_shares_no_container_with_its_room() -> None:
    """Snapshots are encoded off the event loop while the room changes: a move appended to the live
    log must not appear in a snapshot taken before it."""
    room, _ = Room.create("SNAPSH", "capitol", "Host", {"first_player": 0}, RoomSettings())
    snapshot = room.snapshot()
    room.actions.append({"seq": 9})
    room.past_games.append("g")
    room.options["first_player"] = 1
    assert (
        snapshot["actions"] == []
        and snapshot["past_games"] == []
        and snapshot["options"] == {"first_player": 0}
    )
