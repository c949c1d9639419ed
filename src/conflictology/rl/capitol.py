"""The Capitol observation encoder: one seat's view → a fixed-length vector (layout in docs/rl.md).

Seats are relative (0 = the observer, then clockwise). Money is read as a fraction of $12M plus three
thresholds that change what a player can do: $3M (Hacker), $7M (Scandal), $10M (forced Scandal,
ruling 4). Claims are counted from the public log (who claimed which role, by action or by block), and
the bluffs caught so far: the only memory a bluffing game needs beyond the table.
"""

from __future__ import annotations

import numpy as np

from conflictology.engine import View
from conflictology.games.capitol import data
from conflictology.rl.encoding import Layout, ObservationEncoder, Writer, register_encoder, relative

ROLES = data.ROLES
ROLE_INDEX = {r: i for i, r in enumerate(ROLES)}
PHASES = (
    "turn", "challenge", "block", "block_challenge", "lose", "return", "exchange", "show", "investigate",
    "over",
)
PHASE_INDEX = {p: i for i, p in enumerate(PHASES)}
ACTIONS = data.TURN_ACTIONS
ACTION_INDEX = {a: i for i, a in enumerate(ACTIONS)}
MONEY_SCALE = 12.0
THRESHOLDS = (data.COST["hacker"], data.COST["scandal"], data.FORCED_SCANDAL_AT)
R = len(ROLES)


