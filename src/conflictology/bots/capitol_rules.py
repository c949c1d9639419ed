"""A second model of a Capitol player for the search's rollouts: a bold, rule-driven player.

Our search plays every seat of a sampled world to the end of the game and compares its own
candidate moves over those worlds (docs/bots.md, "Flat search"). Its answers are only as good as
its model of the others: played as our own heuristic, a seat that bluffs on every other turn and
calls almost nothing looks like a cautious card counter, and the search learns to fear challenges
that never come. This module is the other kind of player, as the rule-based players of online Coup
tables play (the best known, treason's AI, is described in docs/bots.md): a coin tossed at each
decision decides whether it may bluff; it calls a claim only when the claim is impossible by its
count, when that player was caught bluffing the same role, when the claim costs it money or a card
and a short end-game look-ahead says it would lose, or at a small fixed rate; it shows and gives up
cards by fixed weights.

It acts on the sampled world's state directly (no rendered view, so a rollout decision costs a few
microseconds), reading only what that seat may know: its own hand, money, revealed cards, and the
public record of claims (:class:`ClaimTrace`). Which seats the search plays by this model and which
by the heuristic is the search's choice (``CapitolSearch``, docs/bots.md).
"""

from __future__ import annotations

from collections.abc import Callable

from mypy_extensions import mypyc_attr

from conflictology.engine import Action, Rng
from conflictology.games.capitol.data import (
    BANKER_TAKE,
    BLOCK,
    BLOCK_CHALLENGE,
    CHALLENGE,
    CLAIM,
    COST,
    EXCHANGE,
    INCOME,
    INVESTIGATE,
    LOSE,
    MAFIA_STEAL,
    RETURN,
    SHOW,
    TURN,
    block_roles,
    copies_of,
)
from conflictology.games.capitol.fields import LogEntry
from conflictology.games.capitol.state import CapitolState

#: the order in which the model keeps roles from an exchange (most wanted first)
RANKED = ("banker", "hacker", "mafia", "police", "judge", "reporter")
#: how likely each role is to be the card it gives up when it must lose or show one
GIVE_UP_WEIGHT = {"banker": 3, "hacker": 4, "mafia": 5, "police": 6, "judge": 6, "reporter": 9}
#: end-game look-ahead, in turns
HORIZON = 7


# Not a native class when compiled (conflictology.native): ``ClaimTrace.__new__`` makes one without
# ``__init__``, which mypyc's native classes do not allow.
@mypyc_attr(native_class=False)
class ClaimTrace:
    """Each seat's standing claims and the roles it was caught bluffing, since its last exchange,
    read incrementally from a state's log (rendered entries of a sampled world's past, then the
    engine's own tuples)."""

    __slots__ = ("caught", "claimed", "n")

    def __init__(self, players: int) -> None:
        self.claimed: list[set[str]] = [set() for _ in range(players)]
        self.caught: list[set[str]] = [set() for _ in range(players)]
        self.n = 0

    def copy(self) -> ClaimTrace:
        c = ClaimTrace.__new__(ClaimTrace)
        c.claimed = [set(s) for s in self.claimed]
        c.caught = [set(s) for s in self.caught]
        c.n = self.n
        return c

    def read(self, log: list[LogEntry]) -> None:
        for entry in log[self.n :]:
            self._event(*_event(entry))
        self.n = len(log)

    def _event(self, kind: str, seat: int, role: str) -> None:
        if seat < 0:
            return
        if kind == "claim":
            self.claimed[seat].add(role)
        elif kind == "shown":
            self.claimed[seat].discard(role)
        elif kind == "bluff":
            self.claimed[seat].discard(role)
            self.caught[seat].add(role)
        elif kind == "exchange":
            self.claimed[seat].clear()
            self.caught[seat].clear()


