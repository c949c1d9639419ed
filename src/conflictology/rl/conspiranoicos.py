"""The Conspiranoicos observation encoder: one seat's view → a fixed-length vector (docs/rl.md).

Cards are one-hot (or multi-hot, for sets) over the deck's catalogue as the view lists it
(``view["cards"]``, 18 cards), so the vector is exact and the same card is the same position
everywhere. Seats are relative: "mine" and "the opponent's". What the seat may not know is absent
from its view and therefore from the vector: the opponent's hand is encoded by its backs, a hidden
play by its back, the opponent's row by its length until both rows are complete.
"""

from __future__ import annotations

import numpy as np

from conflictology.engine import View
from conflictology.games.conspiranoicos.cards import DECK_SIZE, FACTIONS
from conflictology.games.conspiranoicos.options import PYRAMID_SLOTS
from conflictology.games.conspiranoicos.state import PHASES, PILE, ROUNDS
from conflictology.rl.encoding import Layout, ObservationEncoder, Writer, register_encoder

C = DECK_SIZE
F = len(FACTIONS)
FACTION_INDEX = {f: i for i, f in enumerate(FACTIONS)}
PHASE_INDEX = {p: i for i, p in enumerate(PHASES)}
SLOT_FIELDS = 1 + F + 1 + C + F  # present, back, face up, the card (when known), the symbol it shows
CHALLENGE_PILE = PILE - 1  # five challenge cards, the sixth set aside as the Final Challenge


