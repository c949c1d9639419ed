"""Log deltas (docs/protocol.md, "Log deltas"): a socket that asks with ``?v=2`` is sent of each
state's log only the entries it lacks, so a message's size no longer grows with the game; what it
joins is at every step exactly the log of the seat's own full view (and the rest of the message is
the full message's), a new socket and a ``sync`` get the whole log, a client that missed messages
finds the gap and a ``sync`` mends it, and a socket that did not ask is sent whole views as before."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from conflictology.clients.netbot import LogJoin
from conflictology.server.config import ServerConfig
from conflictology.server.hub import Connection, Hub
from conflictology.server.protocol import RoomSettings
from conflictology.server.rooms import Room
from conflictology.server.store import Store
from server_helpers import thread_server

# The largest state message a delta socket may get after its first one, in a two-seat Capitol game
# however long: the view without its log (~1 KB), the room (~1 KB), the legal actions and the few
# log entries one change adds (~150 bytes each). The same game's whole view passes it before 100
# actions and is ~12 times it at 500.
BOUND = 4096
ACTIONS = 500


class Socket:
    """A WebSocket's far end: every text the hub sends, in order."""

    def __init__(self) -> None:
        self.inbox: asyncio.Queue[str] = asyncio.Queue()

    async def send_text(self, text: str) -> None:
        await self.inbox.put(text)

    async def close(self) -> None:
        pass

    async def next(self) -> str:
        return await asyncio.wait_for(self.inbox.get(), 5)

    def drain(self) -> list[str]:
        out = []
        while not self.inbox.empty():
            out.append(self.inbox.get_nowait())
        return out


def run(tmp_path: Path, game: str, test: Callable[[Hub, Room], Awaitable[None]]) -> None:
    """A hub on SQLite with a two-seat room LOGS23 (timers off: only the test moves it)."""
    store = Store(f"sqlite:///{tmp_path / 'deltas.sqlite3'}")
    hub = Hub(ServerConfig(), store)

    async def main() -> None:
        await hub.start()
        # Capitol's stalemate rule at its longest (200 quiet turns), so the Reporter loop lasts 500 actions.
        options = {"stalemate_turns": 200} if game == "capitol" else None
        room, _ = Room.create("LOGS23", game, "Ada", options, RoomSettings(timers=False))
        room.join("Bob")
        await hub.backend.insert(room)
        await hub.until_durable()
        try:
            await test(hub, room)
        finally:
            await hub.stop()

    try:
        asyncio.run(main())
    finally:
        store.close()


async def open_socket(hub: Hub, seat: int | None, deltas: bool = True) -> tuple[Socket, Connection]:
    room = await hub.room("LOGS23")
    socket = Socket()
    seat_id = None if seat is None else room.seats[seat].id
    conn = Connection(socket, "LOGS23", seat_id, hub.config, deltas=deltas)
    await hub.attach(conn)
    return socket, conn


def reporter_loop(room: Room) -> tuple[int, dict[str, Any]]:
    """The issue-25 loop that never ends: claim the Reporter, let it pass, keep the first pair."""
    assert room.state is not None
    seat = room.state.waiting_for()[0]
    legal = room.state.legal_actions(seat)
    for kind in ("reporter", "pass", "keep"):
        pick = next((a for a in legal if a["type"] == kind), None)
        if pick is not None:
            return seat, pick
    return seat, legal[0]


def first_legal(room: Room) -> tuple[int, dict[str, Any]]:
    assert room.state is not None
    seat = room.state.waiting_for()[0]
    return seat, room.state.legal_actions(seat)[-1]


def wire(obj: Any) -> Any:
    return json.loads(json.dumps(obj))


def joined_state(logs: LogJoin, texts: list[str]) -> tuple[dict[str, Any], int]:
    """The last state message of ``texts`` joined, and the largest text's size after the first."""
    last: dict[str, Any] | None = None
    for text in texts:
        msg = json.loads(text)
        if msg["type"] != "state":
            continue
        joined = logs.join(msg)
        assert joined is not None, "a gap on a socket that missed nothing"
        # Every delta is a suffix of what the socket would have been told whole: nothing else.
        assert msg["view"]["log"] == joined["view"]["log"][msg["log_from"]:]
        last = joined
    assert last is not None
    return last, max((len(t.encode()) for t in texts), default=0)


Pick = Callable[[Room], tuple[int, dict[str, Any]]]


