"""Where live rooms are kept: the one small interface every room change goes through.

A change is always *load the room → apply a change → save it with its version → notify*. The
in-memory backend (the default) keeps live :class:`Room` objects and serialises changes per room
with an asyncio lock. A shared backend (Redis, issue 7) implements the same four steps with a
snapshot, a version check and a pub/sub channel per room; the hub above it does not change.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from conflictology.server.rooms import Room, RoomError, RoomStatus
from conflictology.server.security import Budget

if TYPE_CHECKING:
    from conflictology.server.archive import SharedQueue

T = TypeVar("T")

# listener(room, local): local is True for a change made by this process (it saves and archives),
# False for one announced by another process, or for a room this process just took over.
Listener = Callable[[Room, bool], None]
# event_listener(code, message): a message for a room's sockets that changes nothing in the room (a
# reaction), announced by another process.
EventListener = Callable[[str, dict[str, Any]], None]


class BackendUnavailable(Exception):
    """The rooms' store does not answer (Redis down or unreachable, a database refusing writes):
    answered 503 ``unavailable`` with a Retry-After over HTTP, an error message on a socket. Not a
    :class:`RoomError`, which says the request itself was refused: scheduled work (clocks, bot
    turns) that meets this tries again until the store is back."""

    status = 503
    code = "unavailable"

    def __init__(self, message: str = "the server's rooms are unavailable; try again in a moment") -> None:
        super().__init__(message)
        self.message = message


class RoomBackend(ABC):
    # True when other processes share the rooms (they then live in the backend, not in the SQL store).
    shared = False

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._event_listeners: list[EventListener] = []

    def subscribe(self, listener: Listener) -> None:
        """``listener(room, local)`` runs after every saved change, before the change's caller
        resumes (and, on a shared backend, when another process announces one)."""
        self._listeners.append(listener)

    def _notify(self, room: Room, local: bool = True) -> None:
        for listener in self._listeners:
            listener(room, local)

    def on_event(self, listener: EventListener) -> None:
        """``listener(code, message)`` runs when another process announces a message for a room's
        sockets (see :meth:`announce`)."""
        self._event_listeners.append(listener)

    def _notify_event(self, code: str, message: dict[str, Any]) -> None:
        for listener in self._event_listeners:
            listener(code, message)

    async def announce(self, code: str, message: dict[str, Any]) -> None:  # noqa: B027 (optional hook)
        """Pass a message that changes nothing in the room (a reaction) to the other processes'
        sockets in it; this process has already sent it to its own. Nothing to do with one process."""

    async def start(self, interested: Callable[[str], bool]) -> None:  # noqa: B027 (optional hook)
        """Begin serving; ``interested(code)`` says whether this process has sockets in a room."""

    async def stop(self) -> None:  # noqa: B027 (optional hook)
        """Stop serving (this process's presence and rooms are handed over to the others)."""

    def count(self) -> int:
        """Rooms this process keeps (a shared backend: the rooms it owns), for the server's cap."""
        return 0

    def budget(self, name: str, rate: float, burst: float) -> Budget:
        """A per-address budget (guesses at room codes, rooms made): this process's own; a shared
        backend shares it between processes, or a client would get one budget per process."""
        return Budget(rate, burst)

    def archive_queue(self) -> SharedQueue | None:
        """Where finished games wait for the database (archive.py); None: in the snapshots'
        transaction (rooms in this process's memory)."""
        return None

    def available(self) -> bool:
        """Whether the backend answered its last request (``/healthz`` says degraded when not)."""
        return True

    def stats(self) -> dict[str, int]:
        """Counters for ``/metrics`` (monotonic, per process); a shared backend says what its
        round trips cost."""
        return {}

    def owns(self, code: str) -> bool:
        """Whether this process runs the room's clocks, bot turns and grace periods (exactly one
        process does)."""
        return True

    def remote_seats(self, code: str) -> set[str]:
        """Seat ids connected through other processes."""
        return set()

    async def watch(self, code: str) -> None:  # noqa: B027 (optional hook)
        """This process opened its first socket in a room: from now on it must hear of its changes."""

    async def unwatch(self, code: str) -> None:  # noqa: B027 (optional hook)
        """This process closed its last socket in a room."""

    async def presence(self, code: str, seat_id: str, online: bool) -> None:  # noqa: B027 (optional hook)
        """A seat's first socket on this process opened (online) or its last one closed."""

    @abstractmethod
    async def get(self, code: str) -> Room | None:
        """The room as it is now (read-only use; change it through :meth:`update`)."""

    @abstractmethod
    async def insert(self, room: Room) -> bool:
        """Add a new room; False if its code is taken."""

    @abstractmethod
    async def update(self, code: str, change: Callable[[Room], T]) -> tuple[Room, T]:
        """Apply ``change`` atomically; a :class:`RoomError` from it changes nothing."""

    @abstractmethod
    async def delete(self, code: str) -> None: ...

    @abstractmethod
    async def codes(self) -> list[str]: ...

    async def summaries(self) -> list[Room]:
        """Every room as it is now, to read what a listing shows (seats, settings, status, the
        game's state); a shared backend may leave the action log out. Never change these."""
        rooms = []
        for code in await self.codes():
            room = await self.get(code)
            if room is not None:
                rooms.append(room)
        return rooms

    @abstractmethod
    async def listed(self, limit: int) -> list[Room]:
        """Up to ``limit`` rooms a listing shows (public, not over), newest first, read as cheaply
        as the backend can (a shared one may leave out the game state and the log). Never change
        these."""

    @abstractmethod
    async def find_game(self, game_id: str) -> Room | None:
        """The room whose current game is ``game_id`` (an index, not a scan: any stranger may ask)."""

    def load(self, room: Room) -> None:
        """Put a restored room back (at startup) without counting it as a change."""
        raise NotImplementedError


def is_listed(room: Room) -> bool:
    """Whether ``GET /api/rooms`` shows the room."""
    return room.settings.public and room.status is not RoomStatus.OVER


class MemoryBackend(RoomBackend):
    def __init__(self) -> None:
        super().__init__()
        self._rooms: dict[str, Room] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        # Indexes, kept on every change: listed rooms' codes, and each current game's room.
        self._listed: set[str] = set()
        self._games: dict[str, str] = {}

    def _index(self, room: Room, old_game: str | None) -> None:
        if is_listed(room):
            self._listed.add(room.code)
        else:
            self._listed.discard(room.code)
        if old_game != room.game_id:
            if old_game is not None:
                self._games.pop(old_game, None)
            if room.game_id is not None:
                self._games[room.game_id] = room.code

    def count(self) -> int:
        return len(self._rooms)

    async def listed(self, limit: int) -> list[Room]:
        rooms = [self._rooms[c] for c in self._listed if c in self._rooms]
        rooms.sort(key=lambda r: r.created, reverse=True)
        return rooms[:limit]

    async def find_game(self, game_id: str) -> Room | None:
        code = self._games.get(game_id)
        return None if code is None else self._rooms.get(code)

    async def get(self, code: str) -> Room | None:
        return self._rooms.get(code)

    def get_now(self, code: str) -> Room | None:
        return self._rooms.get(code)

    async def insert(self, room: Room) -> bool:
        if room.code in self._rooms:
            return False
        room.version = 1
        room.updated = time.time()
        self._rooms[room.code] = room
        self._locks[room.code] = asyncio.Lock()
        self._index(room, None)
        self._notify(room)
        return True

    def load(self, room: Room) -> None:
        self._rooms[room.code] = room
        self._locks[room.code] = asyncio.Lock()
        self._index(room, None)

    async def update(self, code: str, change: Callable[[Room], T]) -> tuple[Room, T]:
        lock = self._locks.get(code)
        if lock is None:
            raise RoomError(404, "no_room", f"no room {code}")
        async with lock:
            room = self._rooms.get(code)
            if room is None:
                raise RoomError(404, "no_room", f"no room {code}")
            # Room operations check everything before they change anything, so a refusal leaves
            # the live object untouched and nothing is saved or announced.
            old_game = room.game_id
            result = change(room)
            self._index(room, old_game)
            room.version += 1
            room.updated = time.time()
            self._notify(room)
            return room, result

    async def delete(self, code: str) -> None:
        room = self._rooms.pop(code, None)
        self._locks.pop(code, None)
        self._listed.discard(code)
        if room is not None and room.game_id is not None:
            self._games.pop(room.game_id, None)

    async def codes(self) -> list[str]:
        return list(self._rooms)
