"""The rules of Conspiranoicos as functions over a :class:`~.state.State`: the deal, who is awaited
and what they may do, applying an action, and Collect Evidence (a round: the plays, the challenge
card, ties, sending to the Pyramid or a scoring zone, the Final Challenge). Sort Evidence (Abduction,
the Gnome Revelation, arranging the rows, the score) is ``sorting.py``; what the Pyramid shows,
``pyramid.py``.

Every function that applies an action checks it first and changes nothing when it is illegal. Phases
are compared by identity (a state's phase is always a :class:`~.state.Phase` member): this is the
inner loop of every search and playout.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from conflictology.engine import Action, ActionTable, IllegalAction, Rng

from . import sorting
from .cards import CHALLENGES, Deck
from .log import record, seat_name
from .options import Options
from .pyramid import abduct_slots, gnome_slots
from .state import (
    ABDUCT,
    BUILD,
    GNOME,
    KEEP,
    OPENING_HAND,
    OVER,
    PILE,
    PLAY,
    ROUNDS,
    SEND,
    SLOTS,
    TO_PYRAMID,
    TO_ZONE,
    Phase,
    State,
)

S = TypeVar("S", bound=State)

# Per-challenge-code helpers for round resolution (rulings "A round", step 2).
_BETTER_HIGH = {"highest_value": True, "lowest_value": False, "most_symbols": True, "fewest_symbols": False}


def action_table_for(deck: Deck) -> ActionTable:
    """Every action a game with this deck can produce, in a fixed order."""
    cached = _tables.get(deck.key)
    if cached is not None:
        return cached
    actions: list[Action] = [{"type": "play", "card": cid} for cid in deck.ids]
    actions += [{"type": "send", "card": cid, "to": to} for cid in deck.ids for to in (TO_ZONE, TO_PYRAMID)]
    actions += [{"type": "keep", "card": cid} for cid in deck.ids]
    actions += [{"type": "abduct", "slot": s} for s in SLOTS]
    actions += [{"type": "reveal_gnome", "slot": s} for s in SLOTS]
    actions.append({"type": "pass"})
    actions += [{"type": "place", "card": cid} for cid in deck.ids]
    table = ActionTable(actions)
    _tables[deck.key] = table
    return table


_tables: dict[str, ActionTable] = {}


def deal(cls: type[S], deck: Deck, opts: Options, order: list[int], rng: Rng) -> S:
    """A new game from a stacked order of card indices (contract: deck[0:6] seat 0's draw deck,
    deck[6:12] seat 1's, deck[12:17] the challenge deck in reveal order, deck[17] the Final
    Challenge); ``cls`` is the state class to build."""
    st = cls.__new__(cls)
    st.deck, st.opts, st.rng = deck, opts, rng
    st.round = 1
    st.phase = PLAY
    st.draws = [order[0:PILE], order[PILE : 2 * PILE]]
    st.cdeck = order[2 * PILE : 3 * PILE - 1]
    # Rulings "Setup": the bottom card of the challenge pile is set aside as the Final Challenge.
    st.final = order[3 * PILE - 1]
    st.final_revealed = False
    st.hands = [[], []]
    st.clear_table()
    st.zones = [[], []]
    st.pyramid = []
    st.gnome_slot = -1
    st.gained = []
    st.swaps = []
    st.holder = -1
    st.rows = [[], []]
    st.final_winner = -1
    st.log = []
    st.result = None
    st.challenge = -1
    ids = deck.ids
    record(st, {"type": "setup", "text": "Each player draws two cards from their own draw deck."})
    for seat in (0, 1):
        for _ in range(OPENING_HAND):
            st.hands[seat].append(st.draws[seat].pop(0))
        record(
            st,
            {
                "type": "opening_hand",
                "seat": seat,
                "cards": [ids[c] for c in st.hands[seat]],
                "text": f"{seat_name(seat)}'s opening hand: {', '.join(ids[c] for c in st.hands[seat])}.",
            },
            to=seat,
        )
    _start_round(st)
    return st


def waiting_for(st: State) -> list[int]:
    phase = st.phase
    if phase is PLAY:
        p = st.plays
        return [s for s in (0, 1) if p[s] < 0]
    if phase is SEND:
        return [st.winner]
    if phase is KEEP:
        return [1 - st.winner]
    if phase is BUILD:
        h = st.hands
        return [s for s in (0, 1) if h[s]]
    if phase is OVER:
        return []
    return [st.holder]


def legal_actions(st: State, seat: int) -> list[Action]:
    if type(seat) is not int:
        return []  # True == 1 in Python, but a bool is not a seat (nor is 1.0)
    phase = st.phase
    ids = st.deck.ids
    if phase is PLAY:
        if seat not in (0, 1) or st.plays[seat] >= 0:
            return []
        return [{"type": "play", "card": ids[c]} for c in st.hands[seat]]
    if phase is SEND:
        if seat != st.winner:
            return []
        return [
            {"type": "send", "card": ids[c], "to": to} for c in st.remaining for to in (TO_ZONE, TO_PYRAMID)
        ]
    if phase is KEEP:
        if seat != 1 - st.winner:
            return []
        return [{"type": "keep", "card": ids[c]} for c in st.remaining]
    if phase is BUILD:
        if seat not in (0, 1):
            return []
        return [{"type": "place", "card": ids[c]} for c in st.hands[seat]]
    if phase is ABDUCT and seat == st.holder:
        acts: list[Action] = [{"type": "abduct", "slot": s} for s in abduct_slots(st)]
        acts.append({"type": "pass"})
        return acts
    if phase is GNOME and seat == st.holder:
        acts = [{"type": "reveal_gnome", "slot": s} for s in gnome_slots(st)]
        acts.append({"type": "pass"})
        return acts
    return []


def decision_kind(st: State, seat: int) -> str:
    # The simultaneous plays of Collect Evidence are each player's move of the round.
    return "turn" if st.phase is PLAY else "choice"


def timeout_action(st: State, seat: int) -> Action:
    """A seat whose clock runs out: plays or places the first card of its hand, sends its own
    played card to its own zone, keeps the first card left on the table (seat 0's play, seat 1's
    play, the challenge card, in that order) and passes on a special card."""
    phase = st.phase
    if type(seat) is not int or seat not in waiting_for(st):
        raise IllegalAction(f"{seat_name(seat)} is not awaited")
    ids = st.deck.ids
    if phase in (PLAY, BUILD):
        return {"type": "play" if phase is PLAY else "place", "card": ids[st.hands[seat][0]]}
    if phase is SEND:
        return {"type": "send", "card": ids[st.plays[seat]], "to": TO_ZONE}
    if phase is KEEP:
        return {"type": "keep", "card": ids[st.remaining[0]]}
    return {"type": "pass"}


def _card(st: State, action: Mapping[str, Any], what: str) -> int:
    cid = action.get("card")
    c = st.deck.index.get(cid) if isinstance(cid, str) else None
    if c is None:
        raise IllegalAction(f"{what}: 'card' must be a card id of this deck, got {cid!r}")
    return c


def apply(st: State, seat: int, action: Mapping[str, Any]) -> None:
    # type() checks first: this is the hot path of every search and playout.
    if type(action) is not dict and not isinstance(action, Mapping):
        raise IllegalAction(f"an action is an object with a 'type', got {action!r}")
    if type(seat) is not int or seat not in (0, 1):
        raise IllegalAction(f"no such seat: {seat!r}")
    kind = action.get("type")
    phase = st.phase
    if phase is OVER:
        raise IllegalAction("the game is over")
    expected = _EXPECTED.get(phase)
    if expected is None or type(kind) is not str or kind not in expected:
        raise IllegalAction(
            f"{kind!r} is not an action now; the game awaits {'/'.join(sorted(expected or ()))}"
        )
    keys = expected[kind]
    if action.keys() != keys:
        raise IllegalAction(
            f"a {kind!r} action has exactly the fields {', '.join(sorted(keys))}, got {dict(action)!r}"
        )
    if seat not in waiting_for(st):
        raise IllegalAction(f"{seat_name(seat)} is not awaited now (awaiting {waiting_for(st)})")
    if phase is PLAY:
        _play(st, seat, _card(st, action, "play"))
    elif phase is SEND:
        _send(st, seat, _card(st, action, "send"), action["to"])
    elif phase is KEEP:
        _keep(st, seat, _card(st, action, "keep"))
    elif phase is BUILD:
        sorting.place(st, seat, _card(st, action, "place"))
    elif kind == "pass":
        sorting.pass_special(st, seat)
    else:
        sorting.swap(st, seat, action["slot"])


# -- Collect Evidence
def _start_round(st: State) -> None:
    """Reveal the round's challenge (rounds 1–5); round 6 keeps the Final Challenge face down."""
    st.clear_table()
    st.phase = PLAY
    if st.round < ROUNDS:
        c = st.cdeck.pop(0)
        st.challenge = c
        card = st.deck.cards[c]
        record(
            st,
            {
                "type": "challenge",
                "round": st.round,
                "card": card.id,
                "text": f"Round {st.round}: the challenge card is {card.id} "
                f"({card.challenge_text}, value {card.value}).",
            },
        )
    else:
        st.challenge = -1
        record(
            st,
            {
                "type": "final_round",
                "round": st.round,
                "text": f"Round {st.round}: the Final Challenge, face down; the value closest to it wins.",
            },
        )


