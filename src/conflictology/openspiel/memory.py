"""What one seat has seen so far, as text: the information state OpenSpiel asks for.

The engine's ``view(seat)`` is what a seat may know *now*; it does not promise to keep what the seat
saw before (the cards a Reporter drew and gave back, a card a Police player was shown before the
hand changed). OpenSpiel's information state is perfect recall: everything the seat observed, in
order, and its own actions. So each seat keeps a trace, written step by step from its views alone:
its own action, the log entries it was shown, and the fields of its view that changed. A trace reads
only the views a seat was given, so nothing hidden can leak into it.

Writing the traces costs a view per seat per move, which a search's random rollouts never read. So
:class:`Traces` writes them only when asked: it keeps a copy of the engine state where the traces
stop and the moves played since, and replays them (the engine is deterministic: the copy carries its
generator) the first time a trace is read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from conflictology import games
from conflictology.engine import GameState, View
from conflictology.openspiel.chance import apply_scripted

Flat = dict[str, str]


def value_text(value: Any) -> str:
    """A scalar or a list of scalars as compact text (strings bare, everything else JSON)."""
    if isinstance(value, str):
        return value
    return msgspec.json.encode(value, order="sorted").decode()


def flatten(doc: Any, prefix: str = "", out: Flat | None = None) -> Flat:
    """Paths (``players.1.money``) to compact values. Lists of dicts are walked by index; a list of
    scalars stays one value (``awaiting=[1,2]``), which reads better and changes as one thing. Keys
    are taken in sorted order: the text must not change when a view is built in another order."""
    out = {} if out is None else out
    if isinstance(doc, dict):
        for key in sorted(doc):
            flatten(doc[key], f"{prefix}{key}.", out)
    elif isinstance(doc, list) and any(isinstance(v, dict | list) for v in doc):
        for i, value in enumerate(doc):
            flatten(value, f"{prefix}{i}.", out)
        if not doc:
            out[prefix[:-1]] = "[]"
    else:
        out[prefix[:-1]] = value_text(doc)
    return out


def entry_text(entry: dict[str, Any]) -> str:
    """A log entry as its type and structured fields; its English ``text`` restates the fields."""
    fields = " ".join(f"{k}={value_text(entry[k])}" for k in sorted(entry) if k not in ("type", "text"))
    return f"{entry.get('type')} {fields}".rstrip()


def split_view(view: View, static: tuple[str, ...] = ()) -> tuple[Flat, list[dict[str, Any]]]:
    """The view without its log and its ``static`` fields, flattened, and the log (the engine's logs
    only ever grow)."""
    rest = {k: v for k, v in view.items() if k != "log" and k not in static}
    log = view.get("log")
    return flatten(rest), list(log) if isinstance(log, list) else []


class SeatMemory:
    """One seat's trace. Copied (``clone``) by copying three small containers: strings are shared."""

    __slots__ = ("flat", "last", "lines", "log_len", "static")

    def __init__(self, view: View, static: tuple[str, ...] = (), first: str = "start") -> None:
        self.static = static
        flat, log = split_view(view, static)
        self.flat: Flat = flat
        self.log_len = len(log)
        self.lines: list[str] = [first]
        self.lines += [f"> {entry_text(e)}" for e in log]
        self.lines.append("= " + " ".join(f"{k}={v}" for k, v in flat.items()))
        self.last: list[str] = self.lines[1:]

    def record(self, view: View, own_action: str | None) -> None:
        """One step of the game as this seat saw it."""
        flat, log = split_view(view, self.static)
        step: list[str] = []
        if own_action is not None:
            step.append(f"you {own_action}")
        if len(log) < self.log_len:
            raise ValueError(f"the view's log shrank from {self.log_len} to {len(log)} entries")
        step += [f"> {entry_text(e)}" for e in log[self.log_len :]]
        changed = [f"{k}={v}" for k, v in flat.items() if self.flat.get(k) != v]
        changed += [f"{k}-" for k in self.flat if k not in flat]
        if changed:
            step.append("= " + " ".join(changed))
        self.flat, self.log_len, self.last = flat, len(log), step
        self.lines += step

    def information_state(self) -> str:
        return "\n".join(self.lines)

    def __deepcopy__(self, memo: dict[int, Any]) -> SeatMemory:
        copy = SeatMemory.__new__(SeatMemory)
        copy.flat, copy.log_len, copy.static = dict(self.flat), self.log_len, self.static
        copy.lines, copy.last = list(self.lines), list(self.last)
        return copy

    def __getstate__(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}

    def __setstate__(self, doc: dict[str, Any]) -> None:
        for k in self.__slots__:
            setattr(self, k, doc[k])


Move = tuple[tuple[int, int], ...]  # one move: (seat, action index) pairs, in the order applied
# A move and, for a move whose random outcome chance chose (chance.py), the script that makes it.
Played = tuple[Move, tuple[int, ...] | None]


class Traces:
    """Every seat's trace, written lazily (see the module docstring)."""

    __slots__ = ("base", "pending", "seats", "static")

    def __init__(self, state: GameState, static: tuple[str, ...] = ()) -> None:
        self.base: GameState | None = state.clone()  # where the traces stop; None: they are current
        self.pending: list[Played] = []
        self.seats: list[SeatMemory] | None = None
        self.static = static

    @classmethod
    def of(cls, seats: list[SeatMemory]) -> Traces:
        out = cls.__new__(cls)
        out.base, out.pending, out.seats = None, [], seats
        out.static = seats[0].static if seats else ()
        return out

    def played(self, before: GameState, move: Move, script: tuple[int, ...] | None = None) -> None:
        """Note a move; ``before`` is the engine state it is about to be applied to (with ``script``,
        the outcome chance chose for it: chance.py)."""
        if self.base is None:
            self.base = before.clone()
        self.pending.append((move, script))

    def current(self, action_text: Callable[[int], str]) -> list[SeatMemory]:
        state = self.base
        if state is None:
            assert self.seats is not None
            return self.seats
        seats = self.seats
        if seats is None:
            seats = [SeatMemory(state.view(p), self.static) for p in range(state.num_players)]
        for move, script in self.pending:
            for seat, index in move:
                if script is None:
                    state.apply_index(seat, index)
                else:  # a move with a random outcome is one seat's
                    apply_scripted(state, seat, index, script)
            own = dict(move)
            for p, memory in enumerate(seats):
                memory.record(state.view(p), action_text(own[p]) if p in own else None)
        self.base, self.pending, self.seats = None, [], seats
        return seats

    def __deepcopy__(self, memo: dict[int, Any]) -> Traces:
        out = Traces.__new__(Traces)
        out.base = None if self.base is None else self.base.clone()
        out.pending = list(self.pending)
        out.seats = None if self.seats is None else [s.__deepcopy__(memo) for s in self.seats]
        out.static = self.static
        return out

    def __reduce__(self) -> tuple[Any, ...]:
        base = None if self.base is None else (self.base.game.name, self.base.to_json())
        return (_restore_traces, (base, self.pending, self.seats, self.static))


def _restore_traces(
    base: tuple[str, str] | None,
    pending: list[Played],
    seats: list[SeatMemory] | None,
    static: tuple[str, ...],
) -> Traces:
    out = Traces.__new__(Traces)
    out.base = None if base is None else games.get(base[0]).from_json(base[1])
    out.pending, out.seats, out.static = list(pending), seats, static
    return out
