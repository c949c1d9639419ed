"""What a seat may believe: the full states consistent with its own view (``determinize``).

Unseen by a seat (``views.py`` says why): the opponent's hand and hidden play (each matching the
back the view shows), both draw decks, the rest of the challenge deck and the face-down Final
Challenge; while the rows are built, which of the opponent's (public) evidence is already in its row,
in what order, and the order of what it still holds. A world draws those at random among the cards
the view leaves unaccounted for, and the random generator afresh.
"""

from __future__ import annotations

from typing import TypeVar

from conflictology.engine import Rng, View

from .cards import Deck, deck_from_data
from .options import Options
from .pyramid import compute_score
from .state import ABDUCT, COLLECT, GNOME, OVER, PHASES, PLAY, TO_PYRAMID, Phase, State

S = TypeVar("S", bound=State)


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


_last_catalogue: dict[str, tuple[object, object, Deck]] = {}  # (catalogue, deck name, deck)


def determinize(cls: type[S], view: View, rng: Rng) -> S:
    """A full state (of class ``cls``) consistent with a seat's own view, the unseen cards drawn at
    random (see the module's docstring); a view that is not a player's own raises ``ValueError``."""
    seat = view.get("you")
    if seat not in (0, 1):
        raise ValueError("determinize needs a player's own view (you = 0 or 1)")
    try:
        return _determinize(cls, view, seat, rng)
    except (KeyError, TypeError, IndexError) as exc:
        raise ValueError(f"not a Conspiranoicos view: {exc!r}") from exc


def _determinize(cls: type[S], view: View, seat: int, rng: Rng) -> S:
    deck = deck_from_view(view)
    index = deck.index
    backs = deck.backs
    opp = 1 - seat
    st = cls.__new__(cls)
    st.deck = deck
    st.opts = Options.cached(view["options"])
    st.rng = Rng(rng.next64())
    st.round = int(view["round"])
    phase = view["phase"]
    if phase not in PHASES:
        raise ValueError(f"unknown phase {phase!r}")
    st.phase = phase = Phase(phase)
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
        elif p == opp and phase is PLAY:
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
    if st.phase is OVER:
        st.result = compute_score(st)
    return st
