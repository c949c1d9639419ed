"""The engine's rule options as OpenSpiel game parameters, one parameter per option.

OpenSpiel parameters are numbers, booleans and strings, written into the game's string
(``python_conflictology_capitol(forced_scandal=False,players=4,...)``) and parsed back from it, so a
value may hold no comma, parenthesis or ``=``. Each option has a kind saying how its value is spelt:

* ``bool``: itself;
* ``seat``: a seat number or ``None``, spelt ``-1`` (Capitol's ``first_player``: random);
* ``names``: a list of names, spelt joined by ``+`` (``steal_blockers=mafia+reporter``, ``""``: none);
* ``digits``: a list of one-digit numbers, spelt as the number of its digits (Conspiranoicos'
  ``face_up_slots=456``, ``0``: none), since OpenSpiel reads a value starting with a digit as a number;
* ``text``: a string or ``None``, spelt ``""`` (Conspiranoicos' ``deck_file``: the bundled deck);
* ``count``: a whole number of a late option, spelt ``0`` for "not set" (Capitol's ``copies``,
  ``stalemate_turns``, ``influence``: the game leaves the option out, and the rule's own default or
  the table's size applies).

The defaults come from the engine's ``default_options()``; a game whose options differ from the
kinds listed here is refused at registration, so a new option cannot be silently left out. A *late*
option (``LATE``: one the engine lists in a game's options only when it is set, Capitol's
``LATE_OPTIONS``) defaults to "not set" (``0``, ``""``) and reaches the engine only when given
otherwise, so a game that leaves it alone is the game it was before the option existed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conflictology.engine import Game

KINDS: dict[str, dict[str, str]] = {
    "capitol": {
        "first_player": "seat",
        "forced_scandal": "bool",
        "steal_blockers": "names",
        "anyone_challenges_block": "bool",
    },
    "conspiranoicos": {
        "deck_file": "text",
        "face_up_slots": "digits",
        "sequence_any_order": "bool",
        "head_to_head_ties_score_both": "bool",
    },
}


# The late options (see the module docstring), each with its kind; "not set" is the kind's zero.
LATE: dict[str, dict[str, str]] = {
    "capitol": {"copies": "count", "stalemate_turns": "count", "roles": "names", "influence": "count"},
}
UNSET: dict[str, bool | int | str] = {"count": 0, "names": ""}


def kinds(game: Game) -> dict[str, str]:
    listed = KINDS.get(game.name, {})
    engine = set(game.default_options())
    if set(listed) != engine:
        raise ValueError(
            f"{game.name}'s options are {sorted(engine)}; the OpenSpiel parameters know {sorted(listed)}"
        )
    return {**listed, **LATE.get(game.name, {})}


def spell(kind: str, value: Any) -> bool | int | str:
    if kind == "bool":
        return bool(value)
    if kind == "seat":
        return -1 if value is None else int(value)
    if kind == "names":
        return "+".join(str(v) for v in value)
    if kind == "digits":
        if any(not 0 < int(v) < 10 for v in value):
            raise ValueError(f"one-digit numbers are needed, got {value!r}")
        return int("".join(str(int(v)) for v in value) or "0")
    if kind == "text":
        return "" if value is None else str(value)
    if kind == "count":
        return 0 if value is None else int(value)
    raise ValueError(f"unknown option kind {kind!r}")


def read(kind: str, name: str, value: Any) -> Any:
    try:
        if kind == "bool":
            if not isinstance(value, bool):
                raise TypeError
            return value
        if kind == "seat":
            return None if int(value) < 0 else int(value)
        if kind == "names":
            return [v for v in str(value).split("+") if v]
        if kind == "digits":
            if isinstance(value, bool) or int(value) < 0:
                raise ValueError
            return [int(d) for d in str(int(value)) if d != "0"]
        if kind == "text":
            return str(value) or None
        if kind == "count":
            if isinstance(value, bool) or int(value) != value:
                raise ValueError
            return int(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"parameter {name}: {value!r} is not a {kind} value") from exc
    raise ValueError(f"unknown option kind {kind!r}")


def defaults(game: Game) -> dict[str, bool | int | str]:
    """The parameters' defaults: the engine's default options, spelt as parameters (a late option:
    "not set")."""
    engine = game.default_options()
    late = LATE.get(game.name, {})
    return {
        name: UNSET[kind] if name in late else spell(kind, engine[name]) for name, kind in kinds(game).items()
    }


def engine_options(game: Game, params: Mapping[str, Any]) -> dict[str, Any]:
    """The engine's options from the parameters given (absent ones: the engine's defaults; a late
    one given as "not set" is left out)."""
    late = LATE.get(game.name, {})
    return {
        name: read(kind, name, params[name])
        for name, kind in kinds(game).items()
        if name in params and not (name in late and params[name] == UNSET[kind])
    }
