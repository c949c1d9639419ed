"""The hub's connections (server/hub.py): a socket attached gets its own message and the others
see the seat come online; every change reaches each socket as its own view only; a socket detached
is seen to go; a second tab is answered without a new broadcast; a seat kicked is told it left; a
reaction reaches every socket. Each test waits for the messages it checks, never for a while."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from conflictology.server.config import ServerConfig
from conflictology.server.hub import Connection, Hub
from conflictology.server.protocol import RoomSettings
from conflictology.server.rooms import Room
from conflictology.server.store import Store


class Socket:
    """A WebSocket's far end: every message the hub sends, decoded, in order."""

    def __init__(self) -> None:
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.closed = False

    async def send_text(self, text: str) -> None:
        await self.inbox.put(json.loads(text))

    async def close(self) -> None:
        self.closed = True

    async def next(self) -> dict[str, Any]:
        return await asyncio.wait_for(self.inbox.get(), 5)

    def empty(self) -> bool:
        return self.inbox.empty()


def run(tmp_path: Path, test: Callable[[Hub, list[str]], Awaitable[None]]) -> None:
    """A hub on SQLite with room HUB234: Ada (host, seat 0), Bob and Cy; ``test(hub, tokens)``."""
    store = Store(f"sqlite:///{tmp_path / 'hub.sqlite3'}")
    hub = Hub(ServerConfig(), store)

    async def main() -> None:
        await hub.start()
        room, host = Room.create("HUB234", "capitol", "Ada", {"first_player": 0}, RoomSettings())
        tokens = [host, room.join("Bob")[1], room.join("Cy")[1]]
        await hub.backend.insert(room)
        await hub.until_durable()
        try:
            await test(hub, tokens)
        finally:
            await hub.stop()

    try:
        asyncio.run(main())
    finally:
        store.close()


async def connect(hub: Hub, seat: int | None) -> tuple[Socket, Connection]:
    room = await hub.room("HUB234")
    socket = Socket()
    conn = Connection(socket, "HUB234", None if seat is None else room.seats[seat].id, hub.config)
    await hub.attach(conn)
    return socket, conn


def connected(message: dict[str, Any]) -> list[bool]:
    return [s["connected"] for s in message["room"]["seats"]]


def test_a_seat_attached_gets_its_own_message_and_the_others_see_it_come_online(tmp_path: Path) -> None:
    async def test(hub: Hub, tokens: list[str]) -> None:
        ada, _ = await connect(hub, 0)
        first = await ada.next()
        assert first["type"] == "lobby" and first["you"] == 0 and connected(first) == [True, False, False]
        bob, _ = await connect(hub, 1)
        seen_by_bob, seen_by_ada = await bob.next(), await ada.next()
        assert seen_by_bob["you"] == 1 and seen_by_ada["you"] == 0
        assert connected(seen_by_bob) == connected(seen_by_ada) == [True, True, False]
        watcher, _ = await connect(hub, None)
        watched = await watcher.next()
        assert watched["you"] is None and connected(watched) == [True, True, False]
        assert ada.empty() and bob.empty()  # a spectator changes nobody else's message
        assert sorted(c.seat_id is None for c in hub.connections["HUB234"]) == [False, False, True]

    run(tmp_path, test)


def test_each_socket_gets_only_its_own_view_of_a_change(tmp_path: Path) -> None:
    async def test(hub: Hub, tokens: list[str]) -> None:
        sockets = [(await connect(hub, seat))[0] for seat in (0, 1, 2, None)]
        for socket, lobbies in zip(sockets, (3, 2, 1, 1), strict=True):  # as each seat came online
            for _ in range(lobbies):
                assert (await socket.next())["type"] == "lobby"
        # Started now: a clock started long ago would run out at once, and the timeout's state could
        # overtake the start's before the sockets are read.
        room, _ = await hub.change("HUB234", lambda r: r.start(time.time()))
        assert room.state is not None
        for seat, socket in zip((0, 1, 2, None), sockets, strict=True):
            msg = await socket.next()
            assert msg["type"] == "state" and msg["seq"] == room.seq
            assert msg["view"] == json.loads(json.dumps(room.state.view(seat)))
            assert msg["legal"] == ([] if seat is None else room.state.legal_actions(seat))
            for player in msg["view"]["players"]:
                mine = seat is not None and player["seat"] == seat
                assert isinstance(player["hidden"], list) == mine  # others' cards are a count

    run(tmp_path, test)


def test_a_second_tab_is_answered_from_the_last_broadcast_and_nobody_else_hears(tmp_path: Path) -> None:
    async def test(hub: Hub, tokens: list[str]) -> None:
        ada, _ = await connect(hub, 0)
        first = await ada.next()
        again, _ = await connect(hub, 0)  # the same seat in another tab
        assert await again.next() == first
        assert ada.empty()
        await hub.send_current((await connect(hub, None))[1])  # a sync: the spectator's twice
        assert ada.empty() and again.empty()

    run(tmp_path, test)


def test_a_broadcast_keeps_only_its_texts_and_later_tabs_still_get_their_own_view(tmp_path: Path) -> None:
    async def test(hub: Hub, tokens: list[str]) -> None:
        sockets = [(await connect(hub, seat))[0] for seat in (0, 1, 2)]
        for socket, lobbies in zip(sockets, (3, 2, 1), strict=True):
            for _ in range(lobbies):
                assert (await socket.next())["type"] == "lobby"
        room, _ = await hub.change("HUB234", lambda r: r.start(time.time()))
        assert room.state is not None
        bobs = [await socket.next() for socket in sockets][1]
        # Sealed: the last broadcast's views are not kept alive (the collector would scan them).
        cache = hub._texts.current(room, hub.connected_seats(room))
        assert cache is not None and len(cache) == 3
        assert all(texts.message is None for texts in cache.values())
        again, _ = await connect(hub, 1)  # a second tab: the text itself
        assert await again.next() == bobs
        room_now = await hub.room("HUB234")
        socket = Socket()  # a v2 tab needs a text the broadcast did not make: built again
        await hub.attach(Connection(socket, "HUB234", room_now.seats[1].id, hub.config, deltas=True))
        fresh = await socket.next()
        assert fresh["seq"] == room.seq and fresh["view"] == bobs["view"] and fresh["legal"] == bobs["legal"]
        assert all(s.empty() for s in sockets)

    run(tmp_path, test)


