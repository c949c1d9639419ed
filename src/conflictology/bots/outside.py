"""An outside AI at the Capitol table: treason's rule-based player, as a sparring partner.

treason (octachrome/treason) is an online Coup whose ``ai-player.js`` is the strongest rule-based
Coup player we know of; the PyPI package ``coupml`` (Apache-2.0, our ``bench`` extra) ports it to
Python as ``coupml.rule_ai.RuleAI``. This module seats that player in Capitol, deciding from one
seat's view and legal actions only, like every bot here: each decision rebuilds the state RuleAI
reads (``{"game": …, "players": […]}`` with the other hands masked) from the view, asks RuleAI, and
maps its answer back to one of the legal actions.

Roles map one to one: Duke → Banker, Captain → Mafia, Assassin → Hacker, Contessa → Judge,
Ambassador → Reporter, and treason's Inquisitor (its expansion's role, which coupml's port leaves out)
→ Police: both exchange one card with the deck and both look at a player's card (treason's
interrogate, Capitol's investigate), so the Inquisitor is the Police's closest twin. What blocks what
is Capitol's (Judge blocks a Hacker, Banker Foreign Aid, a Mafia steal only under the
``steal_blockers`` option), never Coup's. Capitol decisions Coup lacks are answered in treason's
spirit: a card to show the Police, or to return after an accepted block, is the card RuleAI would
reveal or least want to keep; as the Police it forces a redraw of a strong card.

Two bots:

* ``outside-treason``: coupml's port as published, departures included.
* ``outside-treason-js``: the port with treason's JavaScript restored where coupml departs from it
  (docs/bots.md lists them): the bluffing coin is tossed once a game and again after each bluff (the
  port tosses it every decision); an exchange keeps the best of the hand *and* the drawn cards (the
  port keeps only drawn ones); the end-game simulation adds a bluffed role to a copy of the hand (the
  port appends it to the hand itself, so every later check in that decision believes it held); a
  Mafia steal only targets a player with money; a player holding the blocking role blocks rather
  than challenges; after a challenge of the action, it no longer bluffs a block.

A decision the adapter cannot map (RuleAI's answer is not legal here) plays the first legal action
(a pass where there is one) and is counted in :data:`STATS` (``fallback:…``), with every decision
(``decisions``), so a harness can report them.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from conflictology.bots import Bot, BotFactory
from conflictology.engine import Action, Game, Rng, View

# Capitol role -> treason role, and back.
TO_COUP: dict[str, str] = {
    "banker": "duke",
    "mafia": "captain",
    "hacker": "assassin",
    "judge": "contessa",
    "reporter": "ambassador",
    "police": "inquisitor",
}
FROM_COUP: dict[str, str] = {v: k for k, v in TO_COUP.items()}
# Capitol turn action -> treason action (the Police swap is the Inquisitor's one-card exchange).
ACTION_TO_COUP: dict[str, str] = {
    "income": "income",
    "foreign_aid": "foreign_aid",
    "scandal": "coup",
    "banker": "tax",
    "mafia": "steal",
    "hacker": "assassinate",
    "reporter": "exchange",
    "police_investigate": "interrogate",
    "police_swap": "exchange",
}
# treason's turn actions back to Capitol (its AI exchanges as the Ambassador, our Reporter).
ACTION_FROM_COUP: dict[str, str] = {
    "income": "income",
    "foreign_aid": "foreign_aid",
    "coup": "scandal",
    "tax": "banker",
    "steal": "mafia",
    "assassinate": "hacker",
    "exchange": "reporter",
    "interrogate": "police_investigate",
}
# treason's JavaScript tables, with its Inquisitor (coupml's port dropped it): the order an exchange
# keeps roles in, and how likely each role is to be the card given up (higher: given up sooner).
RANKED = ("duke", "assassin", "captain", "inquisitor", "contessa", "ambassador")
REVEAL_WEIGHTS = {"duke": 3, "assassin": 4, "captain": 5, "inquisitor": 6, "contessa": 6, "ambassador": 9}

# Decisions asked and decisions that could not be mapped, over every outside bot in this process.
STATS: Counter[str] = Counter()

_INSTALL_HINT = (
    "the outside AI needs the coupml package (pip install 'conflictology[bench]', or pip install "
    "coupml==0.1.1)"
)


def available() -> bool:
    """Whether coupml can be imported here."""
    try:
        import coupml.rule_ai  # noqa: F401
    except ImportError:
        return False
    return True


class _NpRandom:
    """The three calls RuleAI makes of a ``numpy.random.RandomState``, drawn from our own generator
    (so a seeded bot is reproducible and numpy is not needed)."""

    def __init__(self, rng: Rng) -> None:
        self.rng = rng

    def rand(self) -> float:
        return self.rng.random()

    def choice(self, seq: list[Any]) -> Any:
        return seq[self.rng.randrange(len(seq))]

    def shuffle(self, seq: list[Any]) -> None:
        self.rng.shuffle(seq)


def _rule_ai_classes(faithful: bool) -> tuple[type, type]:
    """RuleAI and its Simulator, adapted to Capitol's table (and with ``faithful``, to treason's JS)."""
    try:
        from coupml import rule_ai
    except ImportError as exc:
        raise ValueError(_INSTALL_HINT) from exc

    class CapitolSimulator(rule_ai.Simulator):  # type: ignore[misc]
        def __init__(self, ai: Any, opponent_id: int, bluffed_role: str | None) -> None:
            if faithful:
                # treason: ``ourInfluence().concat([bluffedRole])``, a new list; the port appends the
                # bluffed role to the hand itself.
                hand = ai.ai_player["hidden"]
                ai.ai_player["hidden"] = list(hand)
                super().__init__(ai, opponent_id, bluffed_role)
                ai.ai_player["hidden"] = hand
            else:
                super().__init__(ai, opponent_id, bluffed_role)

        def _other_can_block(self, action: str) -> bool:
            return bool(set(self.roles[self.other]) & set(self.ai.blocks.get(action, ())))

    class CapitolRuleAI(rule_ai.RuleAI):  # type: ignore[misc]
        """RuleAI with Capitol's blocks and treason's Inquisitor; ``claimed`` is the role now
        claimed (the adapter knows it from the view: a Police claim has no Coup action)."""

        blocks: dict[str, tuple[str, ...]]
        claimed: str | None
        coin: bool | None = None  # treason's bluffing coin, kept across the game (faithful)
        challenged_this_turn = False

        def get_action(self) -> Any:
            if not faithful or self.coin is None:
                return super().get_action()
            self.bluff_choice = self.coin
            phase = self.phase
            if phase == rule_ai.START_OF_TURN:
                return self._play_our_turn()
            if phase in (rule_ai.AWAITING_CHALLENGE, rule_ai.AWAITING_BLOCK):
                return self._respond_to_action()
            if phase == rule_ai.AWAITING_BLOCK_CHALLENGE:
                return self._respond_to_block()
            if phase in rule_ai.REVEAL_PHASES:
                return self._reveal_by_probability()
            return self._exchange()

        # -- Capitol's blocks --------------------------------------------------------------------
        def _get_blocking_role(self) -> str | None:
            for r in self.blocks.get(self.action, ()):
                if r in self.ai_player["hidden"]:
                    return r
            return None

        def _get_bluffed_blocking_role(self) -> str | None:
            if faithful and self.challenged_this_turn:
                return None  # treason: no bluffed block in the final response, after a challenge
            roles = list(self.blocks.get(self.action, ()))
            self.np_random.shuffle(roles)
            for r in roles:
                if self._should_bluff(r):
                    return r
            return None

        def _player_can_block(self, player_id: int, action: str) -> bool:
            return bool(set(self._get_claimed_roles(player_id)) & set(self.blocks.get(action, ())))

        def _respond_to_action(self) -> Any:
            # The port's code, with the block written out (its ``block()`` knows no Inquisitor).
            if (
                self.action == rule_ai.STEAL
                and self.target_id == self.ai_id
                and self.ai_player["cash"] == 0
            ):
                return rule_ai.PASS  # someone wants to steal nothing from us: go ahead
            if self.phase == rule_ai.AWAITING_CHALLENGE:
                if (
                    faithful
                    and (self.action == rule_ai.FOREIGN_AID or self.target_id == self.ai_id)
                    and self._get_blocking_role() is not None
                ):
                    return rule_ai.PASS  # treason blocks with a role it holds before any challenge
                if self._should_challenge():
                    return rule_ai.CHALLENGE
            if self.phase == rule_ai.AWAITING_BLOCK:
                role = self._get_blocking_role() or self._get_bluffed_blocking_role()
                if role:
                    return f"block:{role}"
            return rule_ai.PASS

        # -- treason's Inquisitor -----------------------------------------------------------------
        def _should_challenge(self) -> bool:
            # The port's code, with the claimed role given (a Police claim has no Coup action).
            claimed_role = self.claimed
            if self.phase == rule_ai.AWAITING_CHALLENGE:
                challenged_player = self.whose_turn
            else:
                challenged_player = self.blocking_player
            used = self._count_revealed_roles(claimed_role)
            used += sum(1 for r in self.ai_player["hidden"] if r == claimed_role)
            if used == rule_ai.NUM_ROLES:
                return True
            if self._bluff_was_called(challenged_player, claimed_role):
                return True
            if (
                self.phase == rule_ai.AWAITING_CHALLENGE
                and self.target_id == self.ai_id
                and self.action == rule_ai.ASSASSINATE
                and len(self.ai_player["hidden"]) == 1
            ):
                contessas = self._count_revealed_roles(rule_ai.CONTESSA) + self._count_role_claims(
                    rule_ai.CONTESSA
                )
                if contessas >= rule_ai.NUM_ROLES:
                    return True
                return bool(self._bluff_was_called(self.ai_id, rule_ai.CONTESSA))
            if not self._action_is_worth_challenging():
                return False
            if self._is_end_game():
                result = self._simulate()
                if result < 0:
                    return True
                if result > 0:
                    return False
            return bool(self.np_random.rand() < self.chance_to_challenge)

        def _reveal_by_probability(self) -> str:
            roles = [r for r in self.ai_player["hidden"] for _ in range(REVEAL_WEIGHTS[r])]
            return f"reveal:{self.np_random.choice(roles)}"

        def _choose_target(self, action: str) -> Any:
            if faithful and action == rule_ai.STEAL:
                # treason's captainTarget: nobody who can block, nobody with no money.
                return self._strongest_player(
                    lambda pid: not self._player_can_block(pid, action)
                    and self.players[pid]["cash"] > 0
                )
            return super()._choose_target(action)

        def _exchange(self) -> str:
            needed = len(self.ai_player["hidden"])
            # A one-card Police swap (never the AI's own choice: it exchanges as the Ambassador)
            # cannot be answered from the drawn card alone: both variants then choose as treason does.
            if faithful or len(self.game_state["drawn_roles"]) < needed:
                # treason: the options are the drawn cards and the hand; distinct roles first.
                options = list(self.game_state["drawn_roles"]) + list(self.ai_player["hidden"])
                chosen: list[str] = []
                for _ in range(needed):
                    for r in RANKED:
                        if r not in chosen and r in options:
                            chosen.append(r)
                            break
                while len(chosen) < needed:
                    chosen.append(options[0])
                return "keep:" + ",".join(sorted(chosen))
            # The port: only the drawn cards, distinct roles first.
            available = list(self.game_state["drawn_roles"])
            chosen = []
            for r in RANKED:
                if r not in chosen and r in available:
                    chosen.append(r)
                    available.remove(r)
                if len(chosen) == needed:
                    break
            for r in RANKED:
                if len(chosen) == needed:
                    break
                while r in available and len(chosen) < needed:
                    chosen.append(r)
                    available.remove(r)
            return "keep:" + ",".join(sorted(chosen))

        def _simulate(self, bluffed_role: str | None = None) -> int:
            opponent_id = self._strongest_player()
            result: int = CapitolSimulator(self, opponent_id, bluffed_role).simulate()
            return result

    return CapitolRuleAI, CapitolSimulator


class OutsideTreason(Bot):
    """treason's rule-based AI (coupml's port) seated at a Capitol table; ``faithful`` restores the
    JavaScript where the port departs from it (see the module docstring)."""

    name = "outside-treason"

    def __init__(
        self, game: Game, seat: int, seed: int | None = None, faithful: bool = False, **params: Any
    ) -> None:
        if game.name != "capitol":
            raise ValueError(f"the outside AI plays Capitol only, not {game.name}")
        self.rule_ai, _ = _rule_ai_classes(bool(faithful))
        self.faithful = bool(faithful)
        self.chance_to_bluff = float(params.pop("bluff", 0.5))
        self.chance_to_challenge = float(params.pop("challenge", 0.1))
        super().__init__(game, seat, seed, **params)
        self.np_random = _NpRandom(self.rng)
        self.coin: bool | None = None
        self.fallbacks = 0
        self.decisions = 0
        self._log_len = 0

    # -- entry point ------------------------------------------------------------------------------
    def act(self, view: View, legal: list[Action]) -> Action:
        if len(legal) == 1:
            return legal[0]
        self.decisions += 1
        STATS["decisions"] += 1
        log = view.get("log") or []
        if self.coin is None or len(log) < self._log_len:
            # A new game: treason tosses its bluffing coin when the game starts.
            self.coin = self.rng.random() < self.chance_to_bluff
        self._log_len = len(log)
        phase = view["phase"]
        if phase == "show":
            return self._give_up(view, legal, "show", weighted=True)
        if phase == "return":
            return self._give_up(view, legal, "return", weighted=False)
        if phase == "investigate":
            shown = (view.get("pending") or {}).get("shown")
            strong = shown in ("banker", "hacker", "mafia")
            kind = "force_redraw" if strong else "let_keep"
            return next((a for a in legal if a["type"] == kind), legal[0])
        ai = self._rule_ai(view)
        answer = str(ai.get_action())
        if phase == "challenge" and answer == "pass" and any(a["type"] == "block" for a in legal):
            # Capitol's one prompt for a target (ruling 6a): RuleAI answers in two windows, so it is
            # asked its block window's answer now (a block, or a pass).
            ai = self._rule_ai(view, block_window=True)
            answer = str(ai.get_action())
        action = self._to_capitol(answer, view)
        if action is not None and action in legal:
            self._after(ai, answer, view)
            return action
        return self._fallback(legal, f"{phase}:{answer}")

    def _fallback(self, legal: list[Action], reason: str) -> Action:
        self.fallbacks += 1
        STATS[f"fallback:{reason}"] += 1
        return next((a for a in legal if a["type"] == "pass"), legal[0])

    def _after(self, ai: Any, answer: str, view: View) -> None:
        """treason re-tosses its bluffing coin after each bluff (a claim of a role it does not hold)."""
        if not self.faithful:
            return
        hand = [TO_COUP[c] for c in view["players"][self.seat]["hidden"]]
        kind, _, rest = answer.partition(":")
        role = None
        if view["phase"] == "turn":
            role = {"tax": "duke", "steal": "captain", "assassinate": "assassin"}.get(kind)
        elif kind == "block":
            role = rest
        if role is not None and role not in hand:
            self.coin = self.rng.random() < self.chance_to_bluff

    # -- Capitol decisions Coup does not have -------------------------------------------------------
    def _give_up(self, view: View, legal: list[Action], kind: str, weighted: bool) -> Action:
        """The card to show the Police (as treason reveals: weighted toward weak roles) or to put back
        after an accepted block (the one an exchange would least keep)."""
        cards = [a["card"] for a in legal if a["type"] == kind]
        if not cards:
            return self._fallback(legal, f"{kind}:none")
        if weighted:
            pool = [c for c in cards for _ in range(REVEAL_WEIGHTS[TO_COUP[c]])]
            card = self.rng.choice(pool)
        else:
            card = max(cards, key=lambda c: RANKED.index(TO_COUP[c]))
        return next(a for a in legal if a.get("card") == card)

    # -- the state RuleAI reads ---------------------------------------------------------------------
    def _rule_ai(self, view: View, block_window: bool = False) -> Any:
        me = self.seat
        pending = view.get("pending") or {}
        phase = "block" if block_window else view["phase"]
        players = []
        traces = _traces(view.get("log") or [], len(view["players"]))
        for i, p in enumerate(view["players"]):
            hidden = p["hidden"]
            if i == me:
                hand = list(pending["hand"]) if phase == "exchange" and "hand" in pending else list(hidden)
                mapped = sorted(TO_COUP[c] for c in hand)
            else:
                mapped = ["hidden"] * (hidden if isinstance(hidden, int) else len(hidden))
            players.append({
                "cash": int(p["money"]),
                "hidden": mapped,
                "revealed": sorted(TO_COUP[c] for c in p["revealed"]),
                "trace": traces[i],
            })
        game: dict[str, Any] = {"player_to_act": me, "whose_turn": view["turn"]}
        action = pending.get("action")
        claimed: str | None = None
        if phase == "turn":
            game["phase"] = "start_of_turn"
        elif phase in ("challenge", "block", "block_challenge"):
            game["phase"] = {
                "challenge": "awaiting_challenge",
                "block": "awaiting_block",
                "block_challenge": "awaiting_block_challenge",
            }[phase]
            claimed = TO_COUP.get(pending.get("claim") or "")
            if phase == "block_challenge":
                game["blocked_with"] = TO_COUP[pending["block_claim"]]
                game["blocking_player"] = pending["blocker"]
                claimed = game["blocked_with"]
        elif phase == "lose":
            game["phase"] = "direct_attack"
        elif phase == "exchange":
            game["phase"] = "choose_new_roles"
            game["drawn_roles"] = [TO_COUP[c] for c in pending.get("drawn") or []]
        else:
            game["phase"] = phase
        if action:
            game["action"] = ACTION_TO_COUP[action]
        if pending.get("target") is not None:
            game["target_player"] = pending["target"]
        ai = self.rule_ai(
            {"game": game, "players": players},
            self.np_random,
            chance_to_bluff=self.chance_to_bluff,
            chance_to_challenge=self.chance_to_challenge,
        )
        ai.claimed = claimed
        steal = tuple(TO_COUP[r] for r in (view.get("options") or {}).get("steal_blockers") or [])
        ai.blocks = {"assassinate": ("contessa",), "foreign_aid": ("duke",), "steal": steal}
        ai.coin = self.coin if self.faithful else None
        ai.challenged_this_turn = _challenged_this_turn(view.get("log") or [])
        return ai

    def _to_capitol(self, answer: str, view: View) -> Action | None:
        kind, _, rest = answer.partition(":")
        phase = view["phase"]
        if phase == "turn":
            capitol = ACTION_FROM_COUP.get(kind)
            if capitol is None:
                return None
            return {"type": capitol, "target": int(rest)} if rest else {"type": capitol}
        if kind in ("pass", "challenge"):
            return {"type": kind}
        if kind == "block":
            return {"type": "block", "card": FROM_COUP[rest]}
        if kind == "reveal" and phase == "lose":
            return {"type": "lose", "card": FROM_COUP[rest]}
        if kind == "keep" and phase == "exchange":
            return {"type": "keep", "cards": sorted(FROM_COUP[c] for c in rest.split(","))}
        return None


def _traces(log: list[Any], n: int) -> list[list[tuple[str, str | None]]]:
    """coupml's per-player trace from the public log: ``claim`` (an action's role, a block's),
    ``reveal`` (a card shown to win a challenge, or lost), ``lost_challenge`` (a bluff caught) and
    ``exchange`` (a finished exchange)."""
    traces: list[list[tuple[str, str | None]]] = [[] for _ in range(n)]
    for e in log:
        if not isinstance(e, dict):
            continue
        kind = e.get("type")
        seat = e.get("seat")
        if not isinstance(seat, int):
            continue
        if kind == "action":
            action = str(e.get("action"))
            role = {"banker": "duke", "mafia": "captain", "hacker": "assassin", "reporter": "ambassador"}.get(
                action, "inquisitor" if action.startswith("police") else None
            )
            if role is not None:
                traces[seat].append(("claim", role))
        elif kind == "block":
            traces[seat].append(("claim", TO_COUP[e["card"]]))
        elif kind in ("reveal", "lose"):
            traces[seat].append(("reveal", TO_COUP[e["card"]]))
        elif kind == "bluff":
            traces[seat].append(("lost_challenge", TO_COUP[e["claim"]]))
        elif kind == "exchange":
            traces[seat].append(("exchange", None))
    return traces


def _challenged_this_turn(log: list[Any]) -> bool:
    for e in reversed(log):
        if not isinstance(e, dict):
            continue
        if e.get("type") == "challenge":
            return True
        if e.get("type") == "action":
            return False
    return False


def factory(faithful: bool = False) -> BotFactory:
    def make(game: Game, seat: int, seed: int | None = None, **params: Any) -> Bot:
        params.setdefault("faithful", faithful)
        return OutsideTreason(game, seat, seed, **params)

    return make
