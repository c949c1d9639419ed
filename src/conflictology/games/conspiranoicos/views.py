"""What each seat may know: a player's view and a spectator's view (``worlds.py`` is the inverse).

Information (rulebook "Evidence Cards", rulings "Setup and information"):
- the back of every card in a hand or in play is public; fronts in hand are private;
- the three cards of a round are revealed face up before they move, so zones are public and every
  card that enters the Pyramid face down was seen by both players: a Pyramid slot's ``card`` is
  null while it lies face down (what the table shows) and ``seen`` names it (what both remember);
- a submitted play shows only its back until both are in; a row being built shows only its length;
- in Sort Evidence every card is public: each player's ``evidence`` (hand and row, sorted by deck
  order, so it does not change as cards are placed) is listed, while which of it is in the row, and
  in what order, stays hidden until both rows are complete: during row building another player's
  ``hand`` is an int (cards still to place), like their ``row`` (cards placed);
- the piles (draw decks, challenge deck, the set-aside Final Challenge) show only their size.
A view is a function of what its viewer may know, so ``worlds.determinize`` can rebuild a full
state from it, sampling only the unseen cards (respecting the backs shown) and the generator.
"""

from __future__ import annotations

from typing import Any

from conflictology.engine import View

from .options import PYRAMID_SLOTS
from .pyramid import abduct_slots, gnome_slots, pyramid_symbols, shown_symbol, slot_face_up
from .rules import waiting_for
from .state import ABDUCT, BUILD, COLLECT, GNOME, KEEP, OVER, PLAY, SEND, TO_PYRAMID, State


def build_view(st: State, seat: int | None) -> View:
    deck = st.deck
    ids, backs = deck.ids, deck.backs
    phase = st.phase
    over = phase is OVER
    sorting = phase not in COLLECT
    # While the rows are built another's hand is only a count: its backs would shrink as cards are
    # placed and, beside the public evidence, tell which card went down (rulings "Sort Evidence").
    building = phase is BUILD

    players: list[dict[str, Any]] = []
    for p in (0, 1):
        mine = seat == p
        hand = st.hands[p]
        row = st.rows[p]
        fronts = [ids[c] for c in hand] if mine else None
        shown = fronts if fronts is not None else len(hand) if building else [backs[c] for c in hand]
        players.append(
            {
                "seat": p,
                "hand": shown,
                "zone": [ids[c] for c in st.zones[p]],
                "draw": len(st.draws[p]),
                "row": [ids[c] for c in row] if mine or over else len(row),
                "evidence": [ids[c] for c in sorted(hand + row)] if sorting else None,
            }
        )

    revealed = phase in (SEND, KEEP)
    plays: list[str | None] = []
    for p in (0, 1):
        c = st.plays[p]
        if c < 0 or phase not in COLLECT:
            plays.append(None)
        else:
            plays.append(ids[c] if revealed or seat == p else backs[c])
    table = {
        "plays": plays,
        "revealed": revealed,
        "winner": st.winner if st.winner >= 0 else None,
        "decided_by": st.decided or None,
        "sent_to": st.sent_to or None,
        "remaining": [ids[c] for c in st.remaining],
        "moves": [
            {
                "card": ids[c],
                "to": TO_PYRAMID if dest < 0 else "zone",
                "zone": dest if dest >= 0 else None,
                "by": by if by >= 0 else None,
            }
            for c, dest, by in st.moves
        ],
    }

    looking = phase is ABDUCT and seat == st.holder  # Abduction: "reveal the three cards" to its holder
    pyramid: list[dict[str, Any] | None] = []
    for k in range(PYRAMID_SLOTS):
        if k >= len(st.pyramid):
            pyramid.append(None)
            continue
        c = st.pyramid[k]
        up = slot_face_up(st, k)
        pyramid.append(
            {
                "slot": k + 1,
                "back": backs[c],
                "face_up": up,
                "card": ids[c] if up or looking else None,
                "seen": ids[c],
                "shows": shown_symbol(st, k) if sorting else None,
            }
        )

    pending: dict[str, Any] | None
    awaiting = waiting_for(st)
    if phase is PLAY:
        pending = {
            "phase": PLAY.value,
            "awaiting": awaiting,
            "submitted": [c >= 0 for c in st.plays],
            "final_challenge": st.round == 6,
        }
    elif phase in (SEND, KEEP):
        pending = {
            "phase": phase.value,
            "awaiting": awaiting,
            "winner": st.winner,
            "loser": 1 - st.winner,
            "cards": [ids[c] for c in st.remaining],
        }
    elif phase in (ABDUCT, GNOME):
        pending = {
            "phase": phase.value,
            "awaiting": awaiting,
            "holder": st.holder,
            "slots": abduct_slots(st) if phase is ABDUCT else gnome_slots(st),
        }
    elif phase is BUILD:
        pending = {"phase": BUILD.value, "awaiting": awaiting, "placed": [len(st.rows[0]), len(st.rows[1])]}
    else:
        pending = None

    t_s = pyramid_symbols(st) if sorting else None
    view: View = {
        "game": "conspiranoicos",
        "you": seat,
        "phase": phase.value,
        "round": st.round,
        "challenge": ids[st.challenge] if st.challenge >= 0 else None,
        "challenge_deck": len(st.cdeck),
        "final_challenge": ids[st.final] if st.final_revealed else None,
        "final_winner": st.final_winner if st.final_winner >= 0 else None,
        "players": players,
        "table": table,
        "pyramid": pyramid,
        "pyramid_symbols": {"T": t_s[0], "S": t_s[1]} if t_s is not None else None,
        "swaps": [
            {"special": kind, "seat": s, "slot": slot, "card": ids[taken]}
            for kind, s, slot, _given, taken in st.swaps
        ],
        "gained": [ids[c] for c in st.gained],
        "pending": pending,
        "options": st.opts.to_dict(),
        "deck": deck.name,
        "cards": deck.catalogue(),
        "log": [dict(e) for e in st.log if e.get("private", seat) == seat],
    }
    if over and st.result is not None:
        view["scores"] = list(st.result.totals)
        view["score_detail"] = st.result.detail()
        view["winners"] = list(st.result.winners)
    return view