async def play_and_check(hub: Hub, pick: Pick, limit: int) -> dict[str, int]:
    """Plays ``limit`` actions (or to the end); after each, every delta socket's joined message must
    equal the full message a plain socket of the same seat got, and its log the seat's own view's."""
    seats: list[int | None] = [0, 1, None]
    delta = {s: await open_socket(hub, s) for s in seats}
    whole = {s: await open_socket(hub, s, deltas=False) for s in seats}
    room, _ = await hub.change("LOGS23", lambda r: r.start(1000.0, seed=7))
    logs = {s: LogJoin() for s in seats}
    for s in seats:  # the lobbies and the first state, whole
        joined_state(logs[s], delta[s][0].drain())
        whole[s][0].drain()
    largest = {"delta": 0, "whole": 0, "actions": 0}
    assert room.state is not None
    while largest["actions"] < limit and not room.state.is_over():
        seat, action = pick(room)
        room, _ = await hub.change("LOGS23", lambda r, s=seat, a=action: r.act(s, a, r.seq, 1000.0))
        assert room.state is not None
        largest["actions"] += 1
        for s in seats:
            joined, size = joined_state(logs[s], delta[s][0].drain())
            full_texts = whole[s][0].drain()
            full = json.loads(full_texts[-1])
            assert "log_from" not in full  # a socket that did not ask is sent whole views
            assert joined["view"]["log"] == wire(room.state.view(s)["log"])  # the key invariant
            assert {k: v for k, v in joined.items() if k != "log_from"} == full
            largest["delta"] = max(largest["delta"], size)
            largest["whole"] = max(largest["whole"], *(len(t.encode()) for t in full_texts))
    return largest


def test_a_long_game_keeps_every_delta_message_small_and_every_joined_log_whole(tmp_path: Path) -> None:
    async def test(hub: Hub, room: Room) -> None:
        largest = await play_and_check(hub, reporter_loop, ACTIONS)
        assert largest["actions"] == ACTIONS
        assert largest["delta"] < BOUND
        assert largest["whole"] > 10 * BOUND  # without deltas the same game's messages grew

    run(tmp_path, "capitol", test)


@pytest.mark.parametrize("game", ["capitol", "conspiranoicos"])
def test_a_game_to_its_end_joins_to_each_seats_own_log(tmp_path: Path, game: str) -> None:
    """Conspiranoicos' log has lines private to a seat: each seat's deltas carry its own only."""

    async def test(hub: Hub, room: Room) -> None:
        largest = await play_and_check(hub, first_legal, 2000)
        final = await hub.room("LOGS23")
        assert final.state is not None and final.state.is_over() and largest["actions"] > 0

    run(tmp_path, game, test)


def test_a_new_socket_and_a_sync_get_the_whole_log_and_a_gap_is_found(tmp_path: Path) -> None:
    async def test(hub: Hub, room: Room) -> None:
        socket, conn = await open_socket(hub, 0)
        room, _ = await hub.change("LOGS23", lambda r: r.start(1000.0, seed=7))
        for _ in range(30):
            seat, action = reporter_loop(room)
            room, _ = await hub.change("LOGS23", lambda r, s=seat, a=action: r.act(s, a, r.seq, 1000.0))
        assert room.state is not None
        whole_log = wire(room.state.view(0)["log"])
        texts = socket.drain()
        deltas = [json.loads(t) for t in texts if json.loads(t)["type"] == "state"]
        assert deltas[0]["log_from"] == 0 and all(m["log_from"] > 0 for m in deltas[1:])
        # A client that lost one message finds the gap at the next and asks for a sync.
        logs = LogJoin()
        for msg in deltas[:5]:
            assert logs.join(msg) is not None
        assert logs.join(deltas[6]) is None
        await hub.send_current(conn)  # what the transport does for {"type": "sync"}
        synced = json.loads(await socket.next())
        assert synced["log_from"] == 0 and synced["view"]["log"] == whole_log
        joined = logs.join(synced)
        assert joined is not None and joined["view"]["log"] == whole_log
        # A second socket of the seat (a reconnect, another tab) starts whole; the first stays a delta.
        again, _ = await open_socket(hub, 0)
        first = json.loads(await again.next())
        assert first["log_from"] == 0 and first["view"]["log"] == whole_log
        seat, action = reporter_loop(room)
        room, _ = await hub.change("LOGS23", lambda r: r.act(seat, action, r.seq, 1000.0))
        for s in (socket, again):
            nxt = json.loads(s.drain()[-1])
            assert nxt["log_from"] == len(whole_log)
        # A pause toggled is sent as what changed: no entry at all.
        # (now, not a made-up time: the pause lasts pause_seconds from it, and its end is scheduled)
        await hub.change("LOGS23", lambda r: r.host_pause(0, time.time()))
        paused = json.loads(socket.drain()[-1])
        assert paused["pause"] is not None and paused["view"]["log"] == []

    run(tmp_path, "capitol", test)