def _event(entry: LogEntry) -> tuple[str, int, str]:
    """(claim | shown | bluff | exchange | other, seat, role) of one log entry, in either form: a
    sampled world's past is rendered, what happens in it the engine's own tuples. The tuples are read
    as they are: rendering each one (``views.render_entry``) cost a third of the rule player's
    rollouts (pimc:opp=rules, 1,322 → 851 rollouts per CPU second)."""
    if entry[0] == "_raw":
        e = entry[1]
        kind, seat = e.get("type"), e.get("seat", -1)
        action, card, claim = e.get("action", ""), e.get("card", ""), e.get("claim", "")
    else:
        kind, seat = entry[0], entry[1]
        action = entry[2] if kind == "action" else ""
        card = entry[2] if kind in ("block", "reveal", "lose") else ""
        claim = entry[2] if kind == "bluff" else ""
    if kind == "action":
        role = CLAIM.get(action)
        return ("claim", seat, role) if role else ("other", -1, "")
    if kind == "block":
        return "claim", seat, card
    if kind in ("reveal", "lose"):
        return "shown", seat, card
    if kind == "bluff":
        return "bluff", seat, claim
    if kind == "exchange":
        return "exchange", seat, ""
    return "other", -1, ""


class RulePlayer:
    """The bold rule player's decisions for any seat of a Capitol state (see the module docstring).

    ``bluff`` is the chance, at each decision, that it is willing to bluff; ``challenge`` its rate
    of calling a claim that concerns it when nothing else decides."""

    __slots__ = ("bluff", "challenge", "coin", "fallbacks", "rng", "s", "seat", "trace")

    def __init__(self, rng: Rng, trace: ClaimTrace, bluff: float = 0.5, challenge: float = 0.1) -> None:
        self.rng = rng
        self.trace = trace
        self.bluff = bluff
        self.challenge = challenge
        # ``s``, the state being decided, is set by each :meth:`act` (read before one: an error).
        self.s: CapitolState
        self.seat = -1
        self.coin = False
        #: choices that were not legal and became the first legal action (tests count them: none)
        self.fallbacks = 0

    def act(self, state: CapitolState, seat: int, legal: list[Action]) -> Action:
        self.trace.read(state.log)
        self.s = state
        self.seat = seat
        self.coin = self.rng.random() < self.bluff
        phase = state.phase
        if phase is TURN:
            choice = self._turn()
        elif phase is CHALLENGE:
            choice = self._answer_claim()
            if choice["type"] == "pass" and len(legal) > 2:
                choice = self._block(legal)  # ruling 6a: the target answers the block now
        elif phase is BLOCK_CHALLENGE:
            choice = {"type": "challenge" if self._should_challenge() else "pass"}
        elif phase is BLOCK:
            choice = self._block(legal)
        elif phase is LOSE or phase is SHOW:
            hand = state.hidden[seat]
            pool = [c for c in hand for _ in range(GIVE_UP_WEIGHT[c])]
            choice = {"type": "lose" if phase is LOSE else "show", "card": self.rng.choice(pool)}
        elif phase is RETURN:
            choice = {"type": "return", "card": max(state.hidden[seat], key=RANKED.index)}
        elif phase is EXCHANGE:
            choice = self._exchange(legal)
        elif phase is INVESTIGATE:
            strong = state.shown in ("banker", "hacker", "mafia")
            choice = {"type": "force_redraw" if strong else "let_keep"}
        else:
            choice = legal[0]
        if choice in legal:
            return choice
        self.fallbacks += 1
        return legal[0]

    # -- reading the table -------------------------------------------------------------------------
    def _strength(self, p: int) -> int:
        return 20 * len(self.s.hidden[p]) + int(self.s.money[p])

    def _opponents(self) -> list[int]:
        s = self.s
        return [p for p in range(s.n) if p != self.seat and s.alive[p]]

    def _strongest(self, ok: Callable[[int], bool] | None = None) -> int:
        seats = [p for p in self._opponents() if ok is None or ok(p)]
        if not seats:
            return -1
        top = max(self._strength(p) for p in seats)
        best = [p for p in seats if self._strength(p) == top]
        return best[0] if len(best) == 1 else int(self.rng.choice(best))

    def _blockers(self, action: str) -> tuple[str, ...]:
        """Who may block ``action`` claiming what (ruling 6; a Mafia steal per the table's option)."""
        return block_roles(action, self.s.opt_steal, self.s.opt_roles)

    def _target(self, action: str) -> int:
        blockers = self._blockers(action)
        claimed = self.trace.claimed
        money = self.s.money
        if action == "mafia":
            return self._strongest(lambda p: money[p] > 0 and not (claimed[p] & set(blockers)))
        return self._strongest(lambda p: not (claimed[p] & set(blockers)))

    def _copies(self, role: str) -> int:
        return copies_of(self.s.options, role)  # big tables: more; a small variant's absent role: none

    def _revealed(self, role: str) -> int:
        return sum(r.count(role) for r in self.s.revealed)

    def _end_game(self) -> bool:
        return len(self._opponents()) == 1

    def _whim(self) -> bool:
        """A tenth of its choices are left to chance, except when the last card is at stake."""
        if self._end_game() and len(self.s.hidden[self.seat]) == 1:
            return False
        return self.rng.random() < 0.1

    # -- its turn ----------------------------------------------------------------------------------
    def _turn(self) -> Action:
        s, me = self.s, self.seat
        hand = s.hidden[me]
        money = s.money[me]
        if money >= COST["scandal"]:
            return {"type": "scandal", "target": self._strongest()}
        hack = self._target("hacker")
        steal = self._target("mafia")
        if "hacker" in hand and money >= COST["hacker"] and hack >= 0 and not self._whim():
            return {"type": "hacker", "target": hack}
        if "mafia" in hand and steal >= 0 and not self._whim():
            return {"type": "mafia", "target": steal}
        if "banker" in hand and not self._whim():
            return {"type": "banker"}
        if self._revealed("banker") == self._copies("banker") and "mafia" not in hand and not self._whim():
            return {"type": "foreign_aid"}
        bluffs: list[Action] = []
        if money >= COST["hacker"] and hack >= 0 and self._may_bluff("hacker"):
            bluffs.append({"type": "hacker", "target": hack})
        if steal >= 0 and self._may_bluff("mafia"):
            bluffs.append({"type": "mafia", "target": steal})
        if self._may_bluff("banker"):
            bluffs.append({"type": "banker"})
        if bluffs and not self._whim():
            return self.rng.choice(bluffs)
        if "hacker" not in hand and not self._whim():
            return {"type": "reporter"}
        return {"type": "foreign_aid" if self._revealed("banker") == self._copies("banker") else "income"}

    def _may_bluff(self, role: str) -> bool:
        s, me = self.s, self.seat
        mine = self.trace.claimed[me]
        if role in self.trace.caught[me] or self._revealed(role) == self._copies(role):
            return False
        if role == "judge" and s.action == "hacker" and len(s.hidden[me]) == 1:
            return True  # the last card is at stake: a bluff is the only hope
        if role not in mine and (not self.coin or len(mine) > 2):
            return False
        # A bluff that would win the end game is the one a player calls: don't.
        return not (self._end_game() and self._look_ahead(role) > 0)

    # -- answering a claim -------------------------------------------------------------------------
    def _answer_claim(self) -> Action:
        s, me = self.s, self.seat
        blockers = self._blockers(s.action)
        concerns_me = s.action == "foreign_aid" or s.target == me
        if s.action == "mafia" and s.target == me and s.money[me] == 0:
            return {"type": "pass"}  # nothing to lose
        if concerns_me and any(r in s.hidden[me] for r in blockers):
            return {"type": "pass"}  # it will block with the card it holds
        return {"type": "challenge" if self._should_challenge() else "pass"}

    def _should_challenge(self) -> bool:
        s, me = self.s, self.seat
        if s.phase is CHALLENGE:
            role, claimant = s.claim, s.actor
        else:
            role, claimant = s.block_claim, s.blocker
        if self._revealed(role) + s.hidden[me].count(role) >= self._copies(role):
            return True
        if role in self.trace.caught[claimant]:
            return True
        if s.phase is CHALLENGE and s.action == "hacker" and s.target == me and len(s.hidden[me]) == 1:
            judges = self._revealed("judge") + sum(
                1 for p in range(s.n) if p != me and "judge" in self.trace.claimed[p]
            )
            return judges >= self._copies("judge") or "judge" in self.trace.caught[me]
        worth = s.action == "banker" or (s.action in ("mafia", "hacker") and me in (s.actor, s.target))
        if not worth:
            return False
        if self._end_game():
            outcome = self._look_ahead(None)
            if outcome:
                return outcome < 0
        return self.rng.random() < self.challenge

    def _block(self, legal: list[Action]) -> Action:
        s, me = self.s, self.seat
        if s.action == "mafia" and s.target == me and s.money[me] == 0:
            return {"type": "pass"}
        roles = [a["card"] for a in legal if a["type"] == "block"]
        for r in roles:
            if r in s.hidden[me]:
                return {"type": "block", "card": r}
        if s.challenger >= 0:
            return {"type": "pass"}  # after a challenge, a bluffed block would be called
        self.rng.shuffle(roles)
        for r in roles:
            if self._may_bluff(r):
                return {"type": "block", "card": r}
        return {"type": "pass"}

    def _exchange(self, legal: list[Action]) -> Action:
        s, me = self.s, self.seat
        keep = s.keep
        pool = list(s.hidden[me])
        chosen: list[str] = []
        for r in RANKED:
            if len(chosen) == keep:
                break
            if r in pool:
                chosen.append(r)
                pool.remove(r)
        while len(chosen) < keep:
            chosen.append(pool.pop(0))
        return {"type": "keep", "cards": sorted(chosen)}

    # -- the end-game look-ahead -------------------------------------------------------------------
    def _look_ahead(self, bluffed: str | None) -> int:
        """Both players' best plays for a few turns, each with the roles it holds or claims: 1 if
        this seat would win, -1 if the opponent would, 0 if nobody wins within the horizon."""
        s, me = self.s, self.seat
        opp = self._strongest()
        if opp < 0:
            return 0
        cash = [s.money[opp], s.money[me]]
        cards = [len(s.hidden[opp]), len(s.hidden[me])]
        mine = set(s.hidden[me])
        if bluffed:
            mine.add(bluffed)
        roles = [set(self.trace.claimed[opp]), mine]
        steal_blockers = set(s.opt_steal)
        i = 0
        if (s.phase is CHALLENGE or s.phase is BLOCK) and s.actor == opp:
            if not bluffed:  # the pending action goes through
                if s.action == "mafia":
                    took = min(MAFIA_STEAL, cash[1])
                    cash[0] += took
                    cash[1] -= took
                elif s.action == "hacker":
                    cards[1] -= 1
                elif s.action == "banker":
                    cash[0] += BANKER_TAKE
        elif s.phase is BLOCK_CHALLENGE:
            i = 1
        while i < HORIZON:
            i += 1
            turn, other = i % 2, (i + 1) % 2
            if cards[0] <= 0:
                return 1
            if cards[1] <= 0:
                return -1
            if "hacker" in roles[turn] and "judge" not in roles[other] and cash[turn] >= COST["hacker"]:
                cash[turn] -= COST["hacker"]
                cards[other] -= 1
            elif cash[turn] >= COST["scandal"]:
                cash[turn] -= COST["scandal"]
                cards[other] -= 1
            elif "mafia" in roles[turn] and not (roles[other] & steal_blockers) and cash[other] > 0:
                took = min(MAFIA_STEAL, cash[other])
                cash[turn] += took
                cash[other] -= took
            elif "banker" in roles[turn]:
                cash[turn] += BANKER_TAKE
            else:
                cash[turn] += INCOME
        return 0
