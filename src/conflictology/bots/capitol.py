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
``noise`` (0–1) is the share of decisions taken at random (the ``easy`` level); ``bystander`` what
a challenge must gain before it is made by a player the claim is not aimed at (``BYSTANDER``).
"""

from __future__ import annotations

from typing import Any

from conflictology.bots import Bot, BotFactory
from conflictology.bots.capitol_knowledge import (
    CARD,
    DOLLAR,
    PERSONALITIES,
    PRIOR_BLOCK_CHALLENGE,
    PRIOR_CHALLENGE,
    ROLE_VALUE,
    Knowledge,
    LogMemo,
)
from conflictology.engine import Action, Game, View
from conflictology.games.capitol.data import (
    CLAIM,
    COST,
)

# What a challenge must gain (in cards) before a bystander makes it: a player the claim is not
# aimed at, with others who may challenge it instead. At four players most of the bystanders'
# challenges of a Banker lose a card (22 % are right); 0.8 calls a Banker only when it gives the
# claimant under a one-in-four chance of holding it (0.4: two in five) and won more four-player games,
# but `normal`, every personality and `hard`'s model of the other seats are this heuristic, so the
# default is left as it was; `hard`'s own seat (its prior) takes 0.8 (``CapitolSearch.bystander``;
# docs/bots.md, "How the bots play beside people"). Face to face there is no bystander.
BYSTANDER = 0.4


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
        self.bystander = float(params.pop("bystander", BYSTANDER))
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
        if "block" in types and "challenge" in types:
            return self._one_prompt(k, legal)
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
                for role in k.steal_blockers:
                    s -= 3.0 * k.p_holds(t, role)
            return s

        return max(actions, key=lambda a: (score(a), -a["target"]))

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
        scarcity = k.unseen[role] / k.copies
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
            ev -= self.bystander
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

    def _one_prompt(self, k: Knowledge, legal: list[Action]) -> Action:
        """Ruling 6a: the target's one prompt. The answer it would have given in two: challenge, or
        else what it would have answered in the block window (a sealed block, or let it pass)."""
        answer = self._challenge(k, [a for a in legal if a["type"] != "block"])
        if answer["type"] == "challenge":
            return answer
        return self._block(k, [a for a in legal if a["type"] != "challenge"])

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