class CapitolEncoder(ObservationEncoder):
    game_name = "capitol"

    def __init__(self) -> None:
        self._layouts: dict[int, Layout] = {}

    def layout(self, players: int) -> Layout:
        cached = self._layouts.get(players)
        if cached is not None:
            return cached
        n = players
        layout = Layout([
            ("seat", n, "your own seat, absolute (one-hot): action targets in the table are absolute seats"),
            ("own_hidden", R, "your face-down cards: copies of each role (banker … police) / 3"),
            ("exchange_drawn", R, "cards you drew for an exchange still being chosen, per role / 3"),
            ("exchange_keep", 1, "how many cards the exchange keeps / 2"),
            ("shown", R, "the card shown in an investigation you are part of (one-hot role)"),
            ("known", n * R, "per relative seat: a role you know (Police) they still hold"),
            ("alive", n, "per relative seat: still in the game"),
            ("money", n, f"per relative seat: money / {MONEY_SCALE:g} (clipped)"),
            ("money_at_least", n * 3, "per relative seat: money ≥ $3M, ≥ $7M, ≥ $10M"),
            ("hidden_count", n, "per relative seat: face-down cards / 4"),
            ("revealed", n * R, "per relative seat: face-up (lost) copies of each role / 2"),
            ("turn", n, "whose turn it is (relative seat, one-hot)"),
            ("treasury", 1, f"the Treasury / {data.treasury_total(n)}"),
            ("deck", 1, "cards in the deck / the deck's (18; 24 or 30 with four or five copies of a role)"),
            ("phase", len(PHASES), "the phase (turn, challenge, block, block_challenge, lose, return, "
             "exchange, show, investigate, over), one-hot"),
            ("pending_action", len(ACTIONS), "the action being resolved (income … police_swap), one-hot"),
            ("pending_actor", n, "its actor (relative seat, one-hot)"),
            ("pending_target", n, "its target (relative seat, one-hot; none: all zero)"),
            ("pending_claim", R, "the role the action claims (one-hot)"),
            ("pending_challenger", n, "who challenged the action"),
            ("pending_blocker", n, "who blocked"),
            ("pending_block_claim", R, "the role the block claims"),
            ("awaiting", n, "seats whose answer is awaited now"),
            ("passed", n, "seats that passed in the current window"),
            ("losses", n, "seats that must still lose an influence (queued)"),
            ("claims", n * R, "per relative seat: public claims of each role so far (actions, blocks) / 3"),
            ("bluffs_caught", n, "per relative seat: bluffs caught by a challenge / 2"),
            ("options", 2 + len(data.STEAL_BLOCKER_CHOICES), "rule options: forced_scandal, "
             "anyone_challenges_block, steal_blockers (mafia, police, reporter)"),
        ])
        self._layouts[players] = layout
        return layout

    def encode(self, view: View, players: int) -> np.ndarray:
        you = view["you"]
        if not isinstance(you, int):
            raise ValueError("encode a seat's own view (view['you'] is a seat), not a spectator's")
        n = players
        w = Writer(self.layout(players))

        def rel(seat: object) -> int | None:
            if isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < n:
                return relative(seat, you, n)
            return None

        w.one_hot("seat", you)
        me = view["players"][you]
        for card in me["hidden"]:
            w.add("own_hidden", ROLE_INDEX[card], 1 / 3)
        pending = view.get("pending") or {}
        for card in pending.get("drawn", []):
            w.add("exchange_drawn", ROLE_INDEX[card], 1 / 3)
        if "drawn" in pending:
            w.set("exchange_keep", 0, pending.get("keep", 0) / 2)
        if pending.get("shown"):
            w.one_hot("shown", ROLE_INDEX.get(pending["shown"]))
        for k in view.get("known", []):
            r = rel(k.get("seat"))
            if r is not None and k.get("card") in ROLE_INDEX:
                w.set("known", r * R + ROLE_INDEX[k["card"]], 1.0)

        for p in view["players"]:
            r = rel(p["seat"])
            assert r is not None
            w.set("alive", r, 1.0 if p["alive"] else 0.0)
            money = int(p["money"])
            w.set("money", r, money / MONEY_SCALE)
            for i, threshold in enumerate(THRESHOLDS):
                w.set("money_at_least", r * 3 + i, 1.0 if money >= threshold else 0.0)
            hidden = p["hidden"]
            w.set("hidden_count", r, (len(hidden) if isinstance(hidden, list) else int(hidden)) / 4)
            for card in p["revealed"]:
                w.add("revealed", r * R + ROLE_INDEX[card], 0.5)

        w.one_hot("turn", rel(view.get("turn")))
        w.set("treasury", 0, view["treasury"] / data.treasury_total(len(view["players"])))
        w.set("deck", 0, view["deck"] / len(data.deck_in(view["options"])))
        w.one_hot("phase", PHASE_INDEX.get(str(view.get("phase"))))
        if pending:
            w.one_hot("pending_action", ACTION_INDEX.get(str(pending.get("action"))))
            w.one_hot("pending_actor", rel(pending.get("actor")))
            w.one_hot("pending_target", rel(pending.get("target")))
            w.one_hot("pending_claim", ROLE_INDEX.get(str(pending.get("claim"))))
            w.one_hot("pending_challenger", rel(pending.get("challenger")))
            w.one_hot("pending_blocker", rel(pending.get("blocker")))
            w.one_hot("pending_block_claim", ROLE_INDEX.get(str(pending.get("block_claim"))))
            for seat in pending.get("passed", []):
                w.one_hot("passed", rel(seat))
            for seat in pending.get("losses", []):
                r = rel(seat)
                if r is not None:
                    w.add("losses", r, 0.5)
        for seat in view.get("awaiting", []):
            w.one_hot("awaiting", rel(seat))

        for entry in view.get("log", []):
            kind = entry.get("type")
            if kind == "action" and entry.get("action") in data.CLAIM:
                r = rel(entry.get("seat"))
                if r is not None:
                    w.add("claims", r * R + ROLE_INDEX[data.CLAIM[entry["action"]]], 1 / 3)
            elif kind == "block" and entry.get("card") in ROLE_INDEX:
                r = rel(entry.get("seat"))
                if r is not None:
                    w.add("claims", r * R + ROLE_INDEX[entry["card"]], 1 / 3)
            elif kind == "bluff":
                r = rel(entry.get("seat"))
                if r is not None:
                    w.add("bluffs_caught", r, 0.5)

        options = view.get("options", {})
        w.set("options", 0, 1.0 if options.get("forced_scandal", True) else 0.0)
        w.set("options", 1, 1.0 if options.get("anyone_challenges_block", False) else 0.0)
        for i, role in enumerate(data.STEAL_BLOCKER_CHOICES):
            w.set("options", 2 + i, 1.0 if role in options.get("steal_blockers", []) else 0.0)
        return w.vector


register_encoder(CapitolEncoder())
