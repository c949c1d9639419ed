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

from typing import Any, NotRequired, Required, TypedDict, cast

from conflictology.engine import View

from .cards import CardData
from .options import PYRAMID_SLOTS, OptionValues
from .pyramid import abduct_slots, gnome_slots, pyramid_symbols, shown_symbol, slot_face_up
from .rules import waiting_for
from .state import ABDUCT, BUILD, COLLECT, GNOME, KEEP, OVER, PLAY, SEND, TO_PYRAMID, State


# The shape of a view, for readers that want it typed (bots, renderers): ``read_view`` gives it.
class PlayerView(TypedDict):
    seat: int
    hand: list[str] | int  # one's own: card ids; another's: backs, or a count while rows are built
    zone: list[str]
    draw: int  # cards left in the draw deck
    row: list[str] | int  # one's own (or every row once over): card ids; another's: a count
    evidence: list[str] | None  # Sort Evidence: hand and row, in deck order; else null


class MoveView(TypedDict):
    card: str
    to: str  # "pyramid" or "zone"
    zone: int | None
    by: int | None  # the seat that chose it; null for the last card or a random placement


class TableView(TypedDict):
    plays: list[str | None]  # a card id, a back while hidden, or null
    revealed: bool
    winner: int | None
    decided_by: str | None
    sent_to: str | None
    remaining: list[str]
    moves: list[MoveView]


class SlotView(TypedDict):
    slot: int
    back: str
    face_up: bool
    card: str | None  # null while face down (but to the Abduction holder deciding)
    seen: str
    shows: str | None  # the symbol it counts as, in Sort Evidence


class PendingView(TypedDict, total=False):
    phase: Required[str]
    awaiting: Required[list[int]]
    submitted: list[bool]  # play
    final_challenge: bool  # play
    winner: int  # send, keep
    loser: int  # send, keep
    cards: list[str]  # send, keep
    holder: int  # abduct, gnome
    slots: list[int]  # abduct, gnome
    placed: list[int]  # build


class SymbolsView(TypedDict):
    T: list[str]
    S: str


class SwapView(TypedDict):
    special: str
    seat: int
    slot: int
    card: str


class ConspiranoicosView(TypedDict):
    game: str
    you: int | None
    phase: str
    round: int
    challenge: str | None
    challenge_deck: int
    final_challenge: str | None
    final_winner: int | None
    players: list[PlayerView]
    table: TableView
    pyramid: list[SlotView | None]
    pyramid_symbols: SymbolsView | None
    swaps: list[SwapView]
    gained: list[str]
    pending: PendingView | None
    options: OptionValues
    deck: str
    cards: list[CardData]
    log: list[dict[str, Any]]
    scores: NotRequired[list[int]]
    score_detail: NotRequired[dict[str, Any]]
    winners: NotRequired[list[int]]


def read_view(view: View) -> ConspiranoicosView:
    """A Conspiranoicos view (a seat's or a spectator's, as ``view()`` gives it), typed; anything
    else raises ``ValueError``."""
    if view.get("game") != "conspiranoicos":
        raise ValueError(f"not a Conspiranoicos view: game={view.get('game')!r}")
    return cast(ConspiranoicosView, view)


def build_view(st: State, seat: int | None) -> View:
    deck = st.deck
    ids, backs = deck.ids, deck.backs
    phase = st.phase
    over = phase is OVER
    sorting = phase not in COLLECT
    # While the rows are built another's hand is only a count: its backs would shrink as cards are
    # placed and, beside the public evidence, tell which card went down (rulings "Sort Evidence").
    building = phase is BUILD

    players: list[PlayerView] = []
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
    table: TableView = {
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
    pyramid: list[SlotView | None] = []
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

    pending: PendingView | None
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
    view: ConspiranoicosView = {
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
    return cast(View, view)
