"""ActionTable lookups: the remembered fast path gives what the canonical lookup gives."""

from __future__ import annotations

import pytest

from conflictology import games
from conflictology.engine import IllegalAction


def test_remembered_lookups_match_the_canonical_ones_and_never_confuse_types() -> None:
    table = games.get("capitol").action_table
    hacker = {"type": "hacker", "target": 1}
    first = table.index(hacker)
    assert table.index(dict(hacker)) == first  # now remembered
    assert table.index({"target": 1, "type": "hacker"}) == first  # another spelling
    assert table.action(first) == hacker
    # True equals 1 in Python, but is no seat: the lookup refuses it before and after.
    for _ in range(2):
        with pytest.raises(IllegalAction):
            table.index({"type": "hacker", "target": True})
        with pytest.raises(IllegalAction):
            table.index({"type": "hacker", "target": 1.0})
    # Kept hands (lists) take the canonical path, in any order.
    keep = table.index({"type": "keep", "cards": ["judge", "banker"]})
    assert keep == table.index({"type": "keep", "cards": ["banker", "judge"]})
    # Refused input is not remembered: the memory holds only the table's own actions. (The table
    # is the game's own, shared by every test in the session: what other tests remembered stays.)
    remembered = len(table._seen)
    for seat in range(100, 200):
        with pytest.raises(IllegalAction):
            table.index({"type": "hacker", "target": seat})
    assert len(table._seen) == remembered
