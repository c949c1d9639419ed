"""The Capitol heuristic bot: card counting, claim tracking, and a personality.

It decides from its view alone:

* **What is unseen.** Every role has three copies; those face up and those in its own hand are
  accounted for, the rest are somewhere among the other hands and the deck. The chance that a player
  with ``h`` face-down cards holds a role is hypergeometric over the unseen cards.
* **What the log says.** Each claim (an action or a block) raises the belief that the claimant holds
  the role (Bayes, with the claimant's own bluff rate as the likelihood of a claim without the card);
  a claim caught as a bluff lowers it; a revealed card goes back into the deck (ruling 9) and an
  exchange (Reporter, Police swap, a returned card after a block, a forced redraw) refreshes the hand,
  so both wipe what that player's claims told. Per player it counts challenges made and bluffs caught,
  so it learns who challenges at random and who bluffs a lot, and (``Habits``) which roles they bluff
  (an action's claims apart from a block's), how often they challenge a block of their own action and
  how often they block another's Foreign Aid.
* **Decisions.** Never bluffs a role whose copies are all accounted for; challenges a claim whose role
  is fully accounted for, or when the expected gain of a challenge beats its cost (a card, or two for a
  target who challenges a true Hacker, ruling 11); takes Foreign Aid when no Banker block is likely;
  blocks with the roles it holds and bluffs a block mostly when its last card is at stake; targets the
  biggest threat; keeps its strongest roles in an exchange and loses its least useful card.

Personalities (params): ``honesty`` (0–1: how rarely it bluffs), ``scepticism`` (how readily it
challenges; 1 is neutral), ``aggression`` (0–1: how eagerly it attacks rather than builds money).
``noise`` (0–1) is the share of decisions taken at random (the ``easy`` level).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from conflictology.bots import Bot, BotFactory
from conflictology.bots.capitol_rules import ClaimTrace, RulePlayer
from conflictology.bots.capitol_value import win_shares
from conflictology.bots.ismcts import ISMCTSBot, SearchPolicy, rewards
from conflictology.bots.outside import OutsideTreason
from conflictology.engine import Action, Game, GameState, Rng, View
from conflictology.games.capitol import views
from conflictology.games.capitol.data import (
    BLOCK,
    BLOCK_CHALLENGE,
    CHALLENGE,
    CLAIM,
    COPIES,
    COST,
    EXCHANGE,
    INVESTIGATE,
    LOSE,
    RETURN,
    ROLES,
    SHOW,
    TURN,
)
from conflictology.games.capitol.game import CapitolGame
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
        self.unseen: dict[str, int] = dict.fromkeys(ROLES, COPIES)
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


def _attack_rate(h: Habits) -> float:
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


class CapitolHeuristic(Bot):
    """See the module docstring."""

    name = "heuristic"

    def __init__(self, game: Game, seat: int, seed: int | None = None, **params: Any) -> None:
        personality = dict(PERSONALITIES["heuristic"])
        base = params.pop("personality", None)
        if base is not None:
            if base not in PERSONALITIES:
                raise ValueError(f"unknown personality {base!r}; known: {', '.join(PERSONALITIES)}")
            personality.update(PERSONALITIES[base])
        for key in ("honesty", "scepticism", "aggression"):
            if key in params:
                personality[key] = float(params.pop(key))
        self.noise = float(params.pop("noise", 0.0))
        super().__init__(game, seat, seed, **params)
        self.honesty = personality["honesty"]
        self.scepticism = personality["scepticism"]
        self.aggression = personality["aggression"]

    # -- entry point ------------------------------------------------------------------------------
    def act(self, view: View, legal: list[Action], memo: LogMemo | None = None) -> Action:
        if len(legal) == 1:
            return legal[0]
        if self.noise and self.rng.random() < self.noise:
            return self.rng.choice(legal)
        return self.decide(Knowledge(view, memo), legal)

    def decide(self, k: Knowledge, legal: list[Action]) -> Action:
        """The choice among ``legal`` (two or more) from what the seat knows."""
        types = {a["type"] for a in legal}
        if "lose" in types:
            return self._least_valuable(k, legal, "card")
        if "return" in types:
            return self._least_valuable(k, legal, "card")
        if "show" in types:
            return self._least_valuable(k, legal, "card")
        if "keep" in types:
            return self._keep(k, legal)
        if "let_keep" in types or "force_redraw" in types:
            return self._investigated(k, legal)
        if "block" in types:
            return self._block(k, legal)
        if "challenge" in types:
            return self._challenge(k, legal)
        if types & set(CLAIM) or types & {"income", "foreign_aid", "scandal"}:
            return self._turn(k, legal)
        return legal[0]  # a decision this bot does not know: the engine's first listed action

    # -- card values ----------------------------------------------------------------------------
    def _value(self, k: Knowledge, role: str, hand: list[str]) -> float:
        v = ROLE_VALUE[role]
        if hand.count(role) > 1:
            v -= 1.5  # a second copy adds little
        if role == "judge" and not any(p.money >= COST["hacker"] for p in k.living_others()):
            v -= 1.0  # the Judge matters when someone can afford a Hacker
        if role == "banker" and len(k.living_others()) == 1:
            v += 0.3
        return v

    def _least_valuable(self, k: Knowledge, legal: list[Action], key: str) -> Action:
        hand = k.hand
        return min(legal, key=lambda a: (self._value(k, a[key], hand), a[key]))

    def _keep(self, k: Knowledge, legal: list[Action]) -> Action:
        def score(a: Action) -> tuple[float, str]:
            cards = list(a["cards"])
            return (sum(self._value(k, c, cards) for c in cards), ",".join(sorted(cards)))

        return max(legal, key=score)

    def _investigated(self, k: Knowledge, legal: list[Action]) -> Action:
        by_type = {a["type"]: a for a in legal}
        shown = k.shown
        strong = shown is not None and ROLE_VALUE[shown] >= ROLE_VALUE["judge"]
        if strong and "force_redraw" in by_type:
            return by_type["force_redraw"]
        return by_type.get("let_keep", legal[0])

    # -- targets --------------------------------------------------------------------------------
    def _best_target(self, k: Knowledge, actions: list[Action], kind: str) -> Action:
        def score(a: Action) -> float:
            t = a["target"]
            s = k.threat(t)
            p = k.players[t]
            if kind == "hacker":
                s -= 4.0 * k.p_holds(t, "judge")
                if p.hidden == 1:
                    s += 2.0  # an elimination
            elif kind == "mafia":
                s = min(2, p.money) * 2.0 + 0.2 * k.threat(t)
                for role in self._steal_blockers(k):
                    s -= 3.0 * k.p_holds(t, role)
            return s

        return max(actions, key=lambda a: (score(a), -a["target"]))

    def _steal_blockers(self, k: Knowledge) -> tuple[str, ...]:
        pending = k.pending
        roles = pending.get("steal_blockers")
        if isinstance(roles, list):
            return tuple(r for r in roles if r in ROLES)
        return ()

    # -- own turn -------------------------------------------------------------------------------
    def _turn(self, k: Knowledge, legal: list[Action]) -> Action:
        by_type: dict[str, list[Action]] = {}
        for a in legal:
            by_type.setdefault(a["type"], []).append(a)
        me = k.players[k.me]
        hand = k.hand
        if set(by_type) == {"scandal"}:
            return self._best_target(k, by_type["scandal"], "scandal")
        if "scandal" in by_type:
            return self._best_target(k, by_type["scandal"], "scandal")
        p_chal = k.p_anyone_challenges(k.me)
        # 1. Attack with a Hacker it holds (or bluffs, if that looks safe enough).
        if "hacker" in by_type:
            target = self._best_target(k, by_type["hacker"], "hacker")
            if "hacker" in hand:
                judge = k.p_holds(target["target"], "judge")
                if judge < 0.6 or self.rng.random() < self.aggression:
                    return target
            else:
                kill = k.players[target["target"]].hidden == 1
                if self._dare_bluff(k, "hacker", p_chal, stakes=1.5 if kill else 1.0):
                    return target
        # 2. Face to face, a steal with a Mafia it holds: $2M taken is a $4M swing, more than a
        # Banker's $3M (against treason's AI: 0.52 → 0.57 of two-player games).
        # Against another Mafia, only half the time: two Mafias taking $2M back and forth would never
        # reach a Scandal.
        if len(k.living_others()) == 1 and "mafia" in by_type and "mafia" in hand:
            target = self._best_target(k, by_type["mafia"], "mafia")
            other = k.players[target["target"]]
            if other.money >= 2 and (not other.claims.get("mafia") or self.rng.random() < 0.5):
                return target
        # 3. Money with a Banker it holds.
        if "banker" in by_type and "banker" in hand:
            return by_type["banker"][0]
        if "mafia" in by_type and "mafia" in hand:
            target = self._best_target(k, by_type["mafia"], "mafia")
            # Two Mafias stealing from each other is a stalemate: steal only some of the time, more
            # when the $2M bring a Scandal within reach.
            reach = me.money + 2 >= COST["scandal"] > me.money
            eager = 0.35 + 0.4 * self.aggression + (0.3 if reach else 0.0)
            if k.players[target["target"]].money >= 2 and self.rng.random() < eager:
                return target
        # 4. A weak hand: refresh it.
        strong = {"banker", "hacker", "mafia"}
        if not strong & set(hand):
            if "reporter" in by_type and "reporter" in hand:
                return by_type["reporter"][0]
            if "police_swap" in by_type and "police" in hand:
                return by_type["police_swap"][0]
        # 5. Bluff a Banker if the table lets it.
        if "banker" in by_type and self._dare_bluff(k, "banker", p_chal, stakes=1):
            return by_type["banker"][0]
        # 6. Foreign Aid when no Banker block is likely.
        if "foreign_aid" in by_type:
            p_block = 1.0
            for p in k.living_others():
                held = k.p_holds(p.seat, "banker") * (0.9 if p.claims.get("banker") else 0.6)
                # A player who blocks Foreign Aid whatever they hold (their record) blocks it again.
                p_block *= 1.0 - max(held, k.aid_block_rate(p.seat) if p.habits.aid_chances else 0.0)
            p_block = 1.0 - p_block
            if p_block < 0.45:
                return by_type["foreign_aid"][0]
        if "mafia" in by_type and "mafia" not in hand and self._dare_bluff(k, "mafia", p_chal, stakes=0.5):
            target = self._best_target(k, by_type["mafia"], "mafia")
            if k.players[target["target"]].money >= 2:
                return target
        if "reporter" in by_type and "reporter" in hand and me.money < 3:
            return by_type["reporter"][0]
        return by_type.get("income", legal)[0]

    def _dare_bluff(self, k: Knowledge, role: str, p_chal: float, stakes: float) -> bool:
        """Bluff ``role``? Never when every copy is accounted for; otherwise the personality's
        appetite, scaled down by how likely the table is to challenge and by the copies left."""
        if k.unseen[role] == 0 or role in k.players[k.me].caught:
            return False
        others = k.living_others()
        # The last copy unseen: a sharp player will suspect it.
        scarcity = k.unseen[role] / COPIES
        appetite = (1.0 - self.honesty) * (0.5 + 0.5 * scarcity) * stakes
        if k.players[k.me].claims.get(role):
            appetite *= 1.3  # keeping to one's story is more convincing
        risk = p_chal if len(others) > 1 else p_chal * 1.1
        if k.players[k.me].hidden == 1:
            risk *= 1.5  # a caught bluff would end the game
        return self.rng.random() < appetite * max(0.0, 1.0 - 2.0 * risk)

    # -- responses ------------------------------------------------------------------------------
    def _pending_claim(self, k: Knowledge) -> tuple[int | None, str | None, str, int | None]:
        """(claimant, role claimed, the action, its target) of the claim now open to challenge."""
        pend = k.pending
        action = str(pend.get("action") or "")
        target = pend.get("target")
        target = target if isinstance(target, int) else None
        blocker = pend.get("blocker")
        if pend.get("phase") == "block_challenge" and isinstance(blocker, int):
            return blocker, pend.get("block_claim"), action, target
        actor = pend.get("actor")
        return (actor if isinstance(actor, int) else None), pend.get("claim"), action, target

    def _challenge(self, k: Knowledge, legal: list[Action]) -> Action:
        by_type = {a["type"]: a for a in legal}
        claimant, role, action, target = self._pending_claim(k)
        if claimant is None or role is None or claimant == k.me:
            return by_type.get("pass", legal[0])
        if k.unseen[role] == 0:
            return by_type["challenge"]  # every copy is accounted for: a certain bluff
        is_block = k.pending.get("blocker") == claimant and claimant != k.pending.get("actor")
        p_true = k.p_holds(claimant, role, claimed=True, block=is_block)
        me = k.players[k.me]
        # What a caught bluff would save or win, and what a wrong challenge would cost (in cards).
        gain = CARD  # the bluffer loses an influence
        cost = CARD
        if is_block:
            # Our own action was blocked: a won challenge lets it go through.
            gain += self._action_worth(k, action, target, mine=True)
        else:
            gain += self._action_worth(k, action, target, mine=False)
            if action == "hacker" and target == k.me:
                if "judge" in k.hand:
                    return by_type.get("pass", legal[0])  # a real Judge blocks it for free
                # Passing keeps the Judge window: a bluffed Judge is lost only if the hacker
                # challenges it (two cards then, ruling 11), and some players hardly ever do.
                p_bc = k.block_challenge_rate(claimant)
                judge = k.unseen["judge"] > 0 and "judge" not in me.caught
                if me.hidden == 1:
                    # The last card: a challenge survives a bluffed Hacker, a bluffed Judge survives
                    # an unchallenged block. Whichever is likelier.
                    if judge and p_bc * self.scepticism < p_true:
                        return by_type.get("pass", legal[0])
                    return by_type["challenge"]
                # Two cards: a wrong challenge costs both (ruling 11); passing costs one, or two
                # with the chance that a bluffed Judge is called.
                passing = min(CARD, 2 * CARD * p_bc) if judge else CARD
                ev = (1.0 - p_true) * (CARD + passing) * self.scepticism - p_true * (2 * CARD - passing)
                return by_type["challenge"] if ev > 0 else by_type.get("pass", legal[0])
        if cost >= me.hidden * CARD and not (action == "hacker" and target == k.me):
            cost = 3 * CARD  # a wrong challenge would eliminate us
        # Someone else may challenge for us: share the benefit when we are not the one hurt.
        bystander = not is_block and target != k.me and len(k.living_others()) > 1
        ev = (1.0 - p_true) * gain * self.scepticism - p_true * cost
        if bystander:
            ev -= 0.4
        return by_type["challenge"] if ev > 0 else by_type.get("pass", legal[0])

    def _action_worth(self, k: Knowledge, action: str, target: int | None, mine: bool) -> float:
        """How much the action matters to us (gained if ours goes through, saved if theirs fails)."""
        if action == "hacker":
            if mine:
                return CARD * 1.5
            return CARD * (1.5 if target == k.me else 0.4)
        if action == "banker":
            return 3 * DOLLAR
        if action == "mafia":
            return 2 * DOLLAR * (2.0 if target == k.me or mine else 0.5)
        if action == "foreign_aid":
            return 2 * DOLLAR
        return 0.15

    def _block(self, k: Knowledge, legal: list[Action]) -> Action:
        by_card = {a["card"]: a for a in legal if a["type"] == "block"}
        passing = next((a for a in legal if a["type"] == "pass"), legal[0])
        held = [c for c in by_card if c in k.hand]
        if held:
            return by_card[max(held, key=lambda c: ROLE_VALUE[c])]
        pend = k.pending
        action = str(pend.get("action") or "")
        actor = pend.get("actor")
        actor = actor if isinstance(actor, int) else None
        me = k.players[k.me]
        p_chal = k.challenge_rate(actor) if actor is not None else PRIOR_CHALLENGE
        candidates = [c for c in by_card if k.unseen[c] > 0 and c not in me.caught]
        if not candidates:
            if action == "hacker" and me.hidden == 1 and by_card:
                return next(iter(by_card.values()))  # nothing to lose: the card is gone anyway
            return passing
        card = max(candidates, key=lambda c: k.unseen[c])
        if action == "hacker":
            if me.hidden == 1:
                return by_card[card]  # the last card is lost unless the block stands
            # Two cards: a challenged false Judge costs both (ruling 11) against one for passing,
            # so it pays against a hacker who challenges blocks less than half the time.
            p_bc = k.block_challenge_rate(actor) if actor is not None else PRIOR_BLOCK_CHALLENGE
            if self.rng.random() < (1.0 - self.honesty) + 1.5 * (1 - 2 * p_bc):
                return by_card[card]
            return passing
        if action == "foreign_aid":
            rich = actor is not None and k.players[actor].money + 2 >= COST["scandal"]
            if rich and self.rng.random() < (1.0 - self.honesty) * (1.0 - p_chal):
                return by_card[card]
            return passing
        # a Mafia steal (steal_blockers option)
        if me.money >= 1 and self.rng.random() < (1.0 - self.honesty) * (1.0 - p_chal):
            return by_card[card]
        return passing


def factory(personality: str = "heuristic") -> BotFactory:
    def make(game: Game, seat: int, seed: int | None = None, **params: Any) -> Bot:
        params.setdefault("personality", personality)
        bot = CapitolHeuristic(game, seat, seed, **params)
        return bot

    return make


class CapitolSearch(SearchPolicy):
    """Search hooks for Capitol: claim-weighted worlds, the heuristic's choice as the prior, its
    candidates, and rollouts that play every seat to the end of the game (:meth:`actor`): the
    searcher by the heuristic, each other seat by the heuristic with dials fitted to its record or by
    the bold rule player (:meth:`seat_models`, ``opp``).

    The older tree search's quick playout (:meth:`playout_action`, ``ismcts:paired=0``) runs in a
    sampled world, so it may read that world's cards; it uses them only for the acting seat's own
    hand (as a player would), never to catch another seat's bluff: challenges in a playout come at a
    fixed small rate, truthful or not.
    """

    model_opponents = True
    prior_margin = 0.02
    # Playouts are cut after a dozen decisions and scored by material (see :meth:`evaluate`): in
    # four-player games the full playouts' winner is mostly noise (measured: 0.13–0.20 win share
    # against three heuristics with full playouts, 0.27–0.30 cut at 12, 0.18 cut at 5).
    playout_limit = 12

    def check_params(self, params: dict[str, Any]) -> None:
        """``opp`` one of :attr:`OPPONENT_MODELS`; ``horizon`` a whole number of turns, 0 or more;
        ``bluff_scale`` and ``rules`` numbers from 0 (``rules``, a share, at most 1)."""
        opp = params.get("opp", "mix")
        if opp not in self.OPPONENT_MODELS:
            raise ValueError(f"opp must be one of {', '.join(self.OPPONENT_MODELS)}, not {opp!r}")
        horizon = params.get("horizon", self.horizon)
        if not isinstance(horizon, int) or isinstance(horizon, bool) or horizon < 0:
            raise ValueError(f"horizon must be 0 (to the end) or a number of turns, not {horizon!r}")
        for key, top in (("bluff_scale", math.inf), ("rules", 1.0)):
            value = params.get(key, 0.0)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= top:
                bound = "0 or more" if top == math.inf else f"from 0 to {top:g}"
                raise ValueError(f"{key} must be a number {bound}, not {value!r}")

    def prior(self, bot: ISMCTSBot, view: View, legal: list[Action]) -> Action | None:
        action: Action = self._helper(bot).act(view, legal)
        return action

    # Rates measured on the heuristic (150 four-player games, heuristic against itself): it calls
    # about one claim in ten, and most Judge blocks of its Hackers; it bluffs a Banker about one turn
    # in eight and a Judge against a Hacker more often than not.
    challenge_rate = 0.10
    block_challenge_rate: ClassVar[dict[str, float]] = {"hacker": 0.65, "foreign_aid": 0.2}
    bluff_rate = 0.13
    #: draws tried before a world is taken whatever its weight
    tries = 12
    #: the claimants' bluff rates (their record, as the heuristic reads it) are halved in the worlds'
    #: weights (the ``bluff_scale`` param): a record counts the bluffs caught among the claims that
    #: were challenged, and players challenge the claims they doubt, so it overstates bluffing.
    #: Measured at the search's challenge decisions face to face, a claimant held the claimed role in
    #: 65 % of the cases against treason's AI (81 % against our heuristic) while the worlds drawn at
    #: full rate gave it the role in 53 % (52 %); at half rate 66 % (64 %). docs/bots.md, "Worlds as
    #: true as the claims".
    bluff_scale = 0.5

    def sampler(self, bot: ISMCTSBot, view: View) -> Callable[[Rng], GameState]:
        """Worlds weighted by the claims still standing: a world where a claimant lacks the role is
        kept with the chance that they bluff (their record, as the heuristic estimates it)."""
        game: Game = bot.game
        # The decision's public log, read once: every rollout's memo starts from a copy of it.
        root = LogMemo()
        k = Knowledge(view, root)
        memo = _memo(bot)
        memo.root_memo = root
        # Each other seat played in the rollouts as it has been seen to play (``model``, on by default).
        memo.seat_dials = self.dials(k) if int(bot.params.get("model", 1)) else {}
        trace = ClaimTrace(len(view["players"]))
        trace.read([("_raw", e) for e in view.get("log") or []])
        memo.root_trace = trace
        scale = float(bot.params.get("bluff_scale", self.bluff_scale))
        claims = [
            (p.seat, [r for r, on in p.claims.items() if on], max(0.05, k.bluff_rate(p.seat)) * scale)
            for p in k.living_others()
            if any(p.claims.values())
        ]

        if not isinstance(game, CapitolGame):
            raise TypeError(f"the Capitol search plays Capitol, not {game.name}")
        deal = game.worlds(view)  # the view read once, the unseen cards dealt anew for each world

        def draw(rng: Rng) -> GameState:
            world = deal(rng)
            if not claims:
                return world
            for _ in range(self.tries):
                hidden = world.hidden
                weight = 1.0
                for seat, roles, bluff in claims:
                    for role in roles:
                        if role not in hidden[seat]:
                            weight *= bluff
                if rng.random() < weight:
                    return world
                world = deal(rng)
            return world

        return draw

    @staticmethod
    def dials(k: Knowledge) -> dict[int, dict[str, float]]:
        """The personality each other seat is played with in the rollouts, fitted to its record
        against the searcher's own (the searcher plays the default heuristic, and its record is read
        from the same log with the same priors, so the ratio is that table's and that game's): a seat
        whose challenged claims were bluffs more often is played with more of a bluffing appetite, one
        that challenges less often with less scepticism, one that steals or hacks on more of its turns
        with more aggression (each by the square root of the ratio, within bounds). A seat with no
        record is played as the default."""
        out: dict[int, dict[str, float]] = {}
        base = PERSONALITIES["heuristic"]
        me = k.me
        my_bluff = k.bluff_rate(me)
        my_chal = k.challenge_rate(me)
        my_attack = _attack_rate(k.players[me].habits)
        for p in k.living_others():
            # Square roots and narrow bounds: a game shows a handful of challenged claims, so a
            # record is taken halfway (measured: the raw ratios swing from 0.4 to 2.5 within a game).
            bluffing = (1.0 - base["honesty"]) * math.sqrt(k.bluff_rate(p.seat) / my_bluff)
            scepticism = base["scepticism"] * math.sqrt(k.challenge_rate(p.seat) / my_chal)
            aggression = base["aggression"] * math.sqrt(_attack_rate(p.habits) / my_attack)
            out[p.seat] = {
                "honesty": min(0.9, max(0.4, 1.0 - bluffing)),
                "scepticism": min(1.6, max(0.5, scepticism)),
                "aggression": min(0.85, max(0.25, aggression)),
            }
        return out

    def candidates(
        self, bot: ISMCTSBot, view: View, legal: list[Action], prior: Action | None
    ) -> list[Action]:
        """One action per kind: where a kind takes a target, the target the heuristic would pick
        (so a turn compares one action per kind, at most nine, not every target of every kind)."""
        if len(legal) <= 3 or not any("target" in a for a in legal):
            return legal
        helper = self._helper(bot)
        k = Knowledge(view)
        by_type: dict[str, list[Action]] = {}
        for a in legal:
            by_type.setdefault(a["type"], []).append(a)
        out: list[Action] = [] if prior is None else [prior]
        for kind, actions in by_type.items():
            if prior is not None and prior["type"] == kind:
                continue
            pick = helper._best_target(k, actions, kind) if "target" in actions[0] else actions[0]
            out.append(pick)
        return out

    def _helper(self, bot: ISMCTSBot) -> CapitolHeuristic:
        memo = _memo(bot)
        if memo.prior_helper is None:
            memo.prior_helper = CapitolHeuristic(bot.game, bot.seat, seed=bot.rng.next64())
        return memo.prior_helper

    #: a rollout longer than this many decisions is scored by :meth:`evaluate` (never in practice)
    rollout_limit = 1000
    #: turns a rollout plays after the candidate's before :meth:`evaluate` scores it (the ``horizon``
    #: param; 0: to the end of the game). Four turns see the candidate resolved and the table answer
    #: it, at about a quarter of a whole game's decisions (docs/bots.md, "Cut-off rollouts").
    horizon = 4

    # The tree search (``ismcts``) compares the root's candidates world by world, every seat played
    # by the real heuristic (:meth:`actor`) to the end of the game; the fast model below
    # (:meth:`playout_action`, cut at ``playout_limit``) is its former playout (``ismcts:paired=0``).
    paired_root = True
    widen_after = 8

    def actor(self, bot: ISMCTSBot, rng: Rng) -> Callable[[GameState, int], Action]:
        """Every seat played from its own information in the sampled world (so nobody reads another
        seat's cards), all drawing from ``rng``: the searcher and the seats :meth:`seat_models`
        leaves to it by the real heuristic from its view, reading the public log once between them
        (:class:`LogMemo`); the others by their model."""
        memo = _memo(bot)
        players = memo.rollout_players
        if players is None:
            players = [CapitolHeuristic(bot.game, s, seed=0) for s in range(bot.game.max_players)]
            memo.rollout_players = players
        dials = memo.seat_dials
        base = PERSONALITIES["heuristic"]
        for p in players:
            p.rng = rng
            d = dials.get(p.seat, base)
            p.honesty, p.scepticism, p.aggression = d["honesty"], d["scepticism"], d["aggression"]
        root = memo.root_memo
        log_memo = LogMemo() if root is None else root.copy()
        others = self.seat_models(bot, rng)

        def act(state: GameState, seat: int) -> Action:
            legal = state.legal_actions(seat)
            if len(legal) == 1:
                return legal[0]
            if not isinstance(state, CapitolState):  # (inline: this runs at every rollout decision)
                raise _not_capitol(state)
            world = state
            model = others.get(seat)
            if model is not None:
                if isinstance(model, RulePlayer):
                    return model.act(world, seat, legal)
                outside: Action = model.act(world.view(seat), legal)
                return outside
            # What the seat knows, read from the world's own fields and the log entries the memo has
            # not read (rendering a view and reading the whole log on every decision was most of a
            # rollout's time).
            action: Action = players[seat].decide(Knowledge.of_state(world, seat, log_memo), legal)
            return action

        return act

    #: the rollout models of the other seats (``opp``): ``mix`` (default), ``heuristic``, ``rules``,
    #: and ``outside`` (treason's AI itself, through coupml: a measurement of the best any model
    #: could do against it, never a level)
    OPPONENT_MODELS = ("mix", "heuristic", "rules", "outside")

    def seat_models(self, bot: ISMCTSBot, rng: Rng) -> dict[int, RulePlayer | OutsideTreason]:
        """The other seats one rollout plays by a model other than the heuristic, and the model.

        ``opp=mix`` (the default): each other seat is played by the bold rule player
        (:mod:`conflictology.bots.capitol_rules`) in a share ``rules`` (default 0.5) of the rollouts
        and by the heuristic, with dials fitted to its record, in the rest — drawn per rollout from
        its random numbers, so every candidate of a world meets the same table. ``opp=rules``: every
        other seat by the rule player; ``opp=heuristic``: none."""
        opp = str(bot.params.get("opp", "mix"))
        memo = _memo(bot)
        root = memo.root_trace
        seats = len(root.claimed) if root is not None else bot.game.max_players
        others = [s for s in range(seats) if s != bot.seat]
        if opp == "heuristic":
            return {}
        if opp == "outside":
            cache = memo.outside_players
            if cache is None:
                cache = {s: OutsideTreason(bot.game, s, seed=1) for s in range(bot.game.max_players)}
                memo.outside_players = cache
            for s in others:
                cache[s].rng = rng
                cache[s].np_random.rng = rng
                cache[s].coin = None
            return {s: cache[s] for s in others}
        trace = root.copy() if root is not None else ClaimTrace(seats)
        if opp == "rules":
            return {s: RulePlayer(rng, trace) for s in others}
        share = float(bot.params.get("rules", 0.5))
        return {s: RulePlayer(rng, trace) for s in others if rng.random() < share}

    def observe(self, seat: int, actor: int, action: Action, index: int) -> int | str:
        """Another seat's choice of cards to keep, return or show is hidden from ``seat``."""
        kind: str = action["type"]
        if actor != seat and kind in ("keep", "return", "show"):
            return kind
        return index

    def rollout(self, bot: ISMCTSBot, state: GameState, rng: Rng) -> list[float]:
        """The flat search's playout: every seat plays the real heuristic from its own view of the
        sampled world (:meth:`actor`), all drawing from ``rng`` (the same numbers for every
        candidate action: a paired comparison)."""
        act = self.actor(bot, rng)
        stop = self.walk_end(bot)
        for _ in range(self.rollout_limit):
            waiting = state.waiting_for()
            if not waiting:
                return rewards(state)
            if stop(state):
                break
            seat = waiting[0]
            state.apply(seat, act(state, seat))
        return self.evaluate(state)

    def walk_end(self, bot: ISMCTSBot) -> Callable[[GameState], bool]:
        """Where a rollout stops: once ``horizon`` turns have been played after the candidate's (at
        the start of the next) with three or more players still in, scored by :meth:`evaluate`
        (``horizon=0``, or two players left: at the end of the game); or as soon as the searcher is
        out (its reward is 0 whoever wins, so the rest of that game is not played)."""
        horizon = int(bot.params.get("horizon", self.horizon))
        me = bot.seat
        turns = [0]

        def stop(state: GameState) -> bool:
            if not isinstance(state, CapitolState):  # (inline: this runs at every rollout decision)
                raise _not_capitol(state)
            s = state
            if not s.alive[me]:
                return True
            if s.phase is TURN and horizon:
                turns[0] += 1
                # Face to face the rollout plays on to the end: the end is near there, and cutting
                # it stalled more games (a value that favours a better hand over money had the
                # searcher at $0M exchange cards turn after turn; docs/bots.md, "Cut-off rollouts").
                return turns[0] > horizon and sum(s.alive) > 2
            return False

        return stop

    def playout_action(self, state: GameState, seat: int, rng: Rng) -> Action:
        legal = state.legal_actions(seat)
        if len(legal) == 1:
            return legal[0]
        s = capitol_state(state)
        phase = s.phase
        hand = s.hidden[seat]
        if phase is TURN:
            return self._turn(s, seat, hand, legal, rng)
        if phase is CHALLENGE or phase is BLOCK_CHALLENGE:
            claim = s.claim if phase is CHALLENGE else s.block_claim
            # A sharp player calls a claim whose copies it can all account for.
            seen = sum(r.count(claim) for r in s.revealed) + hand.count(claim)
            if phase is CHALLENGE:
                rate = self.challenge_rate
            else:
                rate = self.block_challenge_rate.get(s.action, self.challenge_rate)
            if seen >= COPIES or rng.random() < rate:
                return legal[1]
            return legal[0]
        if phase is BLOCK:
            blocks = [a for a in legal if a["type"] == "block"]
            held = [a for a in blocks if a["card"] in hand]
            if held:
                return held[0]
            hacked = s.action == "hacker"
            if blocks and ((hacked and (len(hand) == 1 or rng.random() < 0.6)) or rng.random() < 0.03):
                return rng.choice(blocks)
            return legal[0]
        if phase is LOSE or phase is RETURN or phase is SHOW:
            return min(legal, key=lambda a: ROLE_VALUE[a["card"]])
        if phase is EXCHANGE:
            return max(legal, key=lambda a: sum(ROLE_VALUE[c] for c in set(a["cards"])))
        if phase is INVESTIGATE:
            shown = s.shown
            strong = shown in ROLE_VALUE and ROLE_VALUE[shown] >= ROLE_VALUE["judge"]
            return legal[1] if strong else legal[0]
        return rng.choice(legal)

    def _turn(self, s: CapitolState, seat: int, hand: list[str], legal: list[Action], rng: Rng) -> Action:
        by_type: dict[str, list[Action]] = {}
        for a in legal:
            by_type.setdefault(a["type"], []).append(a)
        if "scandal" in by_type:
            return self._threat(s, by_type["scandal"], rng)
        if "hacker" in by_type and ("hacker" in hand or rng.random() < 2 * self.bluff_rate):
            return self._threat(s, by_type["hacker"], rng)
        if "banker" in hand or rng.random() < self.bluff_rate:
            return by_type["banker"][0]
        if "mafia" in hand and rng.random() < 0.5:
            rich = [a for a in by_type["mafia"] if s.money[a["target"]] >= 2]
            if rich:
                return rng.choice(rich)
        if {"reporter", "police"} & set(hand) and not {"banker", "hacker", "mafia"} & set(hand):
            return by_type["reporter"][0] if "reporter" in hand else by_type["police_swap"][0]
        return by_type["foreign_aid"][0] if rng.random() < 0.5 else by_type["income"][0]

    def evaluate(self, state: GameState) -> list[float]:
        """A cut-off rollout's shares: each player's chance of winning from there, by the model
        fitted to rollout play (:mod:`conflictology.bots.capitol_value`)."""
        if state.is_over():
            return super().evaluate(state)
        return win_shares(capitol_state(state))

    @staticmethod
    def _threat(s: CapitolState, actions: list[Action], rng: Rng) -> Action:
        """Like the heuristic, attack the biggest threat: influence first, then money."""

        def threat(a: Action) -> float:
            t = a["target"]
            return float(3.0 * len(s.hidden[t]) + 0.4 * s.money[t] + 2.0 * (s.money[t] >= COST["scandal"]))

        top = max(threat(a) for a in actions)
        return rng.choice([a for a in actions if threat(a) >= top - 0.5])


def capitol_state(state: GameState) -> CapitolState:
    """``state`` as the Capitol state the search's hooks read field by field. The engine hands the
    hooks a ``GameState``; anything else than Capitol's own is refused loudly rather than played
    some other way (a bot that cannot read the table must not quietly play at random)."""
    if not isinstance(state, CapitolState):
        raise _not_capitol(state)
    return state


def _not_capitol(state: GameState) -> TypeError:
    return TypeError(f"the Capitol search reads a CapitolState, got {type(state).__name__}")


@dataclass
class _SearchMemo:
    """What :class:`CapitolSearch` keeps on one bot between and within its decisions (the policy is
    shared by every bot, so this lives on the bot: ``ISMCTSBot.policy_memo``)."""

    #: the heuristic that gives the prior and the candidates' targets
    prior_helper: CapitolHeuristic | None = None
    #: the decision's public log, read once (every rollout's memo starts from a copy)
    root_memo: LogMemo | None = None
    #: each other seat's fitted personality (:meth:`CapitolSearch.dials`)
    seat_dials: dict[int, dict[str, float]] = field(default_factory=dict)
    #: the claims standing at the decision, for the rule player
    root_trace: ClaimTrace | None = None
    #: one heuristic per seat, reused by every rollout
    rollout_players: list[CapitolHeuristic] | None = None
    #: treason's AI per seat (``opp=outside``)
    outside_players: dict[int, OutsideTreason] | None = None


def _memo(bot: ISMCTSBot) -> _SearchMemo:
    memo = bot.policy_memo
    if memo is None:
        memo = bot.policy_memo = _SearchMemo()
    if not isinstance(memo, _SearchMemo):
        raise TypeError(f"bot {bot.name!r} carries another search's memo: {type(memo).__name__}")
    return memo
