"""A standing table's record: every game played in a *standing* room, added up by player name.

No accounts: a standing is held by the seat tokens it was played with (their SHA-256, never shown),
not by its name. A seat whose token holds an entry adds its games to that entry; any other seat gets
an entry of its own, never merged into another's (a newcomer taking a name of the table is renamed
at join, ``Seats.join``; should a name still collide here, the entry is told apart the same way). A
player on a new device claims their entry with a token from a game they played there
(``Room.claim``), which adds the new device's token to it; only the holder's own claims add keys, so
nobody else's games push them out. A kick takes away every key of the kicked player's entry: they
cannot claim their way back to the table. The record lives in the room's
snapshot, so it is saved with every change and survives restarts on every backend (SQL snapshots,
Redis). Functions here never change a record in place: they return a new one (a snapshot being
written on another thread may still hold the old one).

A record: ``{"since": epoch, "players": {key: {"name", "games", "wins", "last", "keys": [hashes],
"by_game": {game: {"games", "wins", figure: sum, ...}}}}, "games": [{"id", "game", "finished",
"players": [names], "winners": [names]}, ...newest last]}``.
"""

from __future__ import annotations

import copy
from typing import Any

from conflictology.server.security import distinct_name, same_hash

# Bounds: a room is open to anyone with its code, so its record cannot grow without limit.
MAX_NAMES = 64  # beyond it, the name that played longest ago is dropped
MAX_GAMES = 50  # games listed (the sums cover every game since the last reset)
MAX_KEYS = 4  # token hashes kept per name (its newest devices; the record is in every snapshot)


def name_key(name: str) -> str:
    return name.casefold()


def empty(now: float) -> dict[str, Any]:
    return {"since": now, "players": {}, "games": []}


def added(
    record: dict[str, Any] | None,
    *,
    now: float,
    game_id: str,
    game: str,
    seats: list[tuple[str, str | None]],
    winners: list[int],
    figures: list[dict[str, int]],
) -> dict[str, Any]:
    """The record with one finished game added: ``seats`` are the people who played it (name, token
    hash or None), by seat; ``winners`` seats; ``figures`` the game's per-seat figures."""
    out = copy.deepcopy(record) if record else empty(now)
    if any(g["id"] == game_id for g in out["games"]):
        return out  # counted already (a room's game ends once, but be safe on a replayed change)
    players: dict[str, Any] = out["players"]
    names: list[str] = []
    names_by_seat: dict[int, str] = {}
    for seat, (name, key) in enumerate(seats):
        if not name:
            continue
        entry = _entry_of(players, key) if key is not None else None
        if entry is None and key is None:
            # A seat whose token is gone (kicked or given up mid-game): its name is still its own
            # (names are told apart at join), but only an entry no token holds is ever merged with it.
            same = players.get(name_key(name))
            entry = same if same is not None and not same.get("keys") else None
        if entry is None:
            shown = distinct_name(name, (e["name"] for e in players.values()))
            entry = {
                "name": shown,
                "games": 0,
                "wins": 0,
                "keys": [] if key is None else [key],
                "by_game": {},
            }
            players[_free_slot(players, shown)] = entry
        names.append(entry["name"])
        names_by_seat[seat] = entry["name"]
        won = int(seat in winners)
        entry["games"] += 1
        entry["wins"] += won
        entry["last"] = now
        per = entry["by_game"].setdefault(game, {"games": 0, "wins": 0})
        per["games"] += 1
        per["wins"] += won
        for figure, value in (figures[seat] if seat < len(figures) else {}).items():
            per[figure] = per.get(figure, 0) + int(value)
    if len(players) > MAX_NAMES:
        for key in sorted(players, key=lambda k: players[k].get("last", 0))[: len(players) - MAX_NAMES]:
            del players[key]
    out["games"] = [
        *out["games"],
        {
            "id": game_id,
            "game": game,
            "finished": now,
            "players": names,
            "winners": [names_by_seat[w] for w in winners if w in names_by_seat],
        },
    ][-MAX_GAMES:]
    return out


def with_key(record: dict[str, Any], held: str, key: str) -> dict[str, Any]:
    """The record with one more token hash (``key``, a claim on a new device) for the entry that
    ``held`` holds: its own oldest device's is dropped past MAX_KEYS, never anyone else's."""
    out = copy.deepcopy(record)
    entry = _entry_of(out["players"], held)
    if entry is not None and not _holds(entry, key):
        entry["keys"] = [*entry["keys"], key][-MAX_KEYS:]
    return out


def without_holder(record: dict[str, Any], key: str) -> dict[str, Any]:
    """The record with every key of the entry that ``key`` holds taken away (its holder was kicked:
    no device of theirs claims a seat again; the games they played still count)."""
    out = copy.deepcopy(record)
    entry = _entry_of(out["players"], key)
    if entry is not None:
        entry["keys"] = []
    return out


def known_names(record: dict[str, Any] | None) -> list[str]:
    """The names the standings know (a newcomer taking one is told apart)."""
    return [str(e["name"]) for e in (record or {}).get("players", {}).values()]


def _entry_of(players: dict[str, Any], key: str) -> dict[str, Any] | None:
    return next((e for e in players.values() if _holds(e, key)), None)


def _free_slot(players: dict[str, Any], name: str) -> str:
    slot, n = name_key(name), 2
    while slot in players:
        slot, n = f"{name_key(name)}#{n}", n + 1
    return slot


def _holds(entry: dict[str, Any], key: str) -> bool:
    """Whether a name's entry keeps the token hash ``key`` (compared in constant time, as seats' are)."""
    return any(same_hash(key, k) for k in entry.get("keys", []))


def claimed_name(record: dict[str, Any] | None, key: str) -> str | None:
    """The name whose games were played with the token of hash ``key``."""
    for entry in (record or {}).get("players", {}).values():
        if _holds(entry, key):
            return str(entry["name"])
    return None


def public(record: dict[str, Any] | None) -> dict[str, Any]:
    """What ``GET /api/rooms/{code}/standings`` shows: no token hash; players by wins, then win
    share, then games."""
    if not record:
        return {"since": None, "players": [], "games": []}
    rows = [
        {
            "name": e["name"],
            "games": e["games"],
            "wins": e["wins"],
            "by_game": copy.deepcopy(e["by_game"]),
        }
        for e in record["players"].values()
    ]
    rows.sort(key=lambda r: (-r["wins"], -r["wins"] / max(r["games"], 1), -r["games"], r["name"]))
    return {"since": record["since"], "players": rows, "games": copy.deepcopy(record["games"])}
