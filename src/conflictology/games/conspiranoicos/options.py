"""Rule options (a room's settings for the rules; docs/rules/conspiranoicos.md "Options")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from conflictology.engine import check_options

PYRAMID_SLOTS = 6

DEFAULT_OPTIONS: dict[str, Any] = {
    # null: the bundled default deck; else a bundled deck's name or a path to a JSON deck file.
    "deck_file": None,
    # Pyramid slots turned face up at the start of Sort Evidence (rulings "The Pyramid").
    "face_up_slots": [4, 5, 6],
    # Sequences in row order (false, the rulebook's "in sequence") or as a set of values (true).
    "sequence_any_order": False,
    # An equal head-to-head award ("the longest", "the most", "the majority") scores for both.
    "head_to_head_ties_score_both": False,
}


class OptionValues(TypedDict):
    """The options as saves and views carry them."""

    deck_file: str | None
    face_up_slots: list[int]
    sequence_any_order: bool
    head_to_head_ties_score_both: bool


class Options:
    """Checked, immutable rule options, shared by every clone of a state."""

    __slots__ = ("deck_file", "face_up", "face_up_slots", "sequence_any_order", "ties_score_both")

    def __init__(self, given: Mapping[str, Any] | None) -> None:
        merged = check_options("conspiranoicos", given, DEFAULT_OPTIONS)
        deck_file = merged["deck_file"]
        if deck_file is not None and (not isinstance(deck_file, str) or not deck_file):
            raise ValueError(f"option deck_file: null or a deck name or path, got {deck_file!r}")
        slots = merged["face_up_slots"]
        if not isinstance(slots, list | tuple) or not all(
            isinstance(s, int) and not isinstance(s, bool) and 1 <= s <= PYRAMID_SLOTS for s in slots
        ):
            raise ValueError(f"option face_up_slots: a list of Pyramid slots 1–6, got {slots!r}")
        if len(set(slots)) != len(slots):
            raise ValueError(f"option face_up_slots: a slot is listed twice in {slots!r}")
        for key in ("sequence_any_order", "head_to_head_ties_score_both"):
            if not isinstance(merged[key], bool):
                raise ValueError(f"option {key}: true or false, got {merged[key]!r}")
        self.deck_file: str | None = deck_file
        self.face_up_slots: tuple[int, ...] = tuple(sorted(slots))
        # Per 0-based slot index: is it turned face up at Sort Evidence?
        self.face_up: tuple[bool, ...] = tuple(k + 1 in slots for k in range(PYRAMID_SLOTS))
        self.sequence_any_order: bool = merged["sequence_any_order"]
        self.ties_score_both: bool = merged["head_to_head_ties_score_both"]

    @classmethod
    def cached(cls, given: Mapping[str, Any]) -> Options:
        """The same as ``Options(given)``, remembered: determinize rebuilds options on every call."""
        try:
            key = (
                tuple(sorted(given)),
                given.get("deck_file"),
                tuple(given.get("face_up_slots", ())),
                given.get("sequence_any_order"),
                given.get("head_to_head_ties_score_both"),
            )
            hit = _cache.get(key)
        except TypeError:  # an unhashable (so invalid) value: let the full check say what is wrong
            return cls(given)
        if hit is None:
            hit = _cache[key] = cls(given)
        return hit

    def to_dict(self) -> OptionValues:
        return {
            "deck_file": self.deck_file,
            "face_up_slots": list(self.face_up_slots),
            "sequence_any_order": self.sequence_any_order,
            "head_to_head_ties_score_both": self.ties_score_both,
        }


_cache: dict[tuple[Any, ...], Options] = {}