def _play(st: State, seat: int, c: int) -> None:
    hand = st.hands[seat]
    if c not in hand:
        raise IllegalAction(f"{seat_name(seat)} cannot play {st.deck.ids[c]}: not in their hand")
    hand.remove(c)
    st.plays[seat] = c
    record(
        st,
        {
            "type": "submit",
            "seat": seat,
            "back": st.deck.backs[c],
            "text": f"{seat_name(seat)} submits a card (back {st.deck.backs[c]}).",
        },
    )
    if st.plays[1 - seat] >= 0:
        _resolve(st)


def _resolve(st: State) -> None:
    """Both plays are in: reveal them and decide the round (rulings "A round", step 2)."""
    deck = st.deck
    ids = deck.ids
    p0, p1 = st.plays
    final = st.round == ROUNDS
    if final:
        st.final_revealed = True
        st.challenge = st.final
    ch = st.challenge
    record(
        st,
        {
            "type": "reveal",
            "round": st.round,
            "challenge": ids[ch],
            "plays": [ids[p0], ids[p1]],
            "text": f"Revealed: {seat_name(0)} plays {ids[p0]}, {seat_name(1)} plays {ids[p1]}"
            + (f"; the Final Challenge is {ids[ch]} (value {deck.values[ch]})." if final else "."),
        },
    )
    winner, how, reason = _decide(st, p0, p1, ch, final)
    st.remaining = [p0, p1, ch]
    st.decided = how
    if winner < 0:
        _random_placement(st, reason)
        return
    st.winner = winner
    if final:
        st.final_winner = winner  # the Final Challenge point (rulings "A round", round 6)
    record(
        st,
        {
            "type": "round_winner",
            "round": st.round,
            "seat": winner,
            "by": how,
            "text": f"{seat_name(winner)} wins the round: {reason}."
            + (" They score the Final Challenge point." if final else ""),
        },
    )
    st.phase = SEND


