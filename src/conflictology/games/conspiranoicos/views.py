"""What each seat may know: a player's view, a spectator's view, and the inverse, ``determinize``.

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
A view is a function of what its viewer may know, so :func:`determinize` can rebuild a full state
from it, sampling only the unseen cards (respecting the backs shown) and the generator.
"""

from __future__ import annotations

from typing import Any

from conflictology.engine import Rng, View

from .cards import Deck, deck_from_data
from .options import PYRAMID_SLOTS, Options
from .state import (
    ABDUCT,
    BUILD,
    COLLECT,
    GNOME,
    KEEP,
    OVER,
    PHASES,
    PLAY,
    SEND,
    TO_PYRAMID,
    ConspiranoicosState,
)


def build_view(st: ConspiranoicosState, seat: int | None) -> View:
    deck = st.deck
    ids, backs = deck.ids, deck.backs
    phase = st.phase
    over = phase == OVER
    sorting = phase not in COLLECT
    # While the rows are built another's hand is only a count: its backs would shrink as cards are
    # placed and, beside the public evidence, tell which card went down (rulings "Sort Evidence").
    building = phase == BUILD

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

    looking = phase == ABDUCT and seat == st.holder  # Abduction: "reveal the three cards" to its holder
    pyramid: list[dict[str, Any] | None] = []
    for k in range(PYRAMID_SLOTS):
        if k >= len(st.pyramid):
            pyramid.append(None)
            continue
        c = st.pyramid[k]
        up = st.slot_face_up(k)
        pyramid.append(
            {
                "slot": k + 1,
                "back": backs[c],
                "face_up": up,
                "card": ids[c] if up or looking else None,
                "seen": ids[c],
                "shows": st.shown_symbol(k) if sorting else None,
            }
        )

    pending: dict[str, Any] | None
    awaiting = st.waiting_for()
    if phase == PLAY:
        pending = {
            "phase": PLAY,
            "awaiting": awaiting,
            "submitted": [c >= 0 for c in st.plays],
            "final_challenge": st.round == 6,
        }
    elif phase in (SEND, KEEP):
        pending = {
            "phase": phase,
            "awaiting": awaiting,
            "winner": st.winner,
            "loser": 1 - st.winner,
            "cards": [ids[c] for c in st.remaining],
        }
    elif phase in (ABDUCT, GNOME):
        pending = {
            "phase": phase,
            "awaiting": awaiting,
            "holder": st.holder,
            "slots": st.abduct_slots() if phase == ABDUCT else st.gnome_slots(),
        }
    elif phase == BUILD:
        pending = {"phase": BUILD, "awaiting": awaiting, "placed": [len(st.rows[0]), len(st.rows[1])]}
    else:
        pending = None

    t_s = st.pyramid_symbols() if sorting else None
    view: View = {
        "game": "conspiranoicos",
        "you": seat,
        "phase": phase,
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


def deck_from_view(view: View) -> Deck:
    """The deck a view's catalogue describes. A search bot determinizes the same view many times,
    so the last catalogue seen is remembered by identity."""
    catalogue = view["cards"]
    last = _last_catalogue.get("last")
    if last is not None and last[0] is catalogue and last[1] == view["deck"]:
        return last[2]
    cards = [{k: v for k, v in c.items() if k != "challenge_text"} for c in catalogue]
    deck = deck_from_data({"name": view["deck"], "cards": cards})
    _last_catalogue["last"] = (catalogue, view["deck"], deck)
    return deck


_last_catalogue: dict[str, tuple[Any, Any, Deck]] = {}


def determinize(view: View, rng: Rng) -> ConspiranoicosState:
    """A full state consistent with a seat's own view, the unseen cards drawn at random.

    Unseen by that seat: the opponent's hand and hidden play (each matching the back the view
    shows), both draw decks, the rest of the challenge deck and the face-down Final Challenge; while
    the rows are built, which of the opponent's (public) evidence is already in its row, in what
    order, and the order of what it still holds.
    The random generator is drawn afresh too.
    """
    seat = view.get("you")
    if seat not in (0, 1):
        raise ValueError("determinize needs a player's own view (you = 0 or 1)")
    try:
        return _determinize(view, seat, rng)
    except (KeyError, TypeError, IndexError) as exc:
        raise ValueError(f"not a Conspiranoicos view: {exc!r}") from exc


def _determinize(view: View, seat: int, rng: Rng) -> ConspiranoicosState:
    deck = deck_from_view(view)
    index = deck.index
    backs = deck.backs
    opp = 1 - seat
    st = ConspiranoicosState.__new__(ConspiranoicosState)
    st.deck = deck
    st.opts = Options.cached(view["options"])
    st.rng = Rng(rng.next64())
    st.round = int(view["round"])
    st.phase = phase = view["phase"]
    if phase not in PHASES:
        raise ValueError(f"unknown phase {phase!r}")
    players = view["players"]
    me = players[seat]
    them = players[opp]
    table = view["table"]

    st.zones = [[index[c] for c in pl["zone"]] for pl in players]
    st.pyramid = [index[item["seen"]] for item in view["pyramid"] if item is not None]
    st.hands = [[], []]
    st.rows = [[], []]
    st.draws = [[], []]
    st.hands[seat] = [index[c] for c in me["hand"]]
    st.rows[seat] = [index[c] for c in me["row"]]
    st.remaining = [index[c] for c in table["remaining"]]
    st.moves = [
        (
            index[m["card"]],
            -1 if m["to"] == TO_PYRAMID else int(m["zone"]),
            -1 if m["by"] is None else int(m["by"]),
        )
        for m in table["moves"]
    ]
    st.winner = -1 if table["winner"] is None else int(table["winner"])
    st.decided = table["decided_by"] or ""
    st.sent_to = table["sent_to"] or ""
    st.challenge = -1 if view["challenge"] is None else index[view["challenge"]]
    st.final_revealed = view["final_challenge"] is not None
    st.final = index[view["final_challenge"]] if st.final_revealed else -1
    st.final_winner = -1 if view["final_winner"] is None else int(view["final_winner"])
    special_of = {"abduction": deck.abduction, "gnome_revelation": deck.gnome}
    st.swaps = [
        (sw["special"], int(sw["seat"]), int(sw["slot"]), special_of[sw["special"]], index[sw["card"]])
        for sw in view["swaps"]
    ]
    st.gained = [index[c] for c in view["gained"]]
    st.gnome_slot = next((slot - 1 for kind, _s, slot, _g, _t in st.swaps if kind == "gnome_revelation"), -1)
    pending = view["pending"]
    st.holder = int(pending["holder"]) if phase in (ABDUCT, GNOME) else -1
    st.log = [dict(e) for e in view["log"]]
    st.result = None

    plays = [-1, -1]
    hidden_play = ""
    for p in (0, 1):
        v = table["plays"][p]
        if v is None:
            continue
        if v in index:
            plays[p] = index[v]
        elif p == opp and phase == PLAY:
            hidden_play = v  # a back symbol: the opponent's submitted card, still hidden
        else:
            raise ValueError(f"table play {v!r} is neither a card nor a hidden opponent's play")
    st.plays = plays

    def take(pool: list[int], back: str) -> int:
        fits = [c for c in pool if backs[c] == back]
        if not fits:
            raise ValueError(f"no unseen card with back {back!r} is left to place")
        c = fits[rng.randrange(len(fits))]
        pool.remove(c)
        return c

    if phase in COLLECT:
        known = set(st.zones[0] + st.zones[1] + st.pyramid + st.hands[seat] + st.remaining)
        known.update(c for c in plays if c >= 0)
        if st.challenge >= 0:
            known.add(st.challenge)
        if st.final >= 0:
            known.add(st.final)
        pool = [c for c in range(len(deck.ids)) if c not in known]
        st.hands[opp] = [take(pool, b) for b in them["hand"]]
        if hidden_play:
            st.plays[opp] = take(pool, hidden_play)
        sizes = [int(players[0]["draw"]), int(players[1]["draw"]), int(view["challenge_deck"])]
        need = sum(sizes) + (0 if st.final_revealed else 1)
        if need != len(pool):
            raise ValueError(
                f"the view accounts for {len(deck.ids) - len(pool) + need} cards, not {len(deck.ids)}"
            )
        rng.shuffle(pool)
        st.draws = [pool[: sizes[0]], pool[sizes[0] : sizes[0] + sizes[1]]]
        st.cdeck = pool[sizes[0] + sizes[1] : sum(sizes)]
        if not st.final_revealed:
            st.final = pool[-1]
    else:
        st.cdeck = []
        pool = [index[c] for c in them["evidence"]]
        if isinstance(them["row"], list):
            st.rows[opp] = [index[c] for c in them["row"]]
            st.hands[opp] = [index[c] for c in them["hand"]]
        elif type(them["hand"]) is int:
            # Rows being built: the row is drawn from the evidence, in a random order; the rest is held.
            placed = int(them["row"])
            if placed + them["hand"] != len(pool):
                raise ValueError("the opponent's evidence does not match its hand and row")
            rng.shuffle(pool)
            st.rows[opp] = pool[:placed]
            st.hands[opp] = pool[placed:]
        else:
            st.hands[opp] = [take(pool, b) for b in them["hand"]]
            rng.shuffle(pool)
            st.rows[opp] = pool
            if len(pool) != int(them["row"]):
                raise ValueError("the opponent's evidence does not match its hand and row")
    if st.phase == OVER:
        st.result = st.compute_score()
    return st