def test_the_socket_asks_for_deltas_with_v2_and_an_unknown_version_is_refused(tmp_path: Path) -> None:
    with thread_server(tmp_path) as server:
        made = httpx.post(f"{server.url}/api/rooms", json={"game": "capitol", "name": "Ada"}).json()
        code, token = made["code"], made["token"]
        httpx.post(f"{server.url}/api/rooms/{code}/join", json={"name": "Bob"}).raise_for_status()
        host = {"Authorization": f"Bearer {token}"}
        httpx.post(f"{server.url}/api/rooms/{code}/start", headers=host).raise_for_status()
        ws_url = server.url.replace("http://", "ws://") + f"/ws/{code}?token={token}"
        with connect(ws_url + "&v=2") as v2, connect(ws_url) as v1:
            new, old = json.loads(v2.recv(timeout=60)), json.loads(v1.recv(timeout=60))
            assert new["log_from"] == 0 and "log_from" not in old
            v2.send(json.dumps({"type": "sync"}))
            while True:  # v1's arrival is a broadcast to v2 too (no new entry); then the sync's answer
                again = json.loads(v2.recv(timeout=60))
                if again["log_from"] == 0:
                    break
            assert again["view"]["log"] == old["view"]["log"]
        with pytest.raises(Exception, match="400"), connect(ws_url + "&v=3"):
            pass


def test_sockets_up_to_date_share_one_text_per_seat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three tabs of a seat and three spectators, all up to date: one change, one encode per seat
    (not per socket); a socket that just synced differs and costs one more."""
    from conflictology.server import master

    async def test(hub: Hub, room: Room) -> None:
        sockets = [await open_socket(hub, s) for s in (0, 0, 0, None, None, None)]
        room, _ = await hub.change("LOGS23", lambda r: r.start(1000.0, seed=7))
        for _ in range(3):
            seat, action = reporter_loop(room)
            room, _ = await hub.change("LOGS23", lambda r, s=seat, a=action: r.act(s, a, r.seq, 1000.0))
        encoded: list[str] = []
        real = master.encode
        monkeypatch.setattr(master, "encode", lambda m: encoded.append("") or real(m))
        seat, action = reporter_loop(room)
        room, _ = await hub.change("LOGS23", lambda r: r.act(seat, action, r.seq, 1000.0))
        assert len(encoded) == 2  # seat 0's and the spectators'
        # The shared texts are each socket's own: seat 0's tabs its view, the spectators the public one.
        assert room.state is not None
        for (socket, _conn), seat in zip(sockets, (0, 0, 0, None, None, None), strict=True):
            got = json.loads(socket.drain()[-1])["view"]
            own = wire(room.state.view(seat))
            got.pop("log")
            own.pop("log")
            assert got == own
            assert all(isinstance(p["hidden"], int) for p in got["players"] if p["seat"] != seat)
        await hub.send_current(sockets[0][1])  # a sync: the whole text, encoded once more
        seat, action = reporter_loop(room)
        room, _ = await hub.change("LOGS23", lambda r: r.act(seat, action, r.seq, 1000.0))
        assert len(encoded) == 3 + 2  # the synced tab's next delta starts where the others' does

    run(tmp_path, "capitol", test)


def test_a_change_renders_only_the_log_its_sockets_lack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every socket up to date on v2: a change renders the few entries it adds, once per seat, not
    the game's whole log (a move costs the same at the 300th action as at the first); a socket that
    is behind (a sync) is served whole from the same change, and the others still get the tail."""
    from conflictology.games.capitol import views

    async def test(hub: Hub, room: Room) -> None:
        sockets = {s: await open_socket(hub, s) for s in (0, 1, None)}
        room, _ = await hub.change("LOGS23", lambda r: r.start(1000.0, seed=7))
        for _ in range(300):
            seat, action = reporter_loop(room)
            room, _ = await hub.change("LOGS23", lambda r, s=seat, a=action: r.act(s, a, r.seq, 1000.0))
        logs = {s: LogJoin() for s in sockets}
        for s, (socket, _conn) in sockets.items():
            joined_state(logs[s], socket.drain())
        assert room.state is not None
        before = len(room.state.view(None)["log"])
        assert before > 300

        rendered: list[object] = []
        real = views.render_entry
        monkeypatch.setattr(views, "render_entry", lambda e: rendered.append(e) or real(e))
        seat, action = reporter_loop(room)
        room, _ = await hub.change("LOGS23", lambda r: r.act(seat, action, r.seq, 1000.0))
        by_the_change = len(rendered)
        assert room.state is not None
        added = len(room.state.view(None)["log"]) - before
        assert added > 0 and by_the_change <= 3 * added, (by_the_change, added)
        for s, (socket, _conn) in sockets.items():
            joined, _ = joined_state(logs[s], socket.drain())
            assert joined["view"]["log"] == wire(room.state.view(s)["log"])

        # Seat 0 syncs (its socket holds nothing now): its answer is whole, the next change too for
        # it alone, and the others' deltas are still right.
        await hub.send_current(sockets[0][1])
        synced = json.loads(await sockets[0][0].next())
        assert synced["log_from"] == 0
        logs[0] = LogJoin()
        logs[0].join(synced)
        seat, action = reporter_loop(room)
        room, _ = await hub.change("LOGS23", lambda r: r.act(seat, action, r.seq, 1000.0))
        for s, (socket, _conn) in sockets.items():
            joined, _ = joined_state(logs[s], socket.drain())
            assert joined["view"]["log"] == wire(room.state.view(s)["log"])

    run(tmp_path, "capitol", test)
