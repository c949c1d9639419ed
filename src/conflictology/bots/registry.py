"""Registers every bot, level and personality (imported at the end of ``conflictology.bots``).

Levels (what a host picks in a room; see docs/bots.md):

* ``easy``: the heuristic, with a third of its decisions taken at random (it blunders, it bluffs
  clumsily) — for first-time players.
* ``normal``: the heuristic bot.
* ``hard``: the game's search bot (``search``: the flat search in Capitol, ISMCTS in Conspiranoicos)
  at 0.3 s per decision.
"""

from __future__ import annotations

from conflictology.bots import capitol as _capitol
from conflictology.bots import capitol_knowledge as _capitol_knowledge
from conflictology.bots import capitol_search as _capitol_search
from conflictology.bots import conspiranoicos as _conspiranoicos
from conflictology.bots import ismcts as _ismcts
from conflictology.bots import outside as _outside
from conflictology.bots import register, register_level

# The default ``ismcts``: an iteration budget (reproducible under a seed) with a wall-clock cap so a
# decision never takes longer than half a second on a slow machine. In Capitol (the paired search,
# docs/bots.md) the cap is 0.48 s: the last walk under way when the clock runs out comes on top.
register("ismcts", _ismcts.factory(iterations=2000, seconds=0.5), cost="search", clocked=True)
register(
    "ismcts", _ismcts.factory(iterations=2000, seconds=0.48), game="capitol", cost="search", clocked=True
)

# The flat search over determinized worlds (docs/bots.md): worlds per decision, capped at 0.4 s. In
# Capitol, where every seat plays the heuristic in its rollouts, it beats three heuristics (0.52).
register("pimc", _ismcts.flat_factory(iterations=1000, seconds=0.4), cost="search", clocked=True)

# ``search``: each game's strongest search bot (what ``hard`` stands for): the flat search in
# Capitol, ISMCTS in Conspiranoicos (0.72 against its heuristic). In Capitol its rollouts play each
# other seat half the time as the heuristic and half as a bold rule player (``opp=mix``, docs/bots.md).
register(
    "search", _ismcts.flat_factory(iterations=1000, seconds=0.4), game="capitol", cost="search", clocked=True
)
register(
    "search",
    _ismcts.factory(iterations=2000, seconds=0.5),
    game="conspiranoicos",
    cost="search",
    clocked=True,
)

register_level("easy", "heuristic:noise=0.35")
register_level("normal", "heuristic")
register_level("hard", "search:seconds=0.3")

DEFAULT_LEVEL = "normal"

# Capitol: the heuristic and its personalities.
for _name in _capitol_knowledge.PERSONALITIES:
    register(_name, _capitol.factory(_name), game="capitol")

# Conspiranoicos: the heuristic.
register("heuristic", _conspiranoicos.factory(), game="conspiranoicos")
_ismcts.register_policy("conspiranoicos", _conspiranoicos.ConspiranoicosSearch())
_ismcts.register_policy("capitol", _capitol_search.CapitolSearch())

# The outside AI (treason's rule-based player, through the optional coupml package): a sparring
# partner for ``simulate`` and ``arena``, never offered on a server (docs/bots.md).
register("outside-treason", _outside.factory(faithful=False), game="capitol", offered=False)
register("outside-treason-js", _outside.factory(faithful=True), game="capitol", offered=False)
