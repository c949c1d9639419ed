"""The state of one game of Conspiranoicos and its rules: Collect Evidence, Sort Evidence, Scoring.

Cards are held as indices into the deck (plain lists of ints) so that ``clone`` is a handful of list
copies; actions and views speak card ids. "Rulings" in comments names a section of
``shared/design/conspiranoicos-rulings.md``; "rulebook" is ``shared/seeds/002_*.txt``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from conflictology.engine import Action, ActionTable, Game, GameState, IllegalAction, Rng, View, json_text

from . import scoring
from .cards import ALL_SEEING_EYE, CHALLENGES, Deck, deck_from_data
from .options import PYRAMID_SLOTS, Options

# Phases: Collect Evidence (play, send, keep) x 6 rounds, then Sort Evidence (abduct, gnome, build).
PLAY = "play"
SEND = "send"
KEEP = "keep"
ABDUCT = "abduct"
GNOME = "gnome"
BUILD = "build"
OVER = "over"
PHASES = (PLAY, SEND, KEEP, ABDUCT, GNOME, BUILD, OVER)
COLLECT = (PLAY, SEND, KEEP)

ROUNDS = 6  # five with the challenge deck, the sixth with the Final Challenge (rulebook)
PILE = 6  # three piles of six: each player's draw deck and the challenge deck (rulebook "Setup")
OPENING_HAND = 2
TO_PYRAMID = "pyramid"
TO_ZONE = "zone"
SLOTS = tuple(range(1, PYRAMID_SLOTS + 1))

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


def _seat_name(seat: int) -> str:
    return f"Seat {seat}"


class ConspiranoicosState(GameState):
    """One game. Mutable; ``clone`` copies the lists, shares the deck, options and log entries."""

    game: ClassVar[Game]

    __slots__ = (
        "cdeck",
        "challenge",
        "decided",
        "deck",
        "draws",
        "final",
        "final_revealed",
        "final_winner",
        "gained",
        "gnome_slot",
        "hands",
        "holder",
        "log",
        "moves",
        "opts",
        "phase",
        "plays",
        "pyramid",
        "remaining",
        "result",
        "rng",
        "round",
        "rows",
        "sent_to",
        "swaps",
        "winner",
        "zones",
    )

    deck: Deck
    opts: Options
    rng: Rng
    round: int
    phase: str
    hands: list[list[int]]
    draws: list[list[int]]
    cdeck: list[int]
    final: int
    final_revealed: bool
    challenge: int
    plays: list[int]
    remaining: list[int]
    moves: list[tuple[int, int, int]]
    winner: int
    decided: str
    sent_to: str
    zones: list[list[int]]
    pyramid: list[int]
    gnome_slot: int
    gained: list[int]
    swaps: list[tuple[str, int, int, int, int]]
    holder: int
    rows: list[list[int]]
    final_winner: int
    log: list[dict[str, Any]]
    result: scoring.Score | None

    # ---------------------------------------------------------------- creation
    @classmethod
    def deal(cls, deck: Deck, opts: Options, order: list[int], rng: Rng) -> ConspiranoicosState:
        """A new game from a stacked order of card indices (contract: deck[0:6] seat 0's draw deck,
        deck[6:12] seat 1's, deck[12:17] the challenge deck in reveal order, deck[17] the Final
        Challenge)."""
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
        st.plays = [-1, -1]
        st.remaining = []
        st.moves = []
        st.winner = -1
        st.decided = ""
        st.sent_to = ""
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
        st._log({"type": "setup", "text": "Each player draws two cards from their own draw deck."})
        for seat in (0, 1):
            for _ in range(OPENING_HAND):
                st.hands[seat].append(st.draws[seat].pop(0))
            st._log(
                {
                    "type": "opening_hand",
                    "seat": seat,
                    "cards": [ids[c] for c in st.hands[seat]],
                    "text": f"{_seat_name(seat)}'s opening hand: "
                    f"{', '.join(ids[c] for c in st.hands[seat])}.",
                },
                to=seat,
            )
        st._start_round()
        return st

    def clone(self) -> ConspiranoicosState:
        st = ConspiranoicosState.__new__(ConspiranoicosState)
        st.deck = self.deck
        st.opts = self.opts
        st.rng = Rng(self.rng.state)
        st.round = self.round
        st.phase = self.phase
        h, d, z, r = self.hands, self.draws, self.zones, self.rows
        st.hands = [h[0][:], h[1][:]]
        st.draws = [d[0][:], d[1][:]]
        st.zones = [z[0][:], z[1][:]]
        st.rows = [r[0][:], r[1][:]]
        st.cdeck = self.cdeck[:]
        st.final = self.final
        st.final_revealed = self.final_revealed
        st.challenge = self.challenge
        st.plays = self.plays[:]
        st.remaining = self.remaining[:]
        st.moves = self.moves[:]
        st.winner = self.winner
        st.decided = self.decided
        st.sent_to = self.sent_to
        st.pyramid = self.pyramid[:]
        st.gnome_slot = self.gnome_slot
        st.gained = self.gained[:]
        st.swaps = self.swaps[:]
        st.holder = self.holder
        st.final_winner = self.final_winner
        st.log = self.log[:]  # entries are never mutated once logged
        st.result = self.result
        return st

    # ---------------------------------------------------------------- contract
    @property
    def num_players(self) -> int:
        return 2

    @property
    def action_table(self) -> ActionTable:
        """The action table of this game's deck (another deck file has other card ids)."""
        return action_table_for(self.deck)

    def legal_action_indices(self, seat: int) -> list[int]:
        table = self.action_table
        return [table.index(a) for a in self.legal_actions(seat)]

    def apply_index(self, seat: int, index: int) -> None:
        self.apply(seat, self.action_table.action(index))

    def is_over(self) -> bool:
        return self.phase == OVER

    def winners(self) -> list[int]:
        return list(self.result.winners) if self.result is not None else []

    def scores(self) -> list[int]:
        return list(self.result.totals) if self.result is not None else []

    def waiting_for(self) -> list[int]:
        phase = self.phase
        if phase == PLAY:
            p = self.plays
            return [s for s in (0, 1) if p[s] < 0]
        if phase == SEND:
            return [self.winner]
        if phase == KEEP:
            return [1 - self.winner]
        if phase == BUILD:
            h = self.hands
            return [s for s in (0, 1) if h[s]]
        if phase == OVER:
            return []
        return [self.holder]

    def legal_actions(self, seat: int) -> list[Action]:
        if type(seat) is not int:
            return []  # True == 1 in Python, but a bool is not a seat (nor is 1.0)
        phase = self.phase
        ids = self.deck.ids
        if phase == PLAY:
            if seat not in (0, 1) or self.plays[seat] >= 0:
                return []
            return [{"type": "play", "card": ids[c]} for c in self.hands[seat]]
        if phase == SEND:
            if seat != self.winner:
                return []
            return [
                {"type": "send", "card": ids[c], "to": to}
                for c in self.remaining
                for to in (TO_ZONE, TO_PYRAMID)
            ]
        if phase == KEEP:
            if seat != 1 - self.winner:
                return []
            return [{"type": "keep", "card": ids[c]} for c in self.remaining]
        if phase == BUILD:
            if seat not in (0, 1):
                return []
            return [{"type": "place", "card": ids[c]} for c in self.hands[seat]]
        if phase == ABDUCT and seat == self.holder:
            acts: list[Action] = [{"type": "abduct", "slot": s} for s in self.abduct_slots()]
            acts.append({"type": "pass"})
            return acts
        if phase == GNOME and seat == self.holder:
            acts = [{"type": "reveal_gnome", "slot": s} for s in self.gnome_slots()]
            acts.append({"type": "pass"})
            return acts
        return []

    def decision_kind(self, seat: int) -> str:
        # The simultaneous plays of Collect Evidence are each player's move of the round.
        return "turn" if self.phase == PLAY else "choice"

    def timeout_action(self, seat: int) -> Action:
        """A seat whose clock runs out: plays or places the first card of its hand, sends its own
        played card to its own zone, keeps the first card left on the table (seat 0's play, seat 1's
        play, the challenge card, in that order) and passes on a special card."""
        phase = self.phase
        if type(seat) is not int or seat not in self.waiting_for():
            raise IllegalAction(f"{_seat_name(seat)} is not awaited")
        ids = self.deck.ids
        if phase in (PLAY, BUILD):
            return {"type": "play" if phase == PLAY else "place", "card": ids[self.hands[seat][0]]}
        if phase == SEND:
            return {"type": "send", "card": ids[self.plays[seat]], "to": TO_ZONE}
        if phase == KEEP:
            return {"type": "keep", "card": ids[self.remaining[0]]}
        return {"type": "pass"}

    # ---------------------------------------------------------------- applying actions
    def _card(self, action: Mapping[str, Any], what: str) -> int:
        cid = action.get("card")
        c = self.deck.index.get(cid) if isinstance(cid, str) else None
        if c is None:
            raise IllegalAction(f"{what}: 'card' must be a card id of this deck, got {cid!r}")
        return c

    def apply(self, seat: int, action: Mapping[str, Any]) -> None:
        # type() checks first: this is the hot path of every search and playout.
        if type(action) is not dict and not isinstance(action, Mapping):
            raise IllegalAction(f"an action is an object with a 'type', got {action!r}")
        if type(seat) is not int or seat not in (0, 1):
            raise IllegalAction(f"no such seat: {seat!r}")
        kind = action.get("type")
        phase = self.phase
        if phase == OVER:
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
        if seat not in self.waiting_for():
            raise IllegalAction(f"{_seat_name(seat)} is not awaited now (awaiting {self.waiting_for()})")
        if phase == PLAY:
            self._play(seat, self._card(action, "play"))
        elif phase == SEND:
            self._send(seat, self._card(action, "send"), action["to"])
        elif phase == KEEP:
            self._keep(seat, self._card(action, "keep"))
        elif phase == BUILD:
            self._place(seat, self._card(action, "place"))
        elif kind == "pass":
            self._pass(seat)
        else:
            self._swap(seat, action["slot"])

    # -- Collect Evidence
    def _start_round(self) -> None:
        """Reveal the round's challenge (rounds 1–5); round 6 keeps the Final Challenge face down."""
        self.plays = [-1, -1]
        self.remaining = []
        self.moves = []
        self.winner = -1
        self.decided = ""
        self.sent_to = ""
        self.phase = PLAY
        if self.round < ROUNDS:
            c = self.cdeck.pop(0)
            self.challenge = c
            card = self.deck.cards[c]
            self._log(
                {
                    "type": "challenge",
                    "round": self.round,
                    "card": card.id,
                    "text": f"Round {self.round}: the challenge card is {card.id} "
                    f"({card.challenge_text}, value {card.value}).",
                }
            )
        else:
            self.challenge = -1
            self._log(
                {
                    "type": "final_round",
                    "round": self.round,
                    "text": f"Round {self.round}: the Final Challenge, face down; "
                    "the value closest to it wins.",
                }
            )

    def _play(self, seat: int, c: int) -> None:
        hand = self.hands[seat]
        if c not in hand:
            raise IllegalAction(f"{_seat_name(seat)} cannot play {self.deck.ids[c]}: not in their hand")
        hand.remove(c)
        self.plays[seat] = c
        self._log(
            {
                "type": "submit",
                "seat": seat,
                "back": self.deck.backs[c],
                "text": f"{_seat_name(seat)} submits a card (back {self.deck.backs[c]}).",
            }
        )
        if self.plays[1 - seat] >= 0:
            self._resolve()

    def _resolve(self) -> None:
        """Both plays are in: reveal them and decide the round (rulings "A round", step 2)."""
        deck = self.deck
        ids = deck.ids
        p0, p1 = self.plays
        final = self.round == ROUNDS
        if final:
            self.final_revealed = True
            self.challenge = self.final
        ch = self.challenge
        self._log(
            {
                "type": "reveal",
                "round": self.round,
                "challenge": ids[ch],
                "plays": [ids[p0], ids[p1]],
                "text": f"Revealed: {_seat_name(0)} plays {ids[p0]}, {_seat_name(1)} plays {ids[p1]}"
                + (f"; the Final Challenge is {ids[ch]} (value {deck.values[ch]})." if final else "."),
            }
        )
        winner, how, reason = self._decide(p0, p1, ch, final)
        self.remaining = [p0, p1, ch]
        self.decided = how
        if winner < 0:
            self._random_placement(reason)
            return
        self.winner = winner
        if final:
            self.final_winner = winner  # the Final Challenge point (rulings "A round", round 6)
        self._log(
            {
                "type": "round_winner",
                "round": self.round,
                "seat": winner,
                "by": how,
                "text": f"{_seat_name(winner)} wins the round: {reason}."
                + (" They score the Final Challenge point." if final else ""),
            }
        )
        self.phase = SEND

    def _decide(self, p0: int, p1: int, ch: int, final: bool) -> tuple[int, str, str]:
        deck = self.deck
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
                m0, m1 = self._meets(code, p0), self._meets(code, p1)
                if m0 != m1:
                    w = 0 if m0 else 1
                    return w, "challenge", f"{text}: only {deck.ids[self.plays[w]]} meets it"
        # Rulebook "In case of a tie in the challenge": closer to (or equal to) the card's value wins.
        target = values[ch]
        d0, d1 = abs(values[p0] - target), abs(values[p1] - target)
        if d0 != d1:
            w = 0 if d0 < d1 else 1
            return (
                w,
                "closeness",
                (f"{deck.ids[self.plays[w]]} is closer to {target} ({min(d0, d1)} against {max(d0, d1)})"),
            )
        return -1, "random", f"both are {d0} from {target}"

    def _meets(self, code: str, c: int) -> bool:
        deck = self.deck
        if code == "even_value":
            return deck.values[c] % 2 == 0
        if code == "odd_value":
            return deck.values[c] % 2 == 1
        if code == "shows_own_back":
            # Met when the back's faction is one of the front symbols (decoys and specials never).
            return deck.backs[c] in deck.fronts[c]
        return code[-1] in deck.fronts[c]  # shows_X; special cards show nothing (rulings)

    def _random_placement(self, reason: str) -> None:
        """Rulebook: "If the tie continues, the three cards are placed at random": one to the
        Pyramid and one to each zone, by the seeded generator; nobody chooses."""
        cards = self.remaining[:]
        self.rng.shuffle(cards)
        ids = self.deck.ids
        self.pyramid.append(cards[0])
        self.zones[0].append(cards[1])
        self.zones[1].append(cards[2])
        self.moves = [(cards[0], -1, -1), (cards[1], 0, -1), (cards[2], 1, -1)]
        self.remaining = []
        self._log(
            {
                "type": "random_placement",
                "round": self.round,
                "pyramid": ids[cards[0]],
                "slot": len(self.pyramid),
                "zones": [ids[cards[1]], ids[cards[2]]],
                "text": f"Still tied ({reason}): the cards are placed at random: {ids[cards[0]]} to the "
                f"Pyramid (slot {len(self.pyramid)}), {ids[cards[1]]} to {_seat_name(0)}'s zone, "
                f"{ids[cards[2]]} to {_seat_name(1)}'s zone."
                + (" Nobody wins the Final Challenge point." if self.round == ROUNDS else ""),
            }
        )
        self._end_round()

    def _send(self, seat: int, c: int, to: Any) -> None:
        if to not in (TO_PYRAMID, TO_ZONE):
            raise IllegalAction(f"send: 'to' must be 'pyramid' or 'zone', got {to!r}")
        if c not in self.remaining:
            raise IllegalAction(f"send: {self.deck.ids[c]} is not one of the round's three cards")
        self.remaining.remove(c)
        self.sent_to = to
        cid = self.deck.ids[c]
        if to == TO_PYRAMID:
            self.pyramid.append(c)
            self.moves.append((c, -1, seat))
            where = f"the Pyramid (slot {len(self.pyramid)})"
        else:
            self.zones[seat].append(c)
            self.moves.append((c, seat, seat))
            where = "their zone"
        self._log(
            {
                "type": "send",
                "seat": seat,
                "card": cid,
                "to": to,
                "slot": len(self.pyramid) if to == TO_PYRAMID else None,
                "text": f"{_seat_name(seat)} sends {cid} to {where}.",
            }
        )
        self.phase = KEEP

    def _keep(self, seat: int, c: int) -> None:
        if c not in self.remaining:
            raise IllegalAction(f"keep: {self.deck.ids[c]} is not one of the cards left on the table")
        ids = self.deck.ids
        self.remaining.remove(c)
        self.zones[seat].append(c)
        self.moves.append((c, seat, seat))
        last = self.remaining.pop()
        winner = self.winner
        # Rulings "A round", step 3: the last card goes wherever the winner did not send theirs.
        if self.sent_to == TO_ZONE:
            self.pyramid.append(last)
            self.moves.append((last, -1, -1))
            where = f"the Pyramid (slot {len(self.pyramid)})"
            to, slot, owner = TO_PYRAMID, len(self.pyramid), None
        else:
            self.zones[winner].append(last)
            self.moves.append((last, winner, -1))
            where = f"{_seat_name(winner)}'s zone"
            to, slot, owner = TO_ZONE, None, winner
        self._log(
            {
                "type": "keep",
                "seat": seat,
                "card": ids[c],
                "text": f"{_seat_name(seat)} keeps {ids[c]} in their zone.",
            }
        )
        self._log(
            {
                "type": "rest",
                "card": ids[last],
                "to": to,
                "slot": slot,
                "zone": owner,
                "text": f"The last card, {ids[last]}, goes to {where}.",
            }
        )
        self._end_round()

    def _end_round(self) -> None:
        # Rulebook: "Finally, both players take one card from their draw deck" (while it has cards).
        ids, backs = self.deck.ids, self.deck.backs
        for seat in (0, 1):
            if self.draws[seat]:
                c = self.draws[seat].pop(0)
                self.hands[seat].append(c)
                self._log(
                    {
                        "type": "draw",
                        "seat": seat,
                        "back": backs[c],
                        "text": f"{_seat_name(seat)} draws a card (back {backs[c]}).",
                    }
                )
                self._log(
                    {
                        "type": "drew",
                        "seat": seat,
                        "card": ids[c],
                        "text": f"{_seat_name(seat)} draws {ids[c]}.",
                    },
                    to=seat,
                )
        if self.round < ROUNDS:
            self.round += 1
            self._start_round()
        else:
            self._start_sort_evidence()

    # -- Sort Evidence
    def _start_sort_evidence(self) -> None:
        """Rulebook "Sort Evidence Phase": the zones go back to hand; rulings: the face-up slots turn."""
        self.challenge = -1
        self.plays = [-1, -1]
        self.remaining = []
        self.moves = []
        self.winner = -1
        self.decided = ""
        self.sent_to = ""
        for seat in (0, 1):
            self.hands[seat] = self.zones[seat]
            self.zones[seat] = []
        face_up = [k + 1 for k in range(len(self.pyramid)) if self.opts.face_up[k]]
        ids = self.deck.ids
        self._log(
            {
                "type": "sort_evidence",
                "face_up": face_up,
                "cards": [ids[self.pyramid[k - 1]] for k in face_up],
                "text": "Sort Evidence: each player takes the cards of their zone into hand; Pyramid "
                + (
                    f"slot(s) {', '.join(map(str, face_up))} turn face up ("
                    + ", ".join(ids[self.pyramid[k - 1]] for k in face_up)
                    + ")."
                    if face_up
                    else "cards all stay face down."
                ),
            }
        )
        self.phase = BUILD  # Collect Evidence is over: the chosen slots are face up from now on
        self._next_special(ABDUCT)

    def _holding(self, card: int) -> int:
        if card < 0 or card in self.gained:
            return -1  # the warning clause: a special card gained by a swap has no effect
        for seat in (0, 1):
            if card in self.hands[seat]:
                return seat
        return -1

    def abduct_slots(self) -> list[int]:
        """Face-down Pyramid slots: Abduction may be swapped for any one of them."""
        return [k + 1 for k in range(len(self.pyramid)) if not self.slot_face_up(k)]

    def gnome_slots(self) -> list[int]:
        """Face-up Pyramid slots: Gnome Revelation may be swapped with any one of them."""
        return [k + 1 for k in range(len(self.pyramid)) if self.slot_face_up(k)]

    def slot_face_up(self, k: int) -> bool:
        """Is 0-based slot ``k`` face up now? Every card goes in face down; the chosen slots turn up
        at Sort Evidence, and a revealed Gnome Revelation lies face up."""
        if self.phase in COLLECT:
            return False
        return self.opts.face_up[k] or k == self.gnome_slot

    def _next_special(self, stage: str) -> None:
        """Rulebook: the Abduction holder may act, then the Gnome Revelation holder; then the rows."""
        if stage == ABDUCT:
            holder = self._holding(self.deck.abduction)
            if holder >= 0 and self.abduct_slots():
                self.phase, self.holder = ABDUCT, holder
                return
        holder = self._holding(self.deck.gnome) if stage in (ABDUCT, GNOME) else -1
        if holder >= 0 and self.gnome_slots():
            self.phase, self.holder = GNOME, holder
            return
        self.phase, self.holder = BUILD, -1

    def _pass(self, seat: int) -> None:
        phase = self.phase
        title = "Abduction" if phase == ABDUCT else "Gnome Revelation"
        self._log(
            {
                "type": "pass",
                "seat": seat,
                "special": "abduction" if phase == ABDUCT else "gnome_revelation",
                "text": f"{_seat_name(seat)} does not use {title}.",
            }
        )
        self._next_special(GNOME if phase == ABDUCT else BUILD)

    def _swap(self, seat: int, slot: Any) -> None:
        phase = self.phase
        allowed = self.abduct_slots() if phase == ABDUCT else self.gnome_slots()
        if not isinstance(slot, int) or isinstance(slot, bool) or slot not in allowed:
            kind = "face-down" if phase == ABDUCT else "face-up"
            raise IllegalAction(f"'slot' must be a {kind} Pyramid slot ({allowed}), got {slot!r}")
        deck = self.deck
        special = deck.abduction if phase == ABDUCT else deck.gnome
        k = slot - 1
        taken = self.pyramid[k]
        self.pyramid[k] = special
        hand = self.hands[seat]
        hand.remove(special)
        hand.append(taken)
        self.gained.append(taken)
        kind = "abduction" if phase == ABDUCT else "gnome_revelation"
        self.swaps.append((kind, seat, slot, special, taken))
        ids = deck.ids
        if phase == ABDUCT:
            text = (
                f"{_seat_name(seat)} uses Abduction: looks at the face-down Pyramid cards and swaps "
                f"Abduction for {ids[taken]} (slot {slot}), which goes back face down."
            )
        else:
            self.gnome_slot = k
            text = (
                f"{_seat_name(seat)} reveals the Gnome Revelation: it takes the place of {ids[taken]} "
                f"in Pyramid slot {slot} and counts as a Gnome symbol there."
            )
        if deck.specials[taken] is not None:
            text += f" {ids[taken]} was gained by a swap: its effect may not be used."
        self._log(
            {
                "type": "abduct" if phase == ABDUCT else "reveal_gnome",
                "seat": seat,
                "slot": slot,
                "card": ids[taken],
                "text": text,
            }
        )
        self._next_special(GNOME if phase == ABDUCT else BUILD)

    def _place(self, seat: int, c: int) -> None:
        hand = self.hands[seat]
        if c not in hand:
            raise IllegalAction(f"{_seat_name(seat)} cannot place {self.deck.ids[c]}: not in their hand")
        hand.remove(c)
        row = self.rows[seat]
        row.append(c)
        self._log(
            {
                "type": "place",
                "seat": seat,
                "count": len(row),
                "text": f"{_seat_name(seat)} places a card in their row ({len(row)}).",
            }
        )
        if not self.hands[0] and not self.hands[1]:
            self._finish()

    def _finish(self) -> None:
        self.phase = OVER
        self.holder = -1
        self.result = res = self.compute_score()
        ids = self.deck.ids
        rows = [[ids[c] for c in self.rows[s]] for s in (0, 1)]
        self._log(
            {
                "type": "rows",
                "rows": rows,
                "text": "Both rows are revealed: "
                + "; ".join(f"{_seat_name(s)}: {' '.join(rows[s])}" for s in (0, 1))
                + ".",
            }
        )
        how = {
            "points": "on points",
            "final_challenge": "tied on points; the Final Challenge breaks the tie",
            "all_seeing_eye": "tied on points; the All-Seeing Eye breaks the tie",
            "shared": "tied on points with no tie-break: a shared victory",
        }[res.decided_by]
        self._log(
            {
                "type": "result",
                "scores": list(res.totals),
                "winners": list(res.winners),
                "decided_by": res.decided_by,
                "text": f"Scores: {_seat_name(0)} {res.totals[0]}, {_seat_name(1)} {res.totals[1]}. "
                f"{' and '.join(_seat_name(s) for s in res.winners)} "
                f"{'win' if len(res.winners) > 1 else 'wins'} ({how}).",
            }
        )

    # ---------------------------------------------------------------- scoring
    def shown_symbol(self, k: int) -> str:
        """The symbol Pyramid slot ``k`` (0-based) shows: a revealed Gnome Revelation is G; a face-up
        card its single front symbol, else (none or two) its back; a face-down card its back."""
        deck = self.deck
        c = self.pyramid[k]
        if k == self.gnome_slot:
            return "G"
        if self.slot_face_up(k):
            front = deck.fronts[c]
            return front[0] if len(front) == 1 else deck.backs[c]
        return deck.backs[c]

    def pyramid_symbols(self) -> tuple[list[str], str]:
        """T (the bottom row's three symbols, slots 1–3) and S (the top card's, slot 6)."""
        return [self.shown_symbol(k) for k in range(3)], self.shown_symbol(PYRAMID_SLOTS - 1)

    def row_symbols(self, seat: int, s: str) -> list[tuple[str, ...]]:
        """What each card of a row may show: the Eye counts as S unless gained by a swap; other
        special cards show nothing."""
        deck = self.deck
        out: list[tuple[str, ...]] = []
        for c in self.rows[seat]:
            special = deck.specials[c]
            if special is None:
                out.append(deck.fronts[c])
            elif special == ALL_SEEING_EYE and c not in self.gained:
                out.append((s,))
            else:
                out.append(())
        return out

    def compute_score(self) -> scoring.Score:
        t, s = self.pyramid_symbols()
        deck = self.deck
        eye = deck.eye
        eye_holder = next((p for p in (0, 1) if eye >= 0 and eye in self.rows[p]), -1)
        return scoring.score(
            rows=[[deck.ids[c] for c in self.rows[p]] for p in (0, 1)],
            values=[[deck.values[c] for c in self.rows[p]] for p in (0, 1)],
            syms=[self.row_symbols(p, s) for p in (0, 1)],
            t=t,
            s=s,
            final_winner=self.final_winner,
            eye_holder=eye_holder,
            any_order=self.opts.sequence_any_order,
            ties_score_both=self.opts.ties_score_both,
        )

    # ---------------------------------------------------------------- log, views, JSON
    def _log(self, entry: dict[str, Any], to: int | None = None) -> None:
        if to is not None:
            entry["private"] = to  # a private entry, shown only to that seat
        self.log.append(entry)

    def view(self, seat: int | None) -> View:
        from .views import build_view

        if seat is not None and (type(seat) is not int or seat not in (0, 1)):
            raise ValueError(f"no seat {seat!r} at a table of two (a seat is 0 or 1, None for a spectator)")

        return build_view(self, seat)

    def where(self) -> dict[str, list[int]]:
        """Every card's place (for conservation checks): each of the 18 indices appears once."""
        places: dict[str, list[int]] = {
            "hand0": self.hands[0],
            "hand1": self.hands[1],
            "draw0": self.draws[0],
            "draw1": self.draws[1],
            "challenge_deck": self.cdeck,
            "final": [] if self.final_revealed else [self.final],
            "zone0": self.zones[0],
            "zone1": self.zones[1],
            "pyramid": self.pyramid,
            "row0": self.rows[0],
            "row1": self.rows[1],
        }
        if self.phase == PLAY:
            places["table"] = [c for c in self.plays if c >= 0] + (
                [self.challenge] if self.challenge >= 0 else []
            )
        else:
            places["table"] = self.remaining
        return {k: list(v) for k, v in places.items()}

    def to_dict(self) -> dict[str, Any]:
        ids = self.deck.ids

        def cards(cs: list[int]) -> list[str]:
            return [ids[c] for c in cs]

        def card(c: int) -> str | None:
            return ids[c] if c >= 0 else None

        return {
            "game": "conspiranoicos",
            "version": 1,
            "deck": self.deck.data,
            "options": self.opts.to_dict(),
            "rng": self.rng.state,
            "round": self.round,
            "phase": self.phase,
            "hands": [cards(h) for h in self.hands],
            "draws": [cards(d) for d in self.draws],
            "challenge_deck": cards(self.cdeck),
            "final": ids[self.final],
            "final_revealed": self.final_revealed,
            "challenge": card(self.challenge),
            "plays": [card(c) for c in self.plays],
            "remaining": cards(self.remaining),
            "moves": [[ids[c], to, by] for c, to, by in self.moves],
            "winner": self.winner,
            "decided": self.decided,
            "sent_to": self.sent_to,
            "zones": [cards(z) for z in self.zones],
            "pyramid": cards(self.pyramid),
            "gnome_slot": self.gnome_slot,
            "gained": cards(self.gained),
            "swaps": [[kind, seat, slot, ids[g], ids[t]] for kind, seat, slot, g, t in self.swaps],
            "holder": self.holder,
            "rows": [cards(r) for r in self.rows],
            "final_winner": self.final_winner,
            "log": self.log,
        }

    def to_json(self) -> str:
        return json_text(self.to_dict())

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ConspiranoicosState:
        """Rebuild a state saved by ``to_dict``; a malformed save raises ``ValueError``."""
        try:
            if data.get("game") != "conspiranoicos":
                raise ValueError(f"not a Conspiranoicos save: game={data.get('game')!r}")
            deck = deck_from_data(data["deck"])
            index = deck.index

            def cards(xs: Any) -> list[int]:
                return [index[x] for x in xs]

            def card(x: Any) -> int:
                return -1 if x is None else index[x]

            st = cls.__new__(cls)
            st.deck = deck
            st.opts = Options(data["options"])
            st.rng = Rng(int(data["rng"]))
            st.round = int(data["round"])
            st.phase = str(data["phase"])
            if st.phase not in PHASES or not 1 <= st.round <= ROUNDS:
                raise ValueError(f"bad phase/round: {st.phase!r}/{st.round!r}")
            st.hands = [cards(h) for h in data["hands"]]
            st.draws = [cards(d) for d in data["draws"]]
            st.cdeck = cards(data["challenge_deck"])
            st.final = index[data["final"]]
            st.final_revealed = bool(data["final_revealed"])
            st.challenge = card(data["challenge"])
            st.plays = [card(c) for c in data["plays"]]
            st.remaining = cards(data["remaining"])
            st.moves = [(index[c], int(to), int(by)) for c, to, by in data["moves"]]
            st.winner = int(data["winner"])
            st.decided = str(data["decided"])
            st.sent_to = str(data["sent_to"])
            st.zones = [cards(z) for z in data["zones"]]
            st.pyramid = cards(data["pyramid"])
            st.gnome_slot = int(data["gnome_slot"])
            st.gained = cards(data["gained"])
            st.swaps = [(str(k), int(s), int(sl), index[g], index[t]) for k, s, sl, g, t in data["swaps"]]
            st.holder = int(data["holder"])
            st.rows = [cards(r) for r in data["rows"]]
            st.final_winner = int(data["final_winner"])
            st.log = [dict(e) for e in data["log"]]
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"malformed Conspiranoicos save: {exc!r}") from exc
        everywhere = sorted(c for cs in st.where().values() for c in cs)
        if everywhere != list(range(len(deck.ids))):
            raise ValueError("malformed Conspiranoicos save: the cards are not each in exactly one place")
        st.result = st.compute_score() if st.phase == OVER else None
        return st


# Per phase: the action types accepted and their exact fields.
_EXPECTED: dict[str, dict[str, frozenset[str]]] = {
    PLAY: {"play": frozenset(("type", "card"))},
    SEND: {"send": frozenset(("type", "card", "to"))},
    KEEP: {"keep": frozenset(("type", "card"))},
    ABDUCT: {"abduct": frozenset(("type", "slot")), "pass": frozenset(("type",))},
    GNOME: {"reveal_gnome": frozenset(("type", "slot")), "pass": frozenset(("type",))},
    BUILD: {"place": frozenset(("type", "card"))},
}
