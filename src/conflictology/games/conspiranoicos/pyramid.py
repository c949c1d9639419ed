"""What the Pyramid shows and what a finished table scores: the face-up slots, the symbol each slot
shows (T, the bottom row, and S, the top), the slots the special cards may be swapped with, and the
score of the rows. Read by the rules, the views and the worlds alike."""

from __future__ import annotations

from . import scoring
from .cards import ALL_SEEING_EYE
from .options import PYRAMID_SLOTS
from .state import COLLECT, State


def abduct_slots(st: State) -> list[int]:
    """Face-down Pyramid slots: Abduction may be swapped for any one of them."""
    return [k + 1 for k in range(len(st.pyramid)) if not slot_face_up(st, k)]


def gnome_slots(st: State) -> list[int]:
    """Face-up Pyramid slots: Gnome Revelation may be swapped with any one of them."""
    return [k + 1 for k in range(len(st.pyramid)) if slot_face_up(st, k)]


def slot_face_up(st: State, k: int) -> bool:
    """Is 0-based slot ``k`` face up now? Every card goes in face down; the chosen slots turn up
    at Sort Evidence, and a revealed Gnome Revelation lies face up."""
    if st.phase in COLLECT:
        return False
    return st.opts.face_up[k] or k == st.gnome_slot


def shown_symbol(st: State, k: int) -> str:
    """The symbol Pyramid slot ``k`` (0-based) shows: a revealed Gnome Revelation is G; a face-up
    card its single front symbol, else (none or two) its back; a face-down card its back."""
    deck = st.deck
    c = st.pyramid[k]
    if k == st.gnome_slot:
        return "G"
    if slot_face_up(st, k):
        front = deck.fronts[c]
        return front[0] if len(front) == 1 else deck.backs[c]
    return deck.backs[c]


def pyramid_symbols(st: State) -> tuple[list[str], str]:
    """T (the bottom row's three symbols, slots 1–3) and S (the top card's, slot 6)."""
    return [shown_symbol(st, k) for k in range(3)], shown_symbol(st, PYRAMID_SLOTS - 1)


def row_symbols(st: State, seat: int, s: str) -> list[tuple[str, ...]]:
    """What each card of a row may show: the Eye counts as S unless gained by a swap; other
    special cards show nothing."""
    deck = st.deck
    out: list[tuple[str, ...]] = []
    for c in st.rows[seat]:
        special = deck.specials[c]
        if special is None:
            out.append(deck.fronts[c])
        elif special == ALL_SEEING_EYE and c not in st.gained:
            out.append((s,))
        else:
            out.append(())
    return out


def compute_score(st: State) -> scoring.Score:
    t, s = pyramid_symbols(st)
    deck = st.deck
    eye = deck.eye
    eye_holder = next((p for p in (0, 1) if eye >= 0 and eye in st.rows[p]), -1)
    return scoring.score(
        rows=[[deck.ids[c] for c in st.rows[p]] for p in (0, 1)],
        values=[[deck.values[c] for c in st.rows[p]] for p in (0, 1)],
        syms=[row_symbols(st, p, s) for p in (0, 1)],
        t=t,
        s=s,
        final_winner=st.final_winner,
        eye_holder=eye_holder,
        any_order=st.opts.sequence_any_order,
        ties_score_both=st.opts.ties_score_both,
    )
