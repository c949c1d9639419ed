"""Sort Evidence (rulebook "Sort Evidence Phase"): the zones go back to hand and the chosen Pyramid
slots turn face up; the Abduction holder, then the Gnome Revelation holder, may swap their special
card with a Pyramid card; both players lay out their rows, and the table is scored.

Called by ``rules.apply`` once an action is checked in form (its type and fields) and seat."""

from __future__ import annotations

from typing import Any

from conflictology.engine import IllegalAction

from .log import record, seat_name
from .pyramid import abduct_slots, compute_score, gnome_slots
from .state import ABDUCT, BUILD, GNOME, OVER, Phase, State


def start(st: State) -> None:
    """Rulebook "Sort Evidence Phase": the zones go back to hand; rulings: the face-up slots turn."""
    st.challenge = -1
    st.clear_table()
    for seat in (0, 1):
        st.hands[seat] = st.zones[seat]
        st.zones[seat] = []
    face_up = [k + 1 for k in range(len(st.pyramid)) if st.opts.face_up[k]]
    ids = st.deck.ids
    record(
        st,
        {
            "type": "sort_evidence",
            "face_up": face_up,
            "cards": [ids[st.pyramid[k - 1]] for k in face_up],
            "text": "Sort Evidence: each player takes the cards of their zone into hand; Pyramid "
            + (
                f"slot(s) {', '.join(map(str, face_up))} turn face up ("
                + ", ".join(ids[st.pyramid[k - 1]] for k in face_up)
                + ")."
                if face_up
                else "cards all stay face down."
            ),
        },
    )
    st.phase = BUILD  # Collect Evidence is over: the chosen slots are face up from now on
    _next_special(st, ABDUCT)


def _holding(st: State, card: int) -> int:
    if card < 0 or card in st.gained:
        return -1  # the warning clause: a special card gained by a swap has no effect
    for seat in (0, 1):
        if card in st.hands[seat]:
            return seat
    return -1


def _next_special(st: State, stage: Phase) -> None:
    """Rulebook: the Abduction holder may act, then the Gnome Revelation holder; then the rows."""
    if stage is ABDUCT:
        holder = _holding(st, st.deck.abduction)
        if holder >= 0 and abduct_slots(st):
            st.phase, st.holder = ABDUCT, holder
            return
    holder = _holding(st, st.deck.gnome) if stage in (ABDUCT, GNOME) else -1
    if holder >= 0 and gnome_slots(st):
        st.phase, st.holder = GNOME, holder
        return
    st.phase, st.holder = BUILD, -1


def pass_special(st: State, seat: int) -> None:
    phase = st.phase
    title = "Abduction" if phase is ABDUCT else "Gnome Revelation"
    record(
        st,
        {
            "type": "pass",
            "seat": seat,
            "special": "abduction" if phase is ABDUCT else "gnome_revelation",
            "text": f"{seat_name(seat)} does not use {title}.",
        },
    )
    _next_special(st, GNOME if phase is ABDUCT else BUILD)


def swap(st: State, seat: int, slot: Any) -> None:
    phase = st.phase
    allowed = abduct_slots(st) if phase is ABDUCT else gnome_slots(st)
    if not isinstance(slot, int) or isinstance(slot, bool) or slot not in allowed:
        kind = "face-down" if phase is ABDUCT else "face-up"
        raise IllegalAction(f"'slot' must be a {kind} Pyramid slot ({allowed}), got {slot!r}")
    deck = st.deck
    special = deck.abduction if phase is ABDUCT else deck.gnome
    k = slot - 1
    taken = st.pyramid[k]
    st.pyramid[k] = special
    hand = st.hands[seat]
    hand.remove(special)
    hand.append(taken)
    st.gained.append(taken)
    kind = "abduction" if phase is ABDUCT else "gnome_revelation"
    st.swaps.append((kind, seat, slot, special, taken))
    ids = deck.ids
    if phase is ABDUCT:
        text = (
            f"{seat_name(seat)} uses Abduction: looks at the face-down Pyramid cards and swaps "
            f"Abduction for {ids[taken]} (slot {slot}), which goes back face down."
        )
    else:
        st.gnome_slot = k
        text = (
            f"{seat_name(seat)} reveals the Gnome Revelation: it takes the place of {ids[taken]} "
            f"in Pyramid slot {slot} and counts as a Gnome symbol there."
        )
    if deck.specials[taken] is not None:
        text += f" {ids[taken]} was gained by a swap: its effect may not be used."
    record(
        st,
        {
            "type": "abduct" if phase is ABDUCT else "reveal_gnome",
            "seat": seat,
            "slot": slot,
            "card": ids[taken],
            "text": text,
        },
    )
    _next_special(st, GNOME if phase is ABDUCT else BUILD)


def place(st: State, seat: int, c: int) -> None:
    hand = st.hands[seat]
    if c not in hand:
        raise IllegalAction(f"{seat_name(seat)} cannot place {st.deck.ids[c]}: not in their hand")
    hand.remove(c)
    row = st.rows[seat]
    row.append(c)
    record(
        st,
        {
            "type": "place",
            "seat": seat,
            "count": len(row),
            "text": f"{seat_name(seat)} places a card in their row ({len(row)}).",
        },
    )
    if not st.hands[0] and not st.hands[1]:
        _finish(st)


def _finish(st: State) -> None:
    st.phase = OVER
    st.holder = -1
    st.result = res = compute_score(st)
    ids = st.deck.ids
    rows = [[ids[c] for c in st.rows[s]] for s in (0, 1)]
    record(
        st,
        {
            "type": "rows",
            "rows": rows,
            "text": "Both rows are revealed: "
            + "; ".join(f"{seat_name(s)}: {' '.join(rows[s])}" for s in (0, 1))
            + ".",
        },
    )
    how = {
        "points": "on points",
        "final_challenge": "tied on points; the Final Challenge breaks the tie",
        "all_seeing_eye": "tied on points; the All-Seeing Eye breaks the tie",
        "shared": "tied on points with no tie-break: a shared victory",
    }[res.decided_by]
    record(
        st,
        {
            "type": "result",
            "scores": list(res.totals),
            "winners": list(res.winners),
            "decided_by": res.decided_by,
            "text": f"Scores: {seat_name(0)} {res.totals[0]}, {seat_name(1)} {res.totals[1]}. "
            f"{' and '.join(seat_name(s) for s in res.winners)} "
            f"{'win' if len(res.winners) > 1 else 'wins'} ({how}).",
        },
    )
