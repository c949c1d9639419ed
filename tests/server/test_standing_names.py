"""Standings held by keys, not names (issue 25): a stranger joining under a standing name is named
apart and never merged; nobody's games push another player's keys out; a kicked player cannot claim
their way back in."""

from __future__ import annotations

from conflictology.server import standings
from conflictology.server.protocol import RoomSettings
from conflictology.server.rooms import Room, RoomError
from conflictology.server.security import hash_token


def standing_room() -> tuple[Room, str]:
    room, host = Room.create("STAND2", "capitol", "Host", None, RoomSettings(standing=True, timers=False))
    return room, host


def played(room: Room, game_id: str, seats: list[int], winner: int) -> None:
    """A finished game of these seats counted as the room counts it (by name and token hash)."""
    room.standings = standings.added(
        room.standings,
        now=float(len(game_id)),
        game_id=game_id,
        game="capitol",
        seats=[(room.seats[i].name, room.seats[i].token_hash) for i in seats],
        winners=[winner],
        figures=[{} for _ in seats],
    )


def test_a_stranger_under_a_standing_name_is_named_apart_and_never_merged() -> None:
    room, _ = standing_room()
    _, bob = room.join("Bob")
    played(room, "g0", [0, 1], winner=1)
    room.leave(1)  # Bob goes home (the lobby drops his seat)
    seat, stranger = room.join("BOB")
    assert room.seats[seat].name == "BOB 2"
    for n in range(6):
        played(room, f"game{n}", [0, seat], winner=1)
    rows = {r["name"]: r for r in standings.public(room.standings)["players"]}
    assert rows["Bob"]["games"] == 1 and rows["Bob"]["wins"] == 1
    assert rows["BOB 2"]["games"] == 6 and rows["BOB 2"]["wins"] == 6
    # Bob's key was not pushed out by the stranger's games: his claim seats him as Bob.
    room.leave(seat)
    claimed_seat, _, name = room.claim(bob)
    assert name == "Bob" and room.seats[claimed_seat].name == "Bob"
    # The stranger's token claims the stranger's own entry, never Bob's.
    assert standings.claimed_name(room.standings, hash_token(stranger)) == "BOB 2"


def test_a_name_collision_in_the_record_itself_makes_a_second_entry() -> None:
    record = standings.added(None, now=1, game_id="a", game="capitol", seats=[("Bob", "k1")],
                             winners=[0], figures=[{}])  # fmt: skip
    record = standings.added(record, now=2, game_id="b", game="capitol", seats=[("bob", "k2")],
                             winners=[0], figures=[{}])  # fmt: skip
    rows = {r["name"]: r["games"] for r in standings.public(record)["players"]}
    assert rows == {"Bob": 1, "bob 2": 1}
    assert standings.claimed_name(record, "k1") == "Bob" and standings.claimed_name(record, "k2") == "bob 2"
    assert record["games"][-1]["winners"] == ["bob 2"]


def test_own_claims_keep_the_newest_devices_of_ones_own_only() -> None:
    record = standings.added(None, now=1, game_id="a", game="capitol", seats=[("Bob", "k0"), ("Ann", "a0")],
                             winners=[0], figures=[{}, {}])  # fmt: skip
    for n in range(1, 8):
        record = standings.with_key(record, f"k{n - 1}", f"k{n}")
    bob = record["players"]["bob"]
    assert bob["keys"] == ["k4", "k5", "k6", "k7"] and record["players"]["ann"]["keys"] == ["a0"]


def test_a_kicked_player_cannot_claim_their_way_back() -> None:
    room, _ = standing_room()
    _, bob = room.join("Bob")
    played(room, "g0", [0, 1], winner=1)
    # A claim on another device first (two keys), then the host kicks Bob from the lobby.
    room.leave(1)
    seat, other_device, _ = room.claim(bob)
    room.kick(seat)
    for token in (bob, other_device):
        try:
            room.claim(token)
        except RoomError as refused:
            assert refused.code == "bad_claim"
        else:
            raise AssertionError("a kicked player claimed a seat back")
    # Bob's games still count.
    assert standings.public(room.standings)["players"][0]["name"] == "Bob"
