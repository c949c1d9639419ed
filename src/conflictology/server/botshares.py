"""Fair shares of the bot workers: decisions wait per room, rooms per address, served in turns.

One address may open many rooms and fill them with bots; in one queue their decisions would be
served in the order asked, so a flood from one address would keep every other room waiting until
its searches were played by the stand-in (docs/bots.md, "Fair shares"). Here each *owner* (the
address that made the room, as the room recorded it) has its own line of rooms, and each room its
own lines of decisions. Owners take turns (deficit round robin): in its turn an owner is served up
to one search's worth of work, a search or :data:`QUICK_PER_SEARCH` heuristics, its heuristics
first; within an owner, its rooms take turns. So while others wait, an owner gets its share of the
workers whatever how many rooms and bots it has: a quiet room's search waits behind at most one
turn of every other owner's, and one address's flood of heuristics (its own searches' stand-ins)
cannot keep another's searches from a worker.
"""

from __future__ import annotations

import collections
import hashlib
from collections.abc import Iterator
from typing import Generic, Protocol, TypeVar

# A heuristic takes milliseconds, a search tenths of a second: how many heuristics one turn (one
# search's worth) may serve.
QUICK_PER_SEARCH = 20
QUICK_COST = 1.0 / QUICK_PER_SEARCH
# What an owner may spend in a turn: one search (the dearest decision), so a turn ends.
QUANTUM = 1.0


class Shared(Protocol):
    """What a waiting decision says about whose it is."""

    @property
    def owner(self) -> str: ...

    @property
    def room(self) -> str: ...

    @property
    def search(self) -> bool: ...

    @property
    def worth(self) -> float:
        """A search on a short clock: its share of a search's turn (0: a whole search, or a quick
        decision, as ``search`` says)."""

    def wanted(self) -> bool:
        """Still waiting for an answer (not withdrawn or answered meanwhile)."""


J = TypeVar("J", bound=Shared)

Lines = collections.OrderedDict[str, collections.deque[J]]


def _cost(job: Shared) -> float:
    # A search on a short clock waits among the heuristics but costs its clock.
    return job.worth or (1.0 if job.search else QUICK_COST)


class _Owner(Generic[J]):
    """One owner's rooms, each with its lines of decisions (heuristics, searches), in turn order."""

    def __init__(self) -> None:
        self.quick: Lines[J] = collections.OrderedDict()
        self.searches: Lines[J] = collections.OrderedDict()
        self.deficit = 0.0  # what is left of its turn
        self.in_turn = False

    def lines(self, job: Shared) -> Lines[J]:
        return self.searches if job.search else self.quick

    def head(self) -> J | None:
        for lines in (self.quick, self.searches):
            for line in lines.values():
                return line[0]
        return None

    def take(self) -> J:
        """Its next decision: a heuristic first, of its rooms in turn."""
        lines = self.quick if self.quick else self.searches
        room, line = next(iter(lines.items()))
        job = line.popleft()
        if line:
            lines.move_to_end(room)
        else:
            del lines[room]
        return job

    def __bool__(self) -> bool:
        return bool(self.quick or self.searches)

    def __iter__(self) -> Iterator[J]:
        for lines in (self.quick, self.searches):
            for line in lines.values():
                yield from line


class FairQueue(Generic[J]):
    """Turns between owners, and between each owner's rooms (see the module's text)."""

    def __init__(self) -> None:
        # In turn order: the first is served next, then goes to the back.
        self._owners: collections.OrderedDict[str, _Owner[J]] = collections.OrderedDict()

    def _owner(self, key: str) -> _Owner[J]:
        owner = self._owners.get(key)
        if owner is None:
            owner = self._owners[key] = _Owner()
        return owner

    def append(self, job: J) -> None:
        self._owner(job.owner).lines(job).setdefault(job.room, collections.deque()).append(job)

    def appendleft(self, job: J) -> None:
        """First in its room's line (it waited already); its owner keeps its place in the turns (a
        flood's stand-ins must not buy it extra turns)."""
        lines = self._owner(job.owner).lines(job)
        lines.setdefault(job.room, collections.deque()).appendleft(job)
        lines.move_to_end(job.room, last=False)

    def popleft(self) -> J | None:
        """The next decision in turn (None when none waits)."""
        while self._owners:
            key, owner = next(iter(self._owners.items()))
            head = owner.head()
            if head is None:
                del self._owners[key]
                continue
            if not owner.in_turn:
                owner.in_turn, owner.deficit = True, owner.deficit + QUANTUM
            if owner.deficit + 1e-9 < _cost(head):
                owner.in_turn = False  # its turn is spent: the next owner's
                self._owners.move_to_end(key)
                continue
            job = owner.take()
            owner.deficit -= _cost(job)
            if not owner:
                del self._owners[key]  # nothing waiting: nothing saved for later
            return job
        return None

    def remove(self, job: J) -> None:
        """Out of its line (ValueError when it is not waiting here)."""
        owner = self._owners.get(job.owner)
        lines = owner.lines(job) if owner is not None else None
        line = lines.get(job.room) if lines is not None else None
        if owner is None or lines is None or line is None:
            raise ValueError("the decision is not waiting here")
        line.remove(job)
        if not line:
            del lines[job.room]
        if not owner:
            del self._owners[job.owner]

    def __iter__(self) -> Iterator[J]:
        for owner in self._owners.values():
            yield from owner

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __bool__(self) -> bool:
        return bool(self._owners)

    def ahead_of_new(self, owner: str, room: str) -> float:
        """How many searches' worth of decisions waiting now a new search of ``room`` (of
        ``owner``) would wait behind, if nothing else were asked meanwhile: its room's searches,
        its owner's heuristics and other rooms' searches up to that many turns, and every other
        owner's decisions up to as many turns."""

        def worth(jobs: Iterator[J]) -> float:
            return sum(_cost(j) for j in jobs if j.wanted())

        mine = self._owners.get(owner)
        own_room = 0.0
        turns = 1.0  # its owner's turns until it is served
        if mine is not None:
            line = mine.searches.get(room)
            own_room = worth(iter(line)) if line is not None else 0.0
            turns = own_room + 1
            for key, other in mine.searches.items():
                if key != room:
                    turns += min(worth(iter(other)), own_room + 1)
            turns += sum(worth(iter(q)) for q in mine.quick.values())
        others = sum(min(worth(iter(o)), turns) for key, o in self._owners.items() if key != owner)
        return turns - 1 + others


def owner_label(address: str) -> str:
    """The label a room keeps of the address that made it (``Room.creator``): a digest, so that a
    room's snapshot does not spell out its creator's address (it tells rooms of one address apart,
    nothing more; not a secret from whoever can try every address)."""
    return hashlib.sha256(b"conflictology bot share\0" + address.encode()).hexdigest()[:16]
