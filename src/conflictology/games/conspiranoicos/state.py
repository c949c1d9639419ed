"""The state of one game of Conspiranoicos: its fields, its phases, ``clone`` and the JSON form.

Cards are held as indices into the deck (plain lists of ints) so that ``clone`` is a handful of list
copies; actions, views and saves speak card ids. The rules that move the cards are ``rules.py``;
what a seat sees is ``views.py``. "Rulings" in comments names a ruling of docs/rules/conspiranoicos.md
(where the rulebook is silent); "rulebook" is the game's printed rules, which that page follows.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Self

from conflictology.engine import Rng, json_text

from . import scoring
from .cards import Deck, deck_from_data
from .options import PYRAMID_SLOTS, Options


class Phase(StrEnum):
    """Collect Evidence (play, send, keep) x 6 rounds, then Sort Evidence (abduct, gnome, build).

    The values are what saves, views and the protocol carry."""

    PLAY = "play"  # both players submit a card face down
    SEND = "send"  # the round's winner sends a card to the Pyramid or to their own zone
    KEEP = "keep"  # the loser keeps a card of the two left; the last goes where the winner's did not
    ABDUCT = "abduct"  # the Abduction holder may swap it for a face-down Pyramid card
    GNOME = "gnome"  # the Gnome Revelation holder may swap it with a face-up Pyramid card
    BUILD = "build"  # both players lay out their rows
    OVER = "over"


# Bound once: the rules compare a state's phase with these by identity on every move of a search.
PLAY = Phase.PLAY
SEND = Phase.SEND
KEEP = Phase.KEEP
ABDUCT = Phase.ABDUCT
GNOME = Phase.GNOME
BUILD = Phase.BUILD
OVER = Phase.OVER
# The phases as views and saves spell them (an encoder numbers them in this order).
PHASES: tuple[str, ...] = tuple(p.value for p in Phase)
COLLECT: tuple[Phase, ...] = (PLAY, SEND, KEEP)

ROUNDS = 6  # five with the challenge deck, the sixth with the Final Challenge (rulebook)
PILE = 6  # three piles of six: each player's draw deck and the challenge deck (rulebook "Setup")
OPENING_HAND = 2
TO_PYRAMID = "pyramid"
TO_ZONE = "zone"
SLOTS = tuple(range(1, PYRAMID_SLOTS + 1))


class State:
    """The fields of one game. Mutable; ``clone`` copies the lists, shares the deck, options and log
    entries. The engine's :class:`~conflictology.engine.GameState` over it is
    ``game.ConspiranoicosState``, which every constructor here builds through ``cls``."""

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
    phase: Phase
    hands: list[list[int]]
    draws: list[list[int]]
    cdeck: list[int]  # the challenge deck, in reveal order
    final: int  # the Final Challenge, set aside face down (-1: unknown to a determinized world's seat)
    final_revealed: bool
    challenge: int  # the round's challenge card on the table, -1 for none
    plays: list[int]  # per seat, the card submitted this round, -1 for none yet
    remaining: list[int]  # the round's cards still on the table once both plays are revealed
    moves: list[tuple[int, int, int]]  # (card, zone's seat or -1 for the Pyramid, by seat or -1)
    winner: int  # the round's winner, -1 before the reveal (or on a random placement)
    decided: str  # how the round was decided: "challenge", "closeness", "random" or ""
    sent_to: str  # where the winner sent their card: TO_PYRAMID, TO_ZONE or ""
    zones: list[list[int]]  # the scoring zones
    pyramid: list[int]  # slot 1 first
    gnome_slot: int  # 0-based slot of a revealed Gnome Revelation, -1 for none
    gained: list[int]  # cards gained by a swap: a special card among them has no effect
    swaps: list[tuple[str, int, int, int, int]]  # (special, seat, slot, card given, card taken)
    holder: int  # the seat deciding on a special card (ABDUCT, GNOME), else -1
    rows: list[list[int]]
    final_winner: int  # who scored the Final Challenge point, -1 for nobody (yet)
    log: list[dict[str, Any]]
    result: scoring.Score | None  # set once the game is over

    def clear_table(self) -> None:
        """Nothing played, won or sent: the table between rounds (and before the first)."""
        self.plays = [-1, -1]
        self.remaining = []
        self.moves = []
        self.winner = -1
        self.decided = ""
        self.sent_to = ""

    def clone(self) -> Self:
        cls = type(self)
        st = cls.__new__(cls)
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
        if self.phase is PLAY:
            places["table"] = [c for c in self.plays if c >= 0] + (
                [self.challenge] if self.challenge >= 0 else []
            )
        else:
            places["table"] = self.remaining
        return {k: list(v) for k, v in places.items()}

    # ---------------------------------------------------------------- JSON
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
            "phase": self.phase.value,
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
    def load(cls, data: Mapping[str, Any]) -> Self:
        """Every field of a state saved by ``to_dict`` but the score of a finished game, which is the
        rules' to work out (``ConspiranoicosState.from_dict`` does both); a malformed save raises
        ``ValueError``."""
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
            phase = str(data["phase"])
            if phase not in PHASES or not 1 <= st.round <= ROUNDS:
                raise ValueError(f"bad phase/round: {phase!r}/{st.round!r}")
            st.phase = Phase(phase)
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
        st.result = None
        return st
