"""The game's log: entries of structured fields and an English ``text``, some private to a seat."""

from __future__ import annotations

from typing import Any

from .state import State


def seat_name(seat: int) -> str:
    return f"Seat {seat}"


def record(st: State, entry: dict[str, Any], to: int | None = None) -> None:
    if to is not None:
        entry["private"] = to  # a private entry, shown only to that seat
    st.log.append(entry)
