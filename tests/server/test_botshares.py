"""Fair shares of the bot workers (server/botshares.py): round robin between the addresses that made
the rooms, and between each address's rooms; a decision of a quiet room waits behind one decision of
every other owner, however many a flood has queued."""

from __future__ import annotations

from dataclasses import dataclass

from conflictology.server.botshares import QUICK_PER_SEARCH, FairQueue, owner_label


@dataclass(eq=False)
class Decision:
    owner: str
    room: str
    n: int = 0
    done: bool = False
    search: bool = True
    worth: float = 0.0

    def wanted(self) -> bool:
        return not self.done


def _served(queue: FairQueue[Decision]) -> list[tuple[str, str, int]]:
    out = []
    while (job := queue.popleft()) is not None:
        out.append((job.owner, job.room, job.n))
    return out


def test_a_flood_from_one_owner_takes_turns_with_another_owners_room() -> None:
    queue: FairQueue[Decision] = FairQueue()
    for room in range(20):  # one address, 20 rooms x 5 bots
        for n in range(5):
            queue.append(Decision("flood", f"F{room}", n))
    queue.append(Decision("quiet", "Q", 0))
    queue.append(Decision("quiet", "Q", 1))
    order = _served(queue)
    # The quiet room's first decision is served second, its next one fourth: one of the flood's between.
    assert order[1] == ("quiet", "Q", 0) and order[3] == ("quiet", "Q", 1)
    assert [o for o, _, _ in order[:4]] == ["flood", "quiet", "flood", "quiet"]
    assert len(order) == 102


def test_an_owners_rooms_take_turns_and_a_room_keeps_its_order() -> None:
    queue: FairQueue[Decision] = FairQueue()
    for n in range(3):
        queue.append(Decision("a", "R1", n))
    queue.append(Decision("a", "R2", 0))
    assert _served(queue) == [("a", "R1", 0), ("a", "R2", 0), ("a", "R1", 1), ("a", "R1", 2)]


def test_a_flood_of_heuristics_from_one_owner_cannot_keep_another_owners_search_waiting() -> None:
    """One address's heuristics (its own searches' stand-ins) take milliseconds each, but a flood of
    them must not keep another address's search from a worker: a turn serves one search's worth."""
    queue: FairQueue[Decision] = FairQueue()
    for n in range(100):
        queue.append(Decision("flood", f"F{n % 20}", n, search=False))
    queue.append(Decision("quiet", "Q", 0))
    order = _served(queue)
    assert order.index(("quiet", "Q", 0)) == QUICK_PER_SEARCH
    # Within one owner its heuristics go before its searches.
    queue.append(Decision("a", "R", 0))
    queue.append(Decision("a", "R", 1, search=False))
    assert _served(queue) == [("a", "R", 1), ("a", "R", 0)]


def test_a_decision_put_back_goes_first_and_a_removed_one_is_gone() -> None:
    queue: FairQueue[Decision] = FairQueue()
    first, second, other = Decision("a", "R1", 0), Decision("a", "R1", 1), Decision("b", "R2", 0)
    for job in (first, second, other):
        queue.append(job)
    queue.remove(second)
    back = Decision("b", "R2", 9)
    queue.appendleft(back)
    assert len(queue) == 3 and list(queue).count(second) == 0
    # First in its room's line; its owner keeps its place in the turns (no extra turn bought).
    assert _served(queue) == [("a", "R1", 0), ("b", "R2", 9), ("b", "R2", 0)]
    assert not queue


def test_how_many_a_new_decision_would_wait_behind() -> None:
    queue: FairQueue[Decision] = FairQueue()
    for room in range(10):
        for n in range(5):
            queue.append(Decision("flood", f"F{room}", n))
    # A quiet room waits behind one of the flood's; a new flood decision behind all 50 and more.
    assert queue.ahead_of_new("quiet", "Q") == 1
    assert queue.ahead_of_new("flood", "F0") >= 50
    withdrawn = Decision("quiet", "Q", 0, done=True)
    queue.append(withdrawn)  # answered meanwhile: not counted
    assert queue.ahead_of_new("quiet", "Q") == 1


def test_an_owner_label_tells_addresses_apart_without_spelling_them() -> None:
    assert owner_label("203.0.113.7") == owner_label("203.0.113.7")
    assert owner_label("203.0.113.7") != owner_label("203.0.113.8")
    assert "203" not in owner_label("203.0.113.7")
