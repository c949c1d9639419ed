"""Bots: players that decide from their own seat's view and legal actions, never from the full state.

A bot is made by ``bots.make(name, game, seat, seed)`` and asked ``bot.act(view, legal)``. Search bots
draw full states consistent with the view through ``game.determinize``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from conflictology.engine import Action, Game, GameState, Rng, View


class Bot:
    """The interface every bot implements."""

    name = "bot"

    def __init__(self, game: Game, seat: int, seed: int | None = None, **params: Any) -> None:
        self.game = game
        self.seat = seat
        self.rng = Rng(Rng.fresh_seed() if seed is None else seed)
        self.params = params

    def act(self, view: View, legal: list[Action]) -> Action:
        raise NotImplementedError


class RandomBot(Bot):
    """Picks uniformly among the legal actions."""

    name = "random"

    def act(self, view: View, legal: list[Action]) -> Action:
        return self.rng.choice(legal)


BotFactory = Callable[..., Bot]

# How long a bot takes to decide, which is how a server schedules it (docs/bots.md, "On a server"):
# "trivial" answers in microseconds and is asked on the server's event loop; "quick" takes
# milliseconds (a heuristic: up to ~40 ms in Conspiranoicos) and "search" tenths of a second (it
# searches sampled worlds against a clock): both are asked in a worker process.
BotCost = Literal["trivial", "quick", "search"]

_REGISTRY: dict[str, BotFactory] = {"random": RandomBot}
# Bots written for one game (the heuristics): (name, game name) -> factory. ``make`` looks here first.
_GAME_REGISTRY: dict[tuple[str, str], BotFactory] = {}
# (name, game name or None for every game) -> cost; a name registered without one is "quick".
_COSTS: dict[tuple[str, str | None], BotCost] = {("random", None): "trivial"}
# Names a server never offers (``offered``): sparring partners for the command line and the library.
_UNOFFERED: set[str] = set()
# (name, game name or None) of the searches that keep a clock (``seconds``): a server under load may
# play one on a shorter clock rather than hand its decision to another level (:func:`with_clock`).
_CLOCKED: set[tuple[str, str | None]] = set()
# Level names a server or a host can pick, and the bot spec each one stands for (see docs/bots.md).
LEVELS: dict[str, str] = {}

# The level a server seats when the host names none: "a good opponent" that answers fast enough for
# live play (set below, once the bots are registered).
DEFAULT_LEVEL = "random"


def register(
    name: str,
    factory: BotFactory,
    game: str | None = None,
    cost: BotCost = "quick",
    offered: bool = True,
    clocked: bool = False,
) -> None:
    """Register a bot; with ``game``, a bot written for that game only (it answers that game's tables).
    ``cost`` says how long it thinks (see :data:`BotCost`); ``offered=False`` keeps it off a server's
    list (:func:`offered`: the outside AI, which needs an optional package); ``clocked`` says that it
    searches against a clock it takes as its ``seconds`` param (:func:`with_clock`)."""
    if not offered:
        _UNOFFERED.add(name)
    if clocked:
        _CLOCKED.add((name, game))
    if game is None:
        _REGISTRY[name] = factory
    else:
        _GAME_REGISTRY[(name, game)] = factory
    _COSTS[(name, game)] = cost


def register_level(level: str, spec: str) -> None:
    """A level alias (``easy``, ``normal``, ``hard``…) for a bot spec; also usable as a bot name."""
    LEVELS[level] = spec


def names() -> list[str]:
    """Every bot name ``make`` accepts (levels included), in registration order."""
    out = dict.fromkeys(_REGISTRY)
    out.update(dict.fromkeys(name for name, _ in _GAME_REGISTRY))
    out.update(dict.fromkeys(LEVELS))
    return list(out)


def offered(game: Game) -> list[str]:
    """The bots a server offers for ``game``: every name and level that can play it, as registered,
    never with parameters (a spec such as ``ismcts:seconds=1e9`` is for the library and the command
    line, where whoever sets it pays for it)."""
    return [name for name in names() if name not in _UNOFFERED and _playable(name, game)]


def is_offered(level: str, game: Game) -> bool:
    """Whether ``level`` is exactly one of :func:`offered` for ``game``."""
    return ":" not in level and level in offered(game)


def is_offered_on_clock(level: str, game: Game) -> bool:
    """Whether ``level`` is one of :func:`offered` for ``game`` on a shorter clock, exactly as
    :func:`with_clock` writes it (the bot pool's quick search: its workers must play it too, not
    hand it back to the server process)."""
    base, sep, clock = level.rpartition(":seconds=")
    if not sep or not is_offered(base, game):
        return False
    try:
        seconds = float(clock)
    except ValueError:
        return False
    return 0.0 < seconds <= 1.0 and level == with_clock(base, game, seconds)


def _playable(name: str, game: Game) -> bool:
    base = parse_spec(LEVELS[name])[0] if name in LEVELS else name
    return (base, game.name) in _GAME_REGISTRY or base in _REGISTRY


def cost(spec: str, game: Game) -> BotCost:
    """How long the bot of ``spec`` (a name, level or spec) thinks in ``game``: see :data:`BotCost`."""
    name, _ = parse_spec(spec)
    return _COSTS.get((name, game.name)) or _COSTS.get((name, None)) or "quick"


def with_clock(spec: str, game: Game, seconds: float) -> str | None:
    """``spec`` searching for ``seconds`` instead of its own clock (the same bot, a shorter search),
    or None when its bot keeps no clock to shorten."""
    name, _ = parse_spec(spec)
    if (name, game.name) not in _CLOCKED and (name, None) not in _CLOCKED:
        return None
    return f"{spec}:seconds={seconds:.3g}"


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``"ismcts:iterations=200:seconds=0.5"`` into a name and params (numbers parsed).

    A level name is expanded to the spec it stands for; params given after it override the level's.
    """
    name, *parts = spec.strip().split(":")
    params: dict[str, Any] = {}
    for part in parts:
        key, sep, text = part.partition("=")
        if not sep or not key:
            raise ValueError(f"bad bot parameter {part!r} in {spec!r}: expected key=value")
        params[key] = _parse_value(text)
    if name in LEVELS:
        base, base_params = parse_spec(LEVELS[name])
        return base, {**base_params, **params}
    return name, params


def _parse_value(text: str) -> Any:
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def _factory(name: str, game: Game) -> BotFactory:
    factory = _GAME_REGISTRY.get((name, game.name)) or _REGISTRY.get(name)
    if factory is None:
        known = [n for n in names() if n in _REGISTRY or n in LEVELS or (n, game.name) in _GAME_REGISTRY]
        raise ValueError(f"unknown bot {name!r} for {game.name}; known bots: {', '.join(known)}")
    return factory


def check(spec: str, game: Game) -> None:
    """Raise ``ValueError`` unless ``spec`` names a bot that can play ``game``."""
    name, _ = parse_spec(spec)
    _factory(name, game)


def make(name: str, game: Game, seat: int, seed: int | None = None, **params: Any) -> Bot:
    """A bot by name, level or spec (``name:key=value…``); an unknown name raises ``ValueError``."""
    base, spec_params = parse_spec(name)
    factory = _factory(base, game)
    bot = factory(game, seat, seed, **{**spec_params, **params})
    bot.name = name
    return bot


class GameTooLong(RuntimeError):
    """A game that did not end within the decisions allowed (:func:`play_game`)."""


def play_game(state: GameState, players: Sequence[Bot], max_decisions: int = 100_000) -> int:
    """Play ``state`` to its end, asking the first awaited seat each time; returns decisions made.
    Raises :class:`GameTooLong` after ``max_decisions``."""
    decisions = 0
    while True:
        waiting = state.waiting_for()
        if not waiting:
            return decisions
        seat = waiting[0]
        action = players[seat].act(state.view(seat), state.legal_actions(seat))
        state.apply(seat, action)
        decisions += 1
        if decisions >= max_decisions:
            raise GameTooLong(f"game did not end within {max_decisions} decisions")


# The bots register themselves on import (after the interface above exists).
from conflictology.bots import registry as _registry  # noqa: E402

DEFAULT_LEVEL = _registry.DEFAULT_LEVEL