class ConspiranoicosEncoder(ObservationEncoder):
    game_name = "conspiranoicos"

    def __init__(self) -> None:
        self._layout = Layout([
            ("my_hand", C, "cards in your hand (multi-hot over the deck's cards)"),
            ("my_zone", C, "cards in your scoring zone"),
            ("my_row", C, "your row: (position + 1) / 6 for each card placed, 0 elsewhere"),
            ("my_play", C, "the card you submitted this round"),
            ("my_draw", 1, "cards left in your draw deck / 6"),
            ("opp_hand_backs", F, "the backs in the opponent's hand, per faction (G, I, A, R) / 6"),
            ("opp_zone", C, "cards in the opponent's scoring zone"),
            ("opp_evidence", C, "Sort Evidence: the opponent's cards (public, order unknown)"),
            ("opp_row", C, "the opponent's row, (position + 1) / 6, once both rows are complete"),
            ("opp_row_count", 1, "cards the opponent has placed in their row / 6"),
            ("opp_play_back", F, "the back of the opponent's submitted play (before the reveal)"),
            ("opp_play", C, "the opponent's play once revealed"),
            ("opp_draw", 1, "cards left in the opponent's draw deck / 6"),
            ("challenge", C, "this round's challenge card"),
            ("final_challenge", C, "the Final Challenge card once revealed"),
            ("remaining", C, "cards still to be taken this round (after the reveal)"),
            ("pyramid", PYRAMID_SLOTS * SLOT_FIELDS, "per slot 1–6: filled, back (4), face up, the card "
             "(18, known to both players since it was played face up), the symbol it shows in scoring (4)"),
            ("pyramid_t", 3 * F, "T: the three symbols of the bottom row, in order (3 × one-hot)"),
            ("pyramid_s", F, "S: the symbol shown on the Pyramid"),
            ("gained", C, "special cards gained by a swap (they have no effect)"),
            ("round", ROUNDS, "the round (1–6), one-hot"),
            ("phase", len(PHASES), "the phase (" + ", ".join(PHASES) + "), one-hot"),
            ("challenge_deck", 1, "challenge cards left / 5"),
            ("submitted", 2, "this round's plays submitted: yours, the opponent's"),
            ("round_winner", 2, "who won this round's challenge: you, the opponent"),
            ("holder", 2, "whose special card is being resolved: you, the opponent"),
            ("slots", PYRAMID_SLOTS, "the Pyramid slots the pending swap may take"),
            ("final_winner", 2, "who won the Final Challenge: you, the opponent"),
            ("awaiting", 2, "whose decision is awaited: you, the opponent"),
        ])

    def layout(self, players: int) -> Layout:
        if players != 2:
            raise ValueError(f"Conspiranoicos is for exactly 2 players, got {players}")
        return self._layout

    def encode(self, view: View, players: int) -> np.ndarray:
        you = view["you"]
        if you not in (0, 1):
            raise ValueError("encode a seat's own view (view['you'] is 0 or 1), not a spectator's")
        opp = 1 - you
        w = Writer(self.layout(players))
        index = {card["id"]: i for i, card in enumerate(view["cards"])}

        def cards(segment: str, ids: object) -> None:
            if isinstance(ids, list):
                for cid in ids:
                    if cid in index:
                        w.set(segment, index[cid], 1.0)

        def row(segment: str, ids: object) -> None:
            if isinstance(ids, list):
                for pos, cid in enumerate(ids):
                    w.set(segment, index[cid], (pos + 1) / PYRAMID_SLOTS)

        def who(segment: str, seat: object) -> None:
            if seat == you:
                w.set(segment, 0, 1.0)
            elif seat == opp:
                w.set(segment, 1, 1.0)

        me, them = view["players"][you], view["players"][opp]
        cards("my_hand", me["hand"])
        cards("my_zone", me["zone"])
        row("my_row", me["row"])
        w.set("my_draw", 0, me["draw"] / PILE)
        # While rows are built the opponent's hand is only a count (its cards are in opp_evidence).
        for back in them["hand"] if isinstance(them["hand"], list) else ():
            if back in FACTION_INDEX:
                w.add("opp_hand_backs", FACTION_INDEX[back], 1 / PILE)
        cards("opp_zone", them["zone"])
        cards("opp_evidence", them.get("evidence"))
        if isinstance(them["row"], list):
            row("opp_row", them["row"])
            w.set("opp_row_count", 0, len(them["row"]) / PYRAMID_SLOTS)
        else:
            w.set("opp_row_count", 0, int(them["row"]) / PYRAMID_SLOTS)
        w.set("opp_draw", 0, them["draw"] / PILE)

        table = view["table"]
        plays = table["plays"]
        cards("my_play", [plays[you]] if plays[you] is not None else [])
        theirs = plays[opp]
        if theirs in index:
            w.set("opp_play", index[theirs], 1.0)
        elif theirs in FACTION_INDEX:
            w.set("opp_play_back", FACTION_INDEX[theirs], 1.0)
        cards("remaining", table["remaining"])
        who("round_winner", table["winner"])
        if view["challenge"] in index:
            w.set("challenge", index[view["challenge"]], 1.0)
        if view.get("final_challenge") in index:
            w.set("final_challenge", index[view["final_challenge"]], 1.0)

        for k, slot in enumerate(view["pyramid"]):
            if slot is None:
                continue
            base = k * SLOT_FIELDS
            w.set("pyramid", base, 1.0)
            w.set("pyramid", base + 1 + FACTION_INDEX[slot["back"]], 1.0)
            w.set("pyramid", base + 1 + F, 1.0 if slot["face_up"] else 0.0)
            known = slot.get("card") or slot.get("seen")
            if known in index:
                w.set("pyramid", base + 2 + F + index[known], 1.0)
            if slot.get("shows") in FACTION_INDEX:
                w.set("pyramid", base + 2 + F + C + FACTION_INDEX[slot["shows"]], 1.0)
        symbols = view.get("pyramid_symbols")
        if symbols:
            for i, symbol in enumerate(symbols.get("T") or []):
                if symbol in FACTION_INDEX:
                    w.set("pyramid_t", i * F + FACTION_INDEX[symbol], 1.0)
            if symbols.get("S") in FACTION_INDEX:
                w.set("pyramid_s", FACTION_INDEX[symbols["S"]], 1.0)
        cards("gained", view.get("gained"))

        w.one_hot("round", min(ROUNDS, max(1, int(view["round"]))) - 1)
        w.one_hot("phase", PHASE_INDEX.get(str(view["phase"])))
        w.set("challenge_deck", 0, view.get("challenge_deck", 0) / CHALLENGE_PILE)
        who("final_winner", view.get("final_winner"))
        pending = view.get("pending") or {}
        submitted = pending.get("submitted")
        if isinstance(submitted, list):
            w.set("submitted", 0, 1.0 if submitted[you] else 0.0)
            w.set("submitted", 1, 1.0 if submitted[opp] else 0.0)
        who("holder", pending.get("holder"))
        for s in pending.get("slots") or []:
            if isinstance(s, int) and 1 <= s <= PYRAMID_SLOTS:
                w.set("slots", s - 1, 1.0)
        for seat in pending.get("awaiting") or []:
            who("awaiting", seat)
        return w.vector

register_encoder(ConspiranoicosEncoder())