def test_a_seat_detached_is_seen_to_go_and_an_empty_room_is_forgotten(tmp_path: Path) -> None:
    async def test(hub: Hub, tokens: list[str]) -> None:
        ada, _ = await connect(hub, 0)
        await ada.next()
        bob, bob_conn = await connect(hub, 1)
        await bob.next()
        assert connected(await ada.next()) == [True, True, False]
        await hub.detach(bob_conn)
        assert connected(await ada.next()) == [True, False, False]
        assert bob_conn.closed and bob.empty()
        conns = list(hub.connections["HUB234"])
        for conn in conns:
            await hub.detach(conn)
        assert "HUB234" not in hub.connections

    run(tmp_path, test)


def test_a_kicked_seat_is_told_it_left_and_closed_while_the_others_see_the_table(tmp_path: Path) -> None:
    async def test(hub: Hub, tokens: list[str]) -> None:
        ada, _ = await connect(hub, 0)
        await ada.next()
        cy, cy_conn = await connect(hub, 2)
        await cy.next()
        await ada.next()
        await hub.change("HUB234", lambda r: r.kick(2))
        assert await cy.next() == {"type": "left", "message": "you no longer hold a seat in this room"}
        assert cy_conn.closed
        assert [s["name"] for s in (await ada.next())["room"]["seats"]] == ["Ada", "Bob"]

    run(tmp_path, test)


def test_a_reaction_reaches_every_socket_in_the_room(tmp_path: Path) -> None:
    async def test(hub: Hub, tokens: list[str]) -> None:
        ada, ada_conn = await connect(hub, 0)
        watcher, _ = await connect(hub, None)
        await ada.next()
        await watcher.next()
        await hub.react(ada_conn, "👏")
        expected = {"type": "reaction", "seat": 0, "emoji": "👏"}
        assert await ada.next() == expected and await watcher.next() == expected

    run(tmp_path, test)


def test_a_socket_that_does_not_read_is_dropped_by_what_it_holds_not_only_by_count() -> None:
    """A long game's whole view is ~200 KB: a bound of 1,000 queued messages alone let one socket
    that never reads hold 200 MB. Past ``max_queue_chars`` queued, the socket is closed instead."""

    async def main() -> None:
        conn = Connection(object(), "ROOM", None, ServerConfig(max_queue_chars=1_000_000))
        big = "x" * 300_000
        for _ in range(3):
            conn.send_text(big)
        assert not conn.closed and conn.queued_chars == 900_000
        conn.send_text(big)
        assert conn.closed and conn.queued_chars == 900_000  # refused, not queued

    asyncio.run(main())


class SlowSocket:
    """A far end whose transport is paused until ``drain`` (a client that stopped reading): a send
    waits, as uvicorn's does on a paused transport. ``fail``: every send raises (the peer went)."""

    def __init__(self, fail: bool = False) -> None:
        self.texts: list[str] = []
        self.paused: asyncio.Event | None = None
        self.fail = fail
        self.closed = False

    async def send_text(self, text: str) -> None:
        if self.fail:
            raise OSError("the peer went away")
        if self.paused is not None:
            await self.paused.wait()
        self.texts.append(text)

    async def close(self) -> None:
        self.closed = True


def test_a_message_to_an_idle_socket_is_written_at_once_and_a_paused_one_keeps_the_order() -> None:
    async def main() -> None:
        socket = SlowSocket()
        conn = Connection(socket, "ROOM", None, ServerConfig())
        conn.writer = asyncio.create_task(conn.run_writer())
        await asyncio.sleep(0)  # the writer starts and waits
        conn.send_text("1")
        assert socket.texts == ["1"]  # written inside the call: no task woken for it
        socket.paused = asyncio.Event()
        conn.send_text("2")  # the transport is paused: this send waits as a task of its own
        conn.send_text("3")  # and the next ones queue behind it
        conn.send_text("4")
        assert socket.texts == ["1"] and list(conn.queue) == ["3", "4"]
        socket.paused.set()
        for _ in range(100):
            if len(socket.texts) == 4:
                break
            await asyncio.sleep(0)
        assert socket.texts == ["1", "2", "3", "4"] and not conn.queue
        socket.paused = None
        await asyncio.sleep(0)
        conn.send_text("5")
        assert socket.texts[-1] == "5"
        conn.close()
        await asyncio.wait_for(conn.writer, 5)
        assert socket.closed

    asyncio.run(main())


def test_a_message_written_at_once_to_a_socket_gone_closes_it() -> None:
    async def main() -> None:
        socket = SlowSocket(fail=True)
        conn = Connection(socket, "ROOM", None, ServerConfig())
        conn.writer = asyncio.create_task(conn.run_writer())
        await asyncio.sleep(0)
        conn.send_text("1")  # raises inside: the connection closes, nothing escapes to the caller
        assert conn.closed
        await asyncio.wait_for(conn.writer, 5)
        conn.send_text("2")  # closed: dropped
        assert not conn.queue

    asyncio.run(main())
