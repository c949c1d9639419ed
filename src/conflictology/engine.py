"""The engine contract every game implements and every consumer (server, bots, CLI, RL) relies on.

The contract is fixed by docs/contract.md: a :class:`Game` describes a game (players,
options, its integer action table) and makes :class:`GameState` objects, which are explicit, mutable,
JSON-serialisable states with ``waiting_for``/``legal_actions``/``apply``/``view``.

Two extensions beyond the contract serve bot writers:

* ``Game.action_table``: a fixed integer table of every action the game can ever produce
  (action ⇄ index), for search bots and reinforcement learning.
* ``Game.determinize(view, rng)``: a full state drawn at random among those consistent with one
  seat's view. A bot that decides from a view alone (even over the network) can search with it, and
  the conformance suite checks it against ``view`` (what the seat sees must come back unchanged).
"""

from __future__ import annotations

import functools
import json
import os
import struct
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, MutableSequence, Sequence
from typing import Any, ClassVar, TypeVar

import msgspec

Action = dict[str, Any]
View = dict[str, Any]

T = TypeVar("T")

_MASK64 = (1 << 64) - 1
# SplitMix64's increment and its finalizer's two multipliers.
_GAMMA = 0x9E3779B97F4A7C15
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB


class IllegalAction(ValueError):
    """An action that is malformed or not legal now; the state it was applied to is unchanged."""


class Rng:
    """A small seeded generator (SplitMix64) whose whole state is one integer.

    Games use it instead of :mod:`random` so that ``to_json`` carries the generator in a few bytes
    and ``clone`` copies it for free; the same seed always deals the same game on every platform.
    """

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK64

    @staticmethod
    def fresh_seed() -> int:
        return int.from_bytes(os.urandom(8), "little")

    def next64(self) -> int:
        self.state = z = (self.state + _GAMMA) & _MASK64
        z = ((z ^ (z >> 30)) * _MIX1) & _MASK64
        z = ((z ^ (z >> 27)) * _MIX2) & _MASK64
        return z ^ (z >> 31)

    def randrange(self, n: int) -> int:
        """An integer in ``[0, n)``; the modulo bias is below 2**-50 for any n a game uses."""
        if n <= 0:
            raise ValueError("randrange needs n > 0")
        return self.next64() % n

    def random(self) -> float:
        return (self.next64() >> 11) * (1.0 / (1 << 53))

    def choice(self, items: Sequence[T]) -> T:
        return items[self.randrange(len(items))]

    def shuffle(self, items: MutableSequence[Any]) -> None:
        """Fisher-Yates: for each i from the end down to 1, swap item i with item ``randrange(i + 1)``,
        the draws ``next64`` would make one after another (tests/engine/test_rng.py checks it).

        A game shuffles its deck whenever a card goes back, and in pure Python each draw's dozen
        64-bit operations cost more than the swap: the draws are made all at once instead, each in
        its own 128-bit lane of one big integer (``_lanes``). A lane's value stays below 2**64 before
        each product and its product below 2**128, so no lane spills into the next; a mask clears
        what a right shift brings down from the lane above. ``to_bytes`` and a ``struct`` then read
        the lanes out in two C calls.
        """
        count = len(items) - 1
        if type(self) is not Rng:
            # A generator that answers randrange its own way (openspiel's scripted chance) is asked
            # draw by draw (a subclass's randrange is not ours: the test is by type, one comparison).
            for i in range(count, 0, -1):
                j = self.randrange(i + 1)
                items[i], items[j] = items[j], items[i]
            return
        if count <= 0:
            return
        # A shuffle costs more in its fixed steps than in its draws (the deck of six seats shuffles
        # seven cards): the lanes are read from a list, not a cached call.
        ones, steps, mask, lanes = _LANES[count] if count < _LANES_MADE else _lanes(count)
        state = self.state
        # Lane m holds the state after m + 1 draws: every lane is the current state plus its steps.
        x = (state * ones + steps) & mask
        z = ((x ^ (x >> 30)) & mask) * _MIX1 & mask
        z = ((z ^ (z >> 27)) & mask) * _MIX2 & mask
        # No mask after the last step: what the shift brings down from the lane above lands in the
        # lane's high half, which the struct skips.
        z ^= z >> 31
        i = count + 1  # draw m (i = count + 1 - m) swaps item i - 1 with item draw % i
        for draw in lanes.unpack(z.to_bytes(16 * count, "little")):
            j = draw % i
            i -= 1
            items[i], items[j] = items[j], items[i]
        self.state = (state + _GAMMA * count) & _MASK64

    def copy(self) -> Rng:
        return Rng(self.state)


@functools.lru_cache(maxsize=64)  # one entry per deck size shuffled: a handful
def _lanes(count: int) -> tuple[int, int, int, struct.Struct]:
    """For ``count`` draws at once (``Rng.shuffle``): a 1 in each 128-bit lane, lane m's increment
    (m + 1 steps of SplitMix64), a 64-bit mask in each lane, and the reader of the lanes' low halves."""
    ones = sum(1 << (128 * m) for m in range(count))
    steps = sum((_GAMMA * (m + 1)) << (128 * m) for m in range(count))
    return ones, steps, ones * _MASK64, struct.Struct("<" + "Q8x" * count)


