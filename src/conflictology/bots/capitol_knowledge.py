"""What the Capitol heuristic knows from its view (or from a sampled world's fields): each player's
money, cards and claims, the habits the log shows, and the chance that a player holds a role.

The rules of belief are described in :mod:`conflictology.bots.capitol` (the heuristic that decides
from them); this module only keeps the books: what is unseen (every role has three copies), what
each claim, challenge, reveal and exchange in the log tells, and each player's record.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from mypy_extensions import mypyc_attr

from conflictology.engine import View
from conflictology.games.capitol import views
from conflictology.games.capitol.data import (
    CLAIM,
    COST,
    ROLES,
    copies_in,
    roles_in,
)
from conflictology.games.capitol.state import CapitolState

# How much each role is worth holding (it decides what to lose, keep, return and show).
ROLE_VALUE: dict[str, float] = {
    "banker": 5.0,
    "hacker": 4.5,
    "judge": 4.0,
    "mafia": 3.5,
    "police": 2.5,
    "reporter": 2.5,
}
CARD = 1.0  # the value of one influence, in the units below
DOLLAR = 0.12  # the value of $1M
PRIOR_BLUFF = 0.3  # how often a claim is a bluff, before a player has shown their habits
PRIOR_CHALLENGE = 0.15  # how often a player challenges a claim, before they have shown their habits
# A role's bluffs, against a player's overall rate: a Hacker costs $3M and a caught one costs a card
# on top, so it is bluffed less (treason's AI: 5 % of its Hacker claims against 27 % of all).
# A block is bluffed more: it risks one card to save the action's cost, and a bluffed Judge on the
# last card has nothing to lose.
ROLE_BLUFF: dict[str, float] = {"hacker": 0.35, "block:banker": 1.5, "block:judge": 1.5}
PRIOR_BLOCK_CHALLENGE = 0.5  # how often a player challenges a block of their action, before they show it
PRIOR_AID_BLOCK = 0.15  # how often a player blocks another's Foreign Aid, before they show it

PERSONALITIES: dict[str, dict[str, float]] = {
    "heuristic": {"honesty": 0.7, "scepticism": 1.0, "aggression": 0.5},
    "heuristic-honest": {"honesty": 0.97, "scepticism": 1.0, "aggression": 0.4},
    "heuristic-bluffer": {"honesty": 0.3, "scepticism": 0.9, "aggression": 0.6},
    "heuristic-sceptic": {"honesty": 0.7, "scepticism": 1.8, "aggression": 0.5},
    "heuristic-aggressive": {"honesty": 0.55, "scepticism": 1.2, "aggression": 0.95},
}



@dataclass
class Player:
    seat: int
    money: int
    alive: bool
    hidden: int
    revealed: list[str]
    # role -> True while the player's last claim of it has not been disproved or washed out
    claims: dict[str, bool] = field(default_factory=dict)
    caught: set[str] = field(default_factory=set)  # roles this player was caught bluffing
    bluffs_caught: int = 0
    claims_checked: int = 0  # claims of theirs that were challenged (true or not)
    challenges: int = 0
    chances_to_challenge: int = 0
    habits: Habits = field(default_factory=lambda: Habits())


@dataclass
class Habits:
    """How a player answers, counted from the public log: what the heuristic learns of each table.

    ``block_challenges`` of ``blocks_faced``: blocks of their own actions they challenged (a bluffed
    Judge is safe against a player who never does); ``aid_blocks`` of ``aid_chances``: another's
    Foreign Aid they blocked (Foreign Aid is a poor action against a table that always blocks it);
    ``checked``: per role (a block's apart, ``block:<role>``) their claims challenged and how many were
    bluffs; ``attacks`` of ``turns``: turns spent stealing or hacking (the search's aggression dial).
    """

    block_challenges: int = 0
    blocks_faced: int = 0
    aid_blocks: int = 0
    aid_chances: int = 0
    # role -> [claims of it challenged, of which bluffs]
    checked: dict[str, list[int]] = field(default_factory=dict)
    turns: int = 0  # turns taken
    attacks: int = 0  # of which a Mafia steal or a Hacker

    def copy(self) -> Habits:
        return Habits(
            self.block_challenges,
            self.blocks_faced,
            self.aid_blocks,
            self.aid_chances,
            {r: c[:] for r, c in self.checked.items()},
            self.turns,
            self.attacks,
        )


class LogMemo:
    """What the public log told about every player after its first ``n`` entries (the log is the
    same in every seat's view). A rollout reads each entry once instead of the whole log per decision."""

    __slots__ = ("n", "players", "turn")

    def __init__(self) -> None:
        self.n = 0
        self.players: list[Player] | None = None
        self.turn: tuple[int, str, int] = (-1, "", -1)  # the turn being read: actor, action, blocker

    def copy(self) -> LogMemo:
        """A memo that reads on from here without touching this one (every rollout of a decision
        starts from the decision's own log, read once)."""
        c = LogMemo()
        c.n = self.n
        c.turn = self.turn
        if self.players is not None:
            c.players = [
                Player(
                    p.seat,
                    p.money,
                    p.alive,
                    p.hidden,
                    p.revealed,
                    dict(p.claims),
                    set(p.caught),
                    p.bluffs_caught,
                    p.claims_checked,
                    p.challenges,
                    p.chances_to_challenge,
                    p.habits.copy(),
                )
                for p in self.players
            ]
        return c


# Not a native class when compiled (conflictology.native): ``Knowledge.__new__`` makes one without
# ``__init__``, which mypyc's native classes do not allow.
@mypyc_attr(native_class=False)
class Knowledge:
    """What the bot's seat knows, rebuilt from its view on every decision (the bot keeps no state)."""

    def __init__(self, view: View, memo: LogMemo | None = None) -> None:
        self.me: int = view["you"]
        players = view["players"]
        self.n = len(players)
        self.hand: list[str] = list(players[self.me]["hidden"])
        if memo is not None and memo.players is not None:
            # A rollout's memo: the players it read the log into, brought up to date in place (the
            # log only moves forward there, so nothing needs copying).
            self.players = memo.players
            for q, p in zip(self.players, players, strict=True):
                q.money = int(p["money"])
                q.alive = bool(p["alive"])
                q.hidden = len(p["hidden"]) if isinstance(p["hidden"], list) else int(p["hidden"])
                q.revealed = list(p["revealed"])
        else:
            self.players = [
                Player(
                    seat=i,
                    money=int(p["money"]),
                    alive=bool(p["alive"]),
                    hidden=len(p["hidden"]) if isinstance(p["hidden"], list) else int(p["hidden"]),
                    revealed=list(p["revealed"]),
                )
                for i, p in enumerate(players)
            ]
        self.deck: int = int(view.get("deck", 0))
        options = view.get("options") or {}
        self.copies: int = copies_in(options)  # big tables: more copies of each role
        self.roles: tuple[str, ...] = roles_in(options)  # a small variant: fewer roles
        # The roles that may block a Mafia steal at this table (ruling 6, the steal_blockers option).
        steal = options.get("steal_blockers", ())
        self.steal_blockers: tuple[str, ...] = tuple(r for r in steal if r in ROLES)
        # Cards this seat saw as the Police player and that are still in that hand.
        self.known: dict[int, list[str]] = {}
        for k in view.get("known") or []:
            self.known.setdefault(int(k["seat"]), []).append(str(k["card"]))
        self._finish(view.get("pending") or {}, view.get("log") or [], memo)

    @classmethod
    def of_state(cls, state: CapitolState, seat: int, memo: LogMemo) -> Knowledge:
        """What ``seat`` knows in a (sampled) state, read from the state's own fields instead of a
        rendered view: the same knowledge as ``Knowledge(state.view(seat)'s newer log, memo)``
        (tested), at a fraction of the cost, for the search's rollouts. It reads the seat's own hand,
        the others' card counts, the public fields, what the seat saw as Police, the pending phase
        as the seat's view shows it, and the log entries the memo has not read."""
        k = cls.__new__(cls)
        k.me = seat
        k.n = state.n
        k.copies = copies_in(state.options)
        k.roles = state.opt_roles
        k.steal_blockers = state.opt_steal
        k.hand = list(state.hidden[seat])
        players = memo.players
        if players is None:
            players = memo.players = [
                Player(seat=i, money=0, alive=True, hidden=0, revealed=[]) for i in range(state.n)
            ]
        k.players = players
        for q, money, alive, hand, revealed in zip(
            players, state.money, state.alive, state.hidden, state.revealed, strict=True
        ):
            q.money = money
            q.alive = alive
            q.hidden = len(hand)
            q.revealed = revealed  # read only
        k.deck = len(state.deck)
        k.known = {}
        for by, target, card in state.known:
            if by == seat:
                k.known.setdefault(target, []).append(card)
        unread = [views.entry_fields(e) for e in state.log[memo.n :]]
        k._finish(views.pending_of(state, seat) or {}, unread, memo)
        return k

    def _finish(self, pending: dict[str, Any], log: list[Any], memo: LogMemo | None) -> None:
        """The unseen cards, the pending phase and the log: the same whatever the knowledge was read from."""
        # One pass over the cards in sight (this runs at every decision of every rollout).
        if len(self.roles) == len(ROLES):
            self.unseen: dict[str, int] = dict.fromkeys(ROLES, self.copies)
        else:  # a small variant: a role out of play has no copy to be unseen
            self.unseen = {r: self.copies if r in self.roles else 0 for r in ROLES}
        unseen = self.unseen
        for p in self.players:
            for role in p.revealed:
                unseen[role] -= 1
        for role in self.hand:
            unseen[role] -= 1
        for cards in self.known.values():
            for role in cards:
                unseen[role] -= 1
        for role, left in unseen.items():
            if left < 0:
                unseen[role] = 0
        self.pool = sum(self.unseen.values())
        self.pending: dict[str, Any] = pending
        self.shown: str | None = _find_shown(pending)
        # The turn the log is at (actor, action, blocker): who may answer what.
        self.turn: tuple[int, str, int] = (-1, "", -1)
        if memo is None:
            self._read_log(log)
            return
        self.turn = memo.turn
        # ``log`` holds the entries from ``memo.n`` on (see CapitolSearch.actor).
        self._read_log(log)
        memo.n += len(log)
        memo.turn = self.turn
        memo.players = self.players

    # -- the public log -------------------------------------------------------------------------
    def _read_log(self, log: Iterable[Any]) -> None:
        for event in log:
            if not isinstance(event, dict):
                continue
            kind = str(event.get("type") or event.get("event") or "")
            seat = _seat_of(event)
            role = _role_of(event)
            if kind in ("action", "announce", "claim") and seat is not None:
                action = str(event.get("action", ""))
                self.turn = (seat, action, -1)
                habits = self.players[seat].habits
                habits.turns += 1
                if action in ("mafia", "hacker"):
                    habits.attacks += 1
                claimed = CLAIM.get(action, role)
                if claimed:
                    self._claimed(seat, claimed)
                elif action == "foreign_aid":
                    for p in self.players:
                        if p.alive and p.seat != seat:
                            p.habits.aid_chances += 1
            elif kind == "block" and seat is not None and role:
                self._claimed(seat, role)
                actor, action, _ = self.turn
                self.turn = (actor, action, seat)
                if 0 <= actor < self.n:
                    self.players[actor].habits.blocks_faced += 1
                if action == "foreign_aid":
                    self.players[seat].habits.aid_blocks += 1
            elif kind == "challenge" and seat is not None:
                self.players[seat].challenges += 1
                if event.get("challenged") == self.turn[2] >= 0:
                    self.players[seat].habits.block_challenges += 1
            elif kind in ("reveal", "challenge_failed", "proved") and seat is not None:
                # A true claim: the card was shown, went back into the deck and was replaced (ruling 9).
                p = self.players[seat]
                p.claims_checked += 1
                if role:
                    p.claims.pop(role, None)
                    p.habits.checked.setdefault(self._claim_key(seat, role), [0, 0])[0] += 1
            elif kind in ("bluff", "caught", "challenge_succeeded") and seat is not None:
                p = self.players[seat]
                p.claims_checked += 1
                p.bluffs_caught += 1
                if role:
                    c = p.habits.checked.setdefault(self._claim_key(seat, role), [0, 0])
                    c[0] += 1
                    c[1] += 1
                    p.caught.add(role)
                    p.claims.pop(role, None)
            elif kind in ("exchange", "return") and seat is not None:
                self.players[seat].claims.clear()  # a refreshed hand: old claims tell little
            elif kind == "force_redraw" and isinstance(event.get("target"), int):
                self.players[event["target"]].claims.clear()

    def _claim_key(self, seat: int, role: str) -> str:
        """A block's claims are recorded apart from an action's: players bluff them differently."""
        return f"block:{role}" if seat == self.turn[2] else role

    def _claimed(self, seat: int, role: str) -> None:
        self.players[seat].claims[role] = True
        for p in self.players:
            if p.seat != seat and p.alive:
                p.chances_to_challenge += 1

    # -- beliefs --------------------------------------------------------------------------------
    def bluff_rate(self, seat: int, role: str | None = None, block: bool = False) -> float:
        """How often ``seat``'s claims (of ``role``) are bluffs: their caught bluffs among their claims
        challenged, the role's own record first (a Hacker, which costs $3M, is bluffed less)."""
        p = self.players[seat]
        overall = (p.bluffs_caught + 2 * PRIOR_BLUFF) / (p.claims_checked + 2)
        if role is None:
            return overall
        key = f"block:{role}" if block else role
        checked, caught = p.habits.checked.get(key, (0, 0))
        prior = min(0.9, overall * ROLE_BLUFF.get(key, 1.0))
        return (caught + 2 * prior) / (checked + 2)

    def challenge_rate(self, seat: int) -> float:
        p = self.players[seat]
        return (p.challenges + 4 * PRIOR_CHALLENGE) / (p.chances_to_challenge + 4)

    def block_challenge_rate(self, seat: int) -> float:
        """How often ``seat`` challenges a block of its own action."""
        h = self.players[seat].habits
        return (h.block_challenges + 2 * PRIOR_BLOCK_CHALLENGE) / (h.blocks_faced + 2)

    def aid_block_rate(self, seat: int) -> float:
        """How often ``seat`` blocks another's Foreign Aid (claiming Banker)."""
        h = self.players[seat].habits
        return (h.aid_blocks + 2 * PRIOR_AID_BLOCK) / (h.aid_chances + 2)

    def p_holds(self, seat: int, role: str, claimed: bool = False, block: bool = False) -> float:
        """The chance that ``seat`` holds ``role`` now, given the unseen cards and its claims."""
        if seat == self.me:
            return 1.0 if role in self.hand else 0.0
        p = self.players[seat]
        known = self.known.get(seat, [])
        if role in known:
            return 1.0
        u = self.unseen[role]
        h = min(p.hidden - len(known), self.pool)
        if u == 0 or h <= 0:
            return 0.0
        base = _p_any(self.pool, u, h)
        if role in p.caught:
            base *= 0.5
        if claimed or p.claims.get(role):
            b = max(0.03, self.bluff_rate(seat, role, block))
            base = base / (base + (1.0 - base) * b)
        return base

    def p_anyone_challenges(self, actor: int) -> float:
        stay = 1.0
        for p in self.living_others(actor):
            stay *= 1.0 - self.challenge_rate(p.seat)
        return 1.0 - stay

    def living_others(self, seat: int | None = None) -> list[Player]:
        seat = self.me if seat is None else seat
        return [p for p in self.players if p.alive and p.seat != seat]

    def threat(self, seat: int) -> float:
        """How dangerous a player is: influence first, then money and the strong roles they claim."""
        p = self.players[seat]
        t = 3.0 * p.hidden + 0.4 * p.money
        if p.money >= COST["scandal"]:
            t += 2.0
        t += 1.0 * self.p_holds(seat, "hacker") + 0.6 * self.p_holds(seat, "banker")
        return t


def attack_rate(h: Habits) -> float:
    """The share of a player's turns spent stealing or hacking (a prior of 0.3 over two turns)."""
    return (h.attacks + 2 * 0.3) / (h.turns + 2)


def _comb(n: int, k: int) -> int:
    return math.comb(n, k) if 0 <= k <= n else 0


@functools.lru_cache(maxsize=4096)
def _p_any(pool: int, copies: int, cards: int) -> float:
    """The chance that ``cards`` drawn from ``pool`` unseen cards include one of ``copies``."""
    return 1.0 - _comb(pool - copies, cards) / max(1, _comb(pool, cards))


def _seat_of(event: dict[str, Any]) -> int | None:
    for key in ("seat", "actor", "player", "by"):
        value = event.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _role_of(event: dict[str, Any]) -> str | None:
    for key in ("card", "role", "claim"):
        value = event.get(key)
        if isinstance(value, str) and value in ROLES:
            return value
    return None


def _find_shown(pending: dict[str, Any]) -> str | None:
    for key in ("shown", "card", "seen"):
        value = pending.get(key)
        if isinstance(value, str) and value in ROLES:
            return value
    return None