def _decide(st: State, p0: int, p1: int, ch: int, final: bool) -> tuple[int, str, str]:
    deck = st.deck
    values = deck.values
    if not final:
        code = deck.cards[ch].challenge
        text = CHALLENGES[code]
        high = _BETTER_HIGH.get(code)
        if high is not None:
            # A comparison: the strictly better card wins.
            if code.endswith("value"):
                a, b = values[p0], values[p1]
            else:
                a, b = len(deck.fronts[p0]), len(deck.fronts[p1])
            if a != b:
                return (0 if (a > b) == high else 1), "challenge", f"{text} ({a} against {b})"
        else:
            # A yes/no condition: the player who alone meets it wins.
            m0, m1 = _meets(st, code, p0), _meets(st, code, p1)
            if m0 != m1:
                w = 0 if m0 else 1
                return w, "challenge", f"{text}: only {deck.ids[st.plays[w]]} meets it"
    # Rulebook "In case of a tie in the challenge": closer to (or equal to) the card's value wins.
    target = values[ch]
    d0, d1 = abs(values[p0] - target), abs(values[p1] - target)
    if d0 != d1:
        w = 0 if d0 < d1 else 1
        return (
            w,
            "closeness",
            (f"{deck.ids[st.plays[w]]} is closer to {target} ({min(d0, d1)} against {max(d0, d1)})"),
        )
    return -1, "random", f"both are {d0} from {target}"


def _meets(st: State, code: str, c: int) -> bool:
    deck = st.deck
    if code == "even_value":
        return deck.values[c] % 2 == 0
    if code == "odd_value":
        return deck.values[c] % 2 == 1
    if code == "shows_own_back":
        # Met when the back's faction is one of the front symbols (decoys and specials never).
        return deck.backs[c] in deck.fronts[c]
    return code[-1] in deck.fronts[c]  # shows_X; special cards show nothing (rulings)