# The lanes of every shuffle a game of up to ten seats makes (its deck, 30 cards at most, and less),
# made once at import.
_LANES_MADE = 40
_LANES = [_lanes(count) if count else (0, 0, 0, struct.Struct("")) for count in range(_LANES_MADE)]


def action_key(action: Mapping[str, Any]) -> str:
    """A canonical text for an action: equal actions give equal keys."""
    return json.dumps(action, sort_keys=True, separators=(",", ":"))


def json_text(doc: Any) -> str:
    """Compact JSON text of plain data, for ``GameState.to_json``: JSON equivalent to what
    ``json.dumps`` with compact separators gives (non-ASCII kept as is rather than escaped; floats
    may be spelt differently), several times faster. A server serialises the state on
    every move, so this is on every move's path."""
    return msgspec.json.encode(doc).decode()


class ActionTable:
    """A fixed numbering of every action a game can produce, independent of the state.

    ``canonical`` maps an action to the form it is stored under (for example sorting the cards of a
    Capitol ``keep``, where order does not matter), so lookups accept any equivalent spelling.
    """

    def __init__(
        self,
        actions: Iterable[Action],
        canonical: Callable[[Action], Action] | None = None,
    ) -> None:
        self._canonical = canonical or (lambda a: a)
        self.actions: tuple[Action, ...] = tuple(self._canonical(dict(a)) for a in actions)
        self._index: dict[str, int] = {}
        for i, a in enumerate(self.actions):
            key = action_key(a)
            if key in self._index:
                raise ValueError(f"action listed twice in the table: {key}")
            self._index[key] = i
        # Actions already looked up, keyed by their fields with each value's type (so True is never
        # taken for 1): a search looks the same few actions up hundreds of thousands of times, and
        # the canonical JSON text costs more than the rest of the lookup. Only actions of the table
        # are remembered (a handful of spellings each), so no input can grow it without bound.
        self._seen: dict[tuple[tuple[str, type, Any], ...], int] = {}

    @property
    def size(self) -> int:
        return len(self.actions)

    def __len__(self) -> int:
        return len(self.actions)

    def index(self, action: Mapping[str, Any]) -> int:
        """The integer of an action; raises :class:`IllegalAction` for one the game never produces."""
        fields: tuple[tuple[str, type, Any], ...] | None
        try:
            fields = tuple((k, type(v), v) for k, v in action.items())
            seen = self._seen.get(fields)
        except (TypeError, AttributeError):
            fields = seen = None  # a value that is not hashable (a list of cards), or not a mapping
        if seen is not None:
            return seen
        try:
            index = self._index[action_key(self._canonical(dict(action)))]
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise IllegalAction(f"not an action of this game: {action!r}") from exc
        if fields is not None:
            self._seen[fields] = index
        return index

    def action(self, index: int) -> Action:
        if not 0 <= index < len(self.actions):
            raise IllegalAction(f"action index out of range: {index} (table has {len(self.actions)})")
        return dict(self.actions[index])


class GameState(ABC):
    """One game in progress. Mutable; ``clone`` gives an independent copy."""

    game: ClassVar[Game]

    @property
    @abstractmethod
    def num_players(self) -> int: ...

    @abstractmethod
    def waiting_for(self) -> list[int]:
        """Seats whose decision is awaited now, in seat order; ``[]`` iff the game is over."""

    @abstractmethod
    def legal_actions(self, seat: int) -> list[Action]:
        """Every legal action for ``seat`` now (JSON-ready, each once); ``[]`` if not awaited."""

    @abstractmethod
    def apply(self, seat: int, action: Mapping[str, Any]) -> None:
        """Validate and apply; raise :class:`IllegalAction` and change nothing if it is not legal."""

    @abstractmethod
    def clone(self: _S) -> _S: ...

    @abstractmethod
    def is_over(self) -> bool: ...

    @abstractmethod
    def winners(self) -> list[int]: ...

    @abstractmethod
    def view(self, seat: int | None) -> View:
        """What ``seat`` may know (``None``: a spectator), JSON-ready."""

    def view_since(self, seat: int | None, start: int) -> tuple[View, int]:
        """``view(seat)`` whose ``log`` holds only the entries from ``start`` on, and how many entries
        the whole log holds (``-1``: a view without a ``log`` list, returned whole). A server that
        sends a connection only the log it lacks (protocol v2) asks for that tail, so a change
        costs the same at the thousandth move as at the first; a game whose log grows long
        overrides this to render only the tail. ``start`` beyond the log gives an empty tail."""
        view = self.view(seat)
        log = view.get("log")
        if not isinstance(log, list):
            return view, -1
        if start > 0:
            view["log"] = log[start:]
        return view, len(log)

    @abstractmethod
    def to_json(self) -> str: ...

    def timeout_action(self, seat: int) -> Action:
        """What a seat does when its decision clock runs out (the server's timers use it).

        Games override this with their rulings (Capitol ruling 19); the fallback is the first legal
        action.
        """
        legal = self.legal_actions(seat)
        if not legal:
            raise IllegalAction(f"seat {seat} is not awaited")
        return legal[0]

    def decision_kind(self, seat: int) -> str:
        """Which clock the seat's decision runs on (Capitol ruling 19 names three): ``"turn"`` (its
        own move), ``"response"`` (a quick answer to someone else's move: challenge, block or pass)
        or ``"choice"`` (anything else: a card to lose, keep, show, place...). Servers size the
        room's timer by it; the fallback is ``"choice"``."""
        return "choice"

    # Integer-action helpers for search bots and RL users.
    def legal_action_indices(self, seat: int) -> list[int]:
        table = self.game.action_table
        return [table.index(a) for a in self.legal_actions(seat)]

    def apply_index(self, seat: int, index: int) -> None:
        self.apply(seat, self.game.action_table.action(index))


