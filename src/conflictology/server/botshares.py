"""Fair shares of the bot workers: decisions wait per room, rooms per address, served round robin.

One address may open many rooms and fill them with bots; in one queue their decisions would be
served in the order asked, so a flood from one address would keep every other room waiting until
its searches were played by the stand-in (docs/bots.md, "Fair shares"). Here each *owner* (the
address that made the room, as the room recorded it) has its own line of rooms, and each room its
own line of decisions: a free worker takes the next decision of the next owner in turn, and within
that owner, of its next room in turn. So while others wait, an owner gets one decision in every
round, whatever how many rooms and bots it has, and a room one in every round of its owner's.

Decisions of one kind cost about the same (a search runs to its level's clock, a heuristic takes
milliseconds; the two kinds wait in two such queues, quick first), so the round counts decisions:
deficit round robin with equal costs is plain round robin.
"""

from __future__ import annotations

import collections
import hashlib
from collections.abc import Iterator
from typing import Generic, Protocol, TypeVar


class Shared(Protocol):
    """What a waiting decision says about whose it is."""

    @property
    def owner(self) -> str: ...

    @property
    def room(self) -> str: ...

    def wanted(self) -> bool:
        """Still waiting for an answer (not withdrawn or answered meanwhile)."""


J = TypeVar("J", bound=Shared)


class _Owner(Generic[J]):
    """One owner's rooms, each with its line of decisions, in the order they are served."""

    def __init__(self) -> None:
        self.rooms: collections.OrderedDict[str, collections.deque[J]] = collections.OrderedDict()

    def __len__(self) -> int:
        return sum(len(line) for line in self.rooms.values())


class FairQueue(Generic[J]):
    """Round robin between owners, and between each owner's rooms (see the module's text)."""

    def __init__(self) -> None:
        # In serving order: the first is served next, then goes to the back.
        self._owners: collections.OrderedDict[str, _Owner[J]] = collections.OrderedDict()

    def append(self, job: J) -> None:
        owner = self._owners.get(job.owner)
        if owner is None:
            owner = self._owners[job.owner] = _Owner()
        owner.rooms.setdefault(job.room, collections.deque()).append(job)

    def appendleft(self, job: J) -> None:
        """First in its room's line, and its owner and room served next (it waited already)."""
        owner = self._owners.get(job.owner)
        if owner is None:
            owner = self._owners[job.owner] = _Owner()
        self._owners.move_to_end(job.owner, last=False)
        owner.rooms.setdefault(job.room, collections.deque()).appendleft(job)
        owner.rooms.move_to_end(job.room, last=False)

    def popleft(self) -> J | None:
        """The next decision in turn (None when none waits); its owner and room go to the back."""
        while self._owners:
            owner_key, owner = next(iter(self._owners.items()))
            while owner.rooms:
                room_key, line = next(iter(owner.rooms.items()))
                job = line.popleft()
                if line:
                    owner.rooms.move_to_end(room_key)
                else:
                    del owner.rooms[room_key]
                if owner.rooms:
                    self._owners.move_to_end(owner_key)
                else:
                    del self._owners[owner_key]
                return job
            del self._owners[owner_key]
        return None

    def remove(self, job: J) -> None:
        """Out of its line (ValueError when it is not waiting here)."""
        owner = self._owners.get(job.owner)
        line = owner.rooms.get(job.room) if owner is not None else None
        if owner is None or line is None:
            raise ValueError("the decision is not waiting here")
        line.remove(job)
        if not line:
            del owner.rooms[job.room]
        if not owner.rooms:
            del self._owners[job.owner]

    def __iter__(self) -> Iterator[J]:
        for owner in self._owners.values():
            for line in owner.rooms.values():
                yield from line

    def __len__(self) -> int:
        return sum(len(owner) for owner in self._owners.values())

    def __bool__(self) -> bool:
        return bool(self._owners)

    def ahead_of_new(self, owner: str, room: str) -> int:
        """How many decisions waiting now a new one of ``room`` (of ``owner``) would wait behind,
        if nothing else were asked meanwhile: its room's own line, its owner's other rooms up to
        that many rounds, and every other owner's decisions up to as many rounds as it waits in its
        owner's line."""

        def wanted(line: collections.deque[J]) -> int:
            return sum(1 for j in line if j.wanted())

        mine = self._owners.get(owner)
        own_room = wanted(mine.rooms[room]) if mine is not None and room in mine.rooms else 0
        # Its rank among its owner's decisions (1 = its owner's next).
        rank = own_room + 1
        if mine is not None:
            rank += sum(min(wanted(line), own_room + 1) for key, line in mine.rooms.items() if key != room)
        others = sum(
            min(sum(wanted(line) for line in o.rooms.values()), rank)
            for key, o in self._owners.items()
            if key != owner
        )
        return rank - 1 + others


def owner_label(address: str) -> str:
    """The label a room keeps of the address that made it (``Room.creator``): a digest, so that a
    room's snapshot does not spell out its creator's address (it tells rooms of one address apart,
    nothing more; not a secret from whoever can try every address)."""
    return hashlib.sha256(b"conflictology bot share\0" + address.encode()).hexdigest()[:16]
