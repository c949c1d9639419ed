"""A room's snapshot carries the game state as it was up to STATE_EVERY actions ago, and a restore
applies the actions recorded since (server/snapshots.py, rooms._replayed): whatever the snapshot,
the room restored must be the room that was shown, in both games, with timeouts among the moves,
through JSON as a store keeps it, and through the SQLite store itself."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

from conflictology.engine import GameState
from conflictology.server import snapshots
from conflictology.server.protocol import RoomSettings
from conflictology.server.rooms import Room, RoomStatus
from conflictology.server.store import Store


def started(game: str, players: int, seed: int) -> Room:
    room, _ = Room.create(f"SAV{players}{seed:02d}", game, "P0", {}, RoomSettings())
    for n in range(1, players):
        room.join(f"P{n}")
    room.start(1000.0, seed=seed)
    return room


def step(room: Room, rng: random.Random, t: float) -> None:
    """One random legal move, or now and then the clock running out."""
    assert room.state is not None
    if rng.random() < 0.15 and room.deadline is not None:
        room.expire(room.deadline + 0.1)
        return
    seat = sorted(room.state.waiting_for())[0]
    room.act(seat, rng.choice(room.state.legal_actions(seat)), room.seq, t)


def same_game(a: GameState, b: GameState, players: int) -> None:
    assert a.to_json() == b.to_json()
    for seat in [None, *range(players)]:
        assert a.view(seat) == b.view(seat)
    for seat in range(players):
        assert a.legal_actions(seat) == b.legal_actions(seat)


def through_json(snapshot: dict[str, Any]) -> Room:
    return Room.restore(msgspec.json.decode(msgspec.json.encode(snapshot)))


TABLES = [("capitol", 2), ("capitol", 4), ("capitol", 6), ("conspiranoicos", 2)]


@pytest.mark.parametrize(("game", "players"), TABLES)
def test_a_room_restored_from_any_snapshot_is_the_room_that_was_shown(game: str, players: int) -> None:
    rng = random.Random(players)
    for seed in range(3):
        room = started(game, players, seed)
        t = 1000.0
        while room.status is RoomStatus.PLAYING:
            t += 1
            step(room, rng, t)
            snapshot = room.snapshot()
            assert 0 <= len(room.actions) - snapshot["state_at"] < snapshots.STATE_EVERY
            restored = through_json(snapshot)
            assert room.state is not None and restored.state is not None
            same_game(restored.state, room.state, players)
            assert (restored.seq, restored.actions) == (room.seq, room.actions)
            assert restored.timed_out == room.timed_out
            # A room restored and saved again carries the same state (it is not taken anew).
            assert restored.snapshot()["state"] == snapshot["state"]
        assert room.status is RoomStatus.OVER
        # A finished game's snapshot holds its final state.
        assert room.snapshot()["state_at"] == len(room.actions)


def test_the_state_is_taken_once_in_state_every_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    room = started("capitol", 4, 1)
    assert room.state is not None
    taken: list[int] = []
    cls = type(room.state)
    original = cls.to_json

    def counted(self: GameState) -> str:
        taken.append(1)
        return original(self)  # type: ignore[arg-type]

    monkeypatch.setattr(cls, "to_json", counted)
    changes = 0
    # Every clock runs out: Income turn after turn, a long game.
    while room.status is RoomStatus.PLAYING and len(room.actions) < 2 * snapshots.STATE_EVERY:
        assert room.deadline is not None
        room.expire(room.deadline + 0.1)
        room.snapshot()
        changes += 1
    assert len(room.actions) >= 2 * snapshots.STATE_EVERY  # (the game lasted)
    assert changes >= snapshots.STATE_EVERY
    assert 1 <= len(taken) <= len(room.actions) // snapshots.STATE_EVERY


def test_a_shared_backends_snapshot_carries_the_state_as_it_is() -> None:
    room = started("capitol", 3, 2)
    rng = random.Random(2)
    for n in range(5):
        step(room, rng, 1000.0 + n)
        snapshot = room.snapshot(state_every=1)
        assert room.state is not None
        assert snapshot["state_at"] == len(room.actions) and snapshot["state"] == room.state.to_json()


def test_a_snapshot_saved_with_the_state_at_every_change_restores_as_it_was() -> None:
    """Snapshots written before the state was kept back have no ``state_at``: their state is now."""
    room = started("capitol", 3, 3)
    rng = random.Random(3)
    for n in range(40):
        step(room, rng, 1000.0 + n)
    assert room.state is not None
    old = room.snapshot()
    old["state"] = room.state.to_json()
    del old["state_at"]
    restored = through_json(old)
    assert restored.state is not None
    same_game(restored.state, room.state, 3)


def test_a_saved_state_after_more_actions_than_were_saved_is_refused() -> None:
    room = started("capitol", 3, 4)
    snapshot = room.snapshot()
    for bad in (len(room.actions) + 1, -1, "0", True):
        with pytest.raises(ValueError, match="saved state"):
            Room.restore({**snapshot, "state_at": bad})


def test_rooms_saved_mid_game_in_the_store_load_as_they_were(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'rooms.sqlite3'}")
    try:
        rng = random.Random(5)
        rooms = [started("capitol", 4, seed) for seed in range(3)]
        for n in range(2 * snapshots.STATE_EVERY + 7):
            for room in rooms:
                if room.status is RoomStatus.PLAYING:
                    step(room, rng, time.time())
            if n % 5 == 0:
                store.save_rooms([room.snapshot() for room in rooms])
        store.save_rooms([room.snapshot() for room in rooms])
        loaded = {data["code"]: Room.restore(data) for data in store.load_rooms()}
    finally:
        store.close()
    for room in rooms:
        back = loaded[room.code]
        assert back.state is not None and room.state is not None
        same_game(back.state, room.state, 4)
        assert back.actions == room.actions