_S = TypeVar("_S", bound=GameState)


class Game(ABC):
    """A game's fixed description and factory of states."""

    name: ClassVar[str]
    title: ClassVar[str]
    min_players: ClassVar[int]
    max_players: ClassVar[int]

    @property
    @abstractmethod
    def action_table(self) -> ActionTable: ...

    @abstractmethod
    def default_options(self) -> dict[str, Any]:
        """Every rule option with its default value."""

    def option_choices(self) -> dict[str, list[Any]]:
        """A host's form's choices: for each option whose value is a set of names, the names it may
        hold; for a whole-number option the game lists only when set (absent from
        ``default_options``), the numbers a form offers besides leaving it alone."""
        return {}

    @abstractmethod
    def new_game(
        self,
        players: int,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
        deck: Sequence[str] | None = None,
    ) -> GameState: ...

    @abstractmethod
    def from_json(self, text: str) -> GameState: ...

    @abstractmethod
    def determinize(self, view: View, rng: Rng) -> GameState:
        """A full state drawn among those consistent with ``view`` (a seat's own view).

        The result's ``view(view["you"])`` equals ``view`` and its legal actions for that seat are the
        real ones; the cards the seat cannot see are sampled from what is still unaccounted for.
        """

    def open_view(self, state: GameState) -> View:
        """Everything about ``state``, every card face up: what a finished game's replay shows at
        each step (never sent while a game goes on). By default the spectator's view; a game with
        hidden cards overrides it."""
        return state.view(None)

    def replay_step(self, state: GameState) -> tuple[View, int]:
        """One step of a replay: :meth:`open_view` without its ``log`` (a replay sends the log once,
        not at every step), and how many log entries there are. A game whose log is long overrides it
        so that a step costs the same at the end of a game as at its start."""
        view = dict(self.open_view(state))
        return view, len(view.pop("log", []))

    def file_options(self) -> dict[str, list[str]]:
        """The rule options whose value names a file, each with the bundled names a server accepts
        for it (a Conspiranoicos ``deck_file``: its bundled decks). The engine itself opens any path
        such an option gives (the command line and the library may load their own files); a server
        must refuse everything but the names listed here, so a remote player never makes it read one
        of its files. None by default: a game without file options."""
        return {}

    def recap(
        self,
        initial: GameState,
        actions: Iterable[tuple[int, Action]],
        chance: Callable[[Any], list[float]] | None = None,
    ) -> dict[str, Any]:
        """The story of a finished game for its recap cards, read from its deal (``initial``, played
        through ``actions``, (seat, action) pairs, to the end: it is changed): the hands revealed,
        the decisive moment and the game's own figures. ``chance`` judges each seat's chance of
        winning a position where the game needs one (a bot's value). Only ever asked of a finished
        game. None by default: ``{}``."""
        for seat, action in actions:
            initial.apply(seat, action)
        return {}

    def figures(self, state: GameState) -> list[dict[str, int]]:
        """Per seat, the figures a standing table adds up for this game once it is over (bluffs
        caught, points…): whole numbers under names in the game's own words. None by default."""
        return [{} for _ in range(state.num_players)]

    def check_players(self, players: int) -> None:
        if not isinstance(players, int) or isinstance(players, bool):
            raise ValueError(f"players must be an integer, got {players!r}")
        if not self.min_players <= players <= self.max_players:
            raise ValueError(
                f"{self.title} takes {self.min_players}–{self.max_players} players, got {players}"
            )


def check_options(
    game_name: str, given: Mapping[str, Any] | None, defaults: Mapping[str, Any]
) -> dict[str, Any]:
    """Merge options over defaults, refusing unknown keys (each game then checks the values)."""
    merged = dict(defaults)
    if given is None:
        return merged
    if not isinstance(given, Mapping):
        raise ValueError(f"options must be an object, got {type(given).__name__}")
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        raise ValueError(
            f"unknown option(s) for {game_name}: {', '.join(unknown)}; known: {', '.join(sorted(defaults))}"
        )
    merged.update(given)
    return merged
