"""A finished Conspiranoicos game seen whole: every card face up at any step (hands, hidden plays,
rows as they are built, the Pyramid's face-down cards, the piles and the Final Challenge), and the
figures a standing table adds up. Never sent while a game goes on."""

from __future__ import annotations

from conflictology.engine import View

from .state import COLLECT, State
from .views import build_view


def open_view(st: State) -> View:
    view = build_view(st, None)
    ids = st.deck.ids
    for p, player in enumerate(view["players"]):
        player["hand"] = [ids[c] for c in st.hands[p]]
        player["row"] = [ids[c] for c in st.rows[p]]
        player["draw_cards"] = [ids[c] for c in st.draws[p]]
    view["table"]["plays"] = [ids[c] if c >= 0 and st.phase in COLLECT else None for c in st.plays]
    for slot in view["pyramid"]:
        if slot is not None:
            slot["card"] = slot["seen"]
    view["challenge_deck_cards"] = [ids[c] for c in st.cdeck]
    view["final_challenge_card"] = ids[st.final]
    # Both players' private log lines too (opening hands, draws): the whole game may be published.
    view["log"] = [dict(e) for e in st.log]
    return view


def figures(st: State) -> list[dict[str, int]]:
    """Per seat: ``points`` scored and ``final_challenges`` won (0 or 1)."""
    totals = list(st.result.totals) if st.result is not None else [0, 0]
    return [{"points": totals[p], "final_challenges": int(st.final_winner == p)} for p in (0, 1)]
