"""Observation encoders: one seat's view dict → a fixed-length vector of floats in ``[0, 1]``.

An encoder reads only the view the engine gives that seat (``state.view(seat)``), never the full
state, so an agent trained on it cannot learn from what its seat may not know. Each game registers
one encoder (``register_encoder``); its layout (named segments) is what docs/rl.md documents.

Seats are *relative* in every vector: block 0 is the observing seat, block 1 the next seat clockwise,
and so on, so one policy can play any seat.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from conflictology.engine import View


@dataclass(frozen=True)
class Segment:
    """A named slice of the observation vector."""

    name: str
    size: int
    doc: str
    start: int = 0

    @property
    def stop(self) -> int:
        return self.start + self.size


class Layout:
    """The named segments of a vector, in order; ``Writer`` fills them by name."""

    def __init__(self, segments: Iterable[tuple[str, int, str]]) -> None:
        out: list[Segment] = []
        start = 0
        for name, size, doc in segments:
            if size <= 0:
                raise ValueError(f"segment {name!r} must have a positive size, got {size}")
            out.append(Segment(name, size, doc, start))
            start += size
        self.segments: tuple[Segment, ...] = tuple(out)
        self.by_name: dict[str, Segment] = {s.name: s for s in out}
        if len(self.by_name) != len(out):
            raise ValueError("segment names must be unique")
        self.size = start

    def slice(self, name: str) -> slice:
        seg = self.by_name[name]
        return slice(seg.start, seg.stop)

    def markdown(self) -> str:
        """The layout as a Markdown table (docs/rl.md is written from it)."""
        lines = ["| offset | size | segment | meaning |", "|---:|---:|---|---|"]
        for s in self.segments:
            lines.append(f"| {s.start} | {s.size} | `{s.name}` | {s.doc} |")
        lines.append(f"| | **{self.size}** | | total |")
        return "\n".join(lines)


class Writer:
    """Fills a float32 vector segment by segment; every write is clipped to ``[0, 1]``."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.vector = np.zeros(layout.size, dtype=np.float32)

    def set(self, name: str, offset: int, value: float) -> None:
        seg = self.layout.by_name[name]
        if not 0 <= offset < seg.size:
            raise IndexError(f"offset {offset} outside segment {name!r} of size {seg.size}")
        self.vector[seg.start + offset] = min(1.0, max(0.0, float(value)))

    def add(self, name: str, offset: int, value: float) -> None:
        seg = self.layout.by_name[name]
        if not 0 <= offset < seg.size:
            raise IndexError(f"offset {offset} outside segment {name!r} of size {seg.size}")
        i = seg.start + offset
        self.vector[i] = min(1.0, max(0.0, float(self.vector[i]) + float(value)))

    def one_hot(self, name: str, index: int | None) -> None:
        """Sets one position of a segment (None sets nothing: "none of these")."""
        if index is not None:
            self.set(name, index, 1.0)

    def fill(self, name: str, values: Sequence[float]) -> None:
        seg = self.layout.by_name[name]
        if len(values) != seg.size:
            raise ValueError(f"segment {name!r} takes {seg.size} values, got {len(values)}")
        self.vector[seg.start : seg.stop] = np.clip(np.asarray(values, dtype=np.float32), 0.0, 1.0)


def relative(seat: int, you: int, players: int) -> int:
    """A seat's position counted clockwise from the viewer (0 is the viewer)."""
    return (seat - you) % players


class ObservationEncoder(ABC):
    """Turns one seat's view into a vector whose length depends only on the number of players."""

    game_name: str

    @abstractmethod
    def layout(self, players: int) -> Layout:
        """The segments of the vector for a table of ``players``."""

    @abstractmethod
    def encode(self, view: View, players: int) -> np.ndarray:
        """The vector for ``view`` (a seat's own view: ``view["you"]`` is that seat)."""

    def size(self, players: int) -> int:
        return self.layout(players).size


_ENCODERS: dict[str, ObservationEncoder] = {}
_BUILTIN = {"capitol": "conflictology.rl.capitol", "conspiranoicos": "conflictology.rl.conspiranoicos"}


def register_encoder(encoder: ObservationEncoder) -> None:
    _ENCODERS[encoder.game_name] = encoder


def encoder_for(game_name: str) -> ObservationEncoder:
    """The registered encoder of a game (the built-in games' encoders register on import)."""
    if game_name not in _ENCODERS and game_name in _BUILTIN:
        # The built-in encoders live beside this module and register themselves when imported.
        importlib.import_module(_BUILTIN[game_name])

    try:
        return _ENCODERS[game_name]
    except KeyError:
        raise ValueError(
            f"no observation encoder for game {game_name!r}; known: {', '.join(sorted(_ENCODERS))}"
        ) from None
