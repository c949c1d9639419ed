"""Registers every bot, level and personality (imported at the end of ``conflictology.bots``).

Levels (what a host picks in a room; see docs/bots.md):

* ``easy``: the heuristic, with a third of its decisions taken at random (it blunders, it bluffs
  clumsily) — for first-time players.
* ``normal``: the heuristic bot.
* ``hard``: ISMCTS with a budget that keeps a decision well under a second.
"""

from __future__ import annotations

from conflictology.bots import capitol as _capitol
from conflictology.bots import conspiranoicos as _conspiranoicos
from conflictology.bots import ismcts as _ismcts
from conflictology.bots import register, register_level

# The default ``ismcts``: an iteration budget (reproducible under a seed) with a wall-clock cap so a
# decision never takes longer than half a second on a slow machine.
register("ismcts", _ismcts.factory(iterations=2000, seconds=0.5))

# The flat search over heuristic playouts (docs/bots.md): worlds per decision, capped at 0.4 s.
register("pimc", _ismcts.flat_factory(iterations=1000, seconds=0.4))

register_level("easy", "heuristic:noise=0.35")
register_level("normal", "heuristic")
register_level("hard", "ismcts:iterations=2000:seconds=0.3")

DEFAULT_LEVEL = "normal"

# Capitol: the heuristic and its personalities.
for _name in _capitol.PERSONALITIES:
    register(_name, _capitol.factory(_name), game="capitol")

# Conspiranoicos: the heuristic.
register("heuristic", _conspiranoicos.factory(), game="conspiranoicos")
_ismcts.register_policy("conspiranoicos", _conspiranoicos.ConspiranoicosSearch())
_ismcts.register_policy("capitol", _capitol.CapitolSearch())