def _random_placement(st: State, reason: str) -> None:
    """Rulebook: "If the tie continues, the three cards are placed at random": one to the
    Pyramid and one to each zone, by the seeded generator; nobody chooses."""
    cards = st.remaining[:]
    st.rng.shuffle(cards)
    ids = st.deck.ids
    st.pyramid.append(cards[0])
    st.zones[0].append(cards[1])
    st.zones[1].append(cards[2])
    st.moves = [(cards[0], -1, -1), (cards[1], 0, -1), (cards[2], 1, -1)]
    st.remaining = []
    record(
        st,
        {
            "type": "random_placement",
            "round": st.round,
            "pyramid": ids[cards[0]],
            "slot": len(st.pyramid),
            "zones": [ids[cards[1]], ids[cards[2]]],
            "text": f"Still tied ({reason}): the cards are placed at random: {ids[cards[0]]} to the "
            f"Pyramid (slot {len(st.pyramid)}), {ids[cards[1]]} to {seat_name(0)}'s zone, "
            f"{ids[cards[2]]} to {seat_name(1)}'s zone."
            + (" Nobody wins the Final Challenge point." if st.round == ROUNDS else ""),
        },
    )
    _end_round(st)


def _send(st: State, seat: int, c: int, to: Any) -> None:
    if to not in (TO_PYRAMID, TO_ZONE):
        raise IllegalAction(f"send: 'to' must be 'pyramid' or 'zone', got {to!r}")
    if c not in st.remaining:
        raise IllegalAction(f"send: {st.deck.ids[c]} is not one of the round's three cards")
    st.remaining.remove(c)
    st.sent_to = to
    cid = st.deck.ids[c]
    if to == TO_PYRAMID:
        st.pyramid.append(c)
        st.moves.append((c, -1, seat))
        where = f"the Pyramid (slot {len(st.pyramid)})"
    else:
        st.zones[seat].append(c)
        st.moves.append((c, seat, seat))
        where = "their zone"
    record(
        st,
        {
            "type": "send",
            "seat": seat,
            "card": cid,
            "to": to,
            "slot": len(st.pyramid) if to == TO_PYRAMID else None,
            "text": f"{seat_name(seat)} sends {cid} to {where}.",
        },
    )
    st.phase = KEEP


def _keep(st: State, seat: int, c: int) -> None:
    if c not in st.remaining:
        raise IllegalAction(f"keep: {st.deck.ids[c]} is not one of the cards left on the table")
    ids = st.deck.ids
    st.remaining.remove(c)
    st.zones[seat].append(c)
    st.moves.append((c, seat, seat))
    last = st.remaining.pop()
    winner = st.winner
    # Rulings "A round", step 3: the last card goes wherever the winner did not send theirs.
    if st.sent_to == TO_ZONE:
        st.pyramid.append(last)
        st.moves.append((last, -1, -1))
        where = f"the Pyramid (slot {len(st.pyramid)})"
        to, slot, owner = TO_PYRAMID, len(st.pyramid), None
    else:
        st.zones[winner].append(last)
        st.moves.append((last, winner, -1))
        where = f"{seat_name(winner)}'s zone"
        to, slot, owner = TO_ZONE, None, winner
    record(
        st,
        {
            "type": "keep",
            "seat": seat,
            "card": ids[c],
            "text": f"{seat_name(seat)} keeps {ids[c]} in their zone.",
        },
    )
    record(
        st,
        {
            "type": "rest",
            "card": ids[last],
            "to": to,
            "slot": slot,
            "zone": owner,
            "text": f"The last card, {ids[last]}, goes to {where}.",
        },
    )
    _end_round(st)


def _end_round(st: State) -> None:
    # Rulebook: "Finally, both players take one card from their draw deck" (while it has cards).
    ids, backs = st.deck.ids, st.deck.backs
    for seat in (0, 1):
        if st.draws[seat]:
            c = st.draws[seat].pop(0)
            st.hands[seat].append(c)
            record(
                st,
                {
                    "type": "draw",
                    "seat": seat,
                    "back": backs[c],
                    "text": f"{seat_name(seat)} draws a card (back {backs[c]}).",
                },
            )
            record(
                st,
                {
                    "type": "drew",
                    "seat": seat,
                    "card": ids[c],
                    "text": f"{seat_name(seat)} draws {ids[c]}.",
                },
                to=seat,
            )
    if st.round < ROUNDS:
        st.round += 1
        _start_round(st)
    else:
        sorting.start(st)


# Per phase: the action types accepted and their exact fields.
_EXPECTED: dict[Phase, dict[str, frozenset[str]]] = {
    PLAY: {"play": frozenset(("type", "card"))},
    SEND: {"send": frozenset(("type", "card", "to"))},
    KEEP: {"keep": frozenset(("type", "card"))},
    ABDUCT: {"abduct": frozenset(("type", "slot")), "pass": frozenset(("type",))},
    GNOME: {"reveal_gnome": frozenset(("type", "slot")), "pass": frozenset(("type",))},
    BUILD: {"place": frozenset(("type", "card"))},
}
