"""The Capitol search (``hard``, ``ismcts`` on Capitol): its worlds weighted by the claims standing, the
heuristic's choice as the prior, and rollouts that play every seat by a model of it (docs/bots.md)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from conflictology.bots.capitol import CapitolHeuristic
from conflictology.bots.capitol_knowledge import (
    PERSONALITIES,
    ROLE_VALUE,
    Knowledge,
    LogMemo,
    attack_rate,
)
from conflictology.bots.capitol_rules import ClaimTrace, RulePlayer
from conflictology.bots.capitol_value import win_shares
from conflictology.bots.ismcts import FlatSearchBot, ISMCTSBot, SearchPolicy, rewards
from conflictology.bots.outside import OutsideTreason
from conflictology.engine import Action, Game, GameState, Rng, View
from conflictology.games.capitol.data import (
    BLOCK,
    BLOCK_CHALLENGE,
    CHALLENGE,
    CLAIM,
    COST,
    EXCHANGE,
    INVESTIGATE,
    LOSE,
    RETURN,
    SHOW,
    TURN,
    copies_of,
)
from conflictology.games.capitol.game import CapitolGame
from conflictology.games.capitol.state import CapitolState


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
        ``worlds`` one of :attr:`WORLDS_RULES`, ``claims`` one of :attr:`CLAIM_RULES`, ``quiet_bluffs``
        0 or 1; ``bluff_z`` a finite number from 0; ``bluff_scale``, ``bystander``, ``rules``,
        ``prior_honesty`` and ``prior_scepticism`` numbers from 0 (``rules`` and ``prior_honesty``,
        shares, at most 1)."""
        opp = params.get("opp", "mix")
        if opp not in self.OPPONENT_MODELS:
            raise ValueError(f"opp must be one of {', '.join(self.OPPONENT_MODELS)}, not {opp!r}")
        horizon = params.get("horizon", self.horizon)
        if not isinstance(horizon, int) or isinstance(horizon, bool) or horizon < 0:
            raise ValueError(f"horizon must be 0 (to the end) or a number of turns, not {horizon!r}")
        for key, allowed in (("worlds", self.WORLDS_RULES), ("claims", self.CLAIM_RULES)):
            if params.get(key, allowed[0]) not in allowed:
                raise ValueError(f"{key} must be one of {', '.join(allowed)}, not {params[key]!r}")
        bluff_z = params.get("bluff_z", 0.0)
        if isinstance(bluff_z, bool) or not isinstance(bluff_z, int | float) or not 0 <= bluff_z < math.inf:
            raise ValueError(f"bluff_z must be a number of standard errors, 0 or more, not {bluff_z!r}")
        if params.get("quiet_bluffs", 1) not in (0, 1) or isinstance(params.get("quiet_bluffs"), bool):
            raise ValueError(f"quiet_bluffs must be 0 or 1, not {params['quiet_bluffs']!r}")
        for key, top in (
            ("bluff_scale", math.inf),
            ("rules", 1.0),
            ("bystander", math.inf),
            ("prior_honesty", 1.0),
            ("prior_scepticism", math.inf),
        ):
            value = params.get(key, 0.0)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= top:
                bound = "0 or more" if top == math.inf else f"from 0 to {top:g}"
                raise ValueError(f"{key} must be a number {bound}, not {value!r}")

    def prior(self, bot: ISMCTSBot, view: View, legal: list[Action]) -> Action | None:
        helper = self._helper(bot)
        crowd = sum(1 for p in view["players"] if p["alive"]) > 2
        helper.honesty, helper.scepticism = self._own_dials(bot, crowd)
        action: Action = helper.act(view, legal)
        return action

    #: the searcher's own honesty and scepticism (its prior, and its seat in the rollouts) with three
    #: or more players in (the ``prior_honesty`` and ``prior_scepticism`` params; ``None``: the
    #: default personality's, 0.7 and 1.0, as `normal` plays and as `hard` did before 2026-12-05,
    #: late). Face to face always the default personality's. The other seats in the rollouts keep the
    #: dials fitted to their record (:meth:`dials`). 0.97 (``heuristic-honest``'s) and 0.6: the prior
    #: no longer bluffs Bankers and Hackers where the search does not see a gain, and calls fewer
    #: claims (a Mafia at itself, right one time in five, most of all): at four players against three
    #: `normal` the quick search's winners bluffed 16 % of their action claims instead of 23 % and
    #: it took 6.5 % of its chances to challenge with three or more in instead of 8.7 %, and it won
    #: more (docs/bots.md, "`hard` beside people: an honest, less sceptical prior").
    prior_honesty: float | None = 0.97
    prior_scepticism: float | None = 0.6

    def _own_dials(self, bot: ISMCTSBot, crowd: bool) -> tuple[float, float]:
        base = PERSONALITIES["heuristic"]
        if not crowd:
            return base["honesty"], base["scepticism"]
        honesty = bot.params.get("prior_honesty", self.prior_honesty)
        scepticism = bot.params.get("prior_scepticism", self.prior_scepticism)
        return (
            base["honesty"] if honesty is None else float(honesty),
            base["scepticism"] if scepticism is None else float(scepticism),
        )

    # Rates measured on the heuristic (150 four-player games, heuristic against itself): it calls
    # about one claim in ten, and most Judge blocks of its Hackers; it bluffs a Banker about one turn
    # in eight and a Judge against a Hacker more often than not.
    challenge_rate = 0.10
    block_challenge_rate: ClassVar[dict[str, float]] = {"hacker": 0.65, "foreign_aid": 0.2}
    bluff_rate = 0.13
    #: draws tried before a world is kept whatever its weight (``worlds=reject``) or taken by its
    #: weight among them (``resample``)
    tries = 12
    #: what a world is when none of the ``tries`` draws was kept (the ``worlds`` param; with three or
    #: more players in: face to face always ``reject``, where ``bluff_scale`` was fitted). ``resample``
    #: (sampling-importance-resampling): one of the draws, by its weight. ``reject`` (before
    #: 2026-12-05): the next draw whatever its weight, which at four players, with three opponents'
    #: claims standing, ignored the claims in many worlds: the claimant held the claimed role in 85 %
    #: of `normal`'s chances to challenge and in 54 % of the worlds; resampled (and ``claims=role``)
    #: 63 % (``python -m benchmarks.worlds_truth --players 4 --games 200 --seed 2026 --params …``;
    #: 400 draws would give 69 %). docs/bots.md, "`hard` beside people: truer worlds, no quiet bluffs".
    worlds_rule = "resample"
    WORLDS_RULES = ("reject", "resample")
    #: how a claim's chance of being a bluff is read (the ``claims`` param; with three or more players
    #: in, face to face always ``flat``): ``role``, role by role as the heuristic's own beliefs read it
    #: (``Knowledge.bluff_rate``: a Hacker, which costs $3M, is bluffed less); ``flat`` (before), the
    #: claimant's one rate for every role
    claims = "role"
    CLAIM_RULES = ("flat", "role")
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
        # Face to face the worlds are drawn as before: ``bluff_scale`` was fitted there, and there the
        # search bluffed and won like people; the rules below were measured with three or more in.
        crowd = len(k.living_others()) > 1
        memo.crowd = crowd
        by_role = crowd and str(bot.params.get("claims", self.claims)) != "flat"
        # Each claim standing: the chance that it is a bluff, the claimant's record read role by role
        # as the heuristic reads it (a Hacker, which costs $3M, is bluffed less) or one rate for all.
        claims = [
            (p.seat, role, max(0.05, k.bluff_rate(p.seat, role if by_role else None)) * scale)
            for p in k.living_others()
            for role, on in p.claims.items()
            if on
        ]
        tries = self.tries
        resample = crowd and str(bot.params.get("worlds", self.worlds_rule)) == "resample"

        if not isinstance(game, CapitolGame):
            raise TypeError(f"the Capitol search plays Capitol, not {game.name}")
        deal = game.worlds(view)  # the view read once, the unseen cards dealt anew for each world

        def weight(world: CapitolState) -> float:
            hidden = world.hidden
            w = 1.0
            for seat, role, bluff in claims:
                if role not in hidden[seat]:
                    w *= bluff
            return w

        def draw(rng: Rng) -> GameState:
            world = deal(rng)
            if not claims:
                return world
            drawn: list[tuple[float, CapitolState]] = []
            for _ in range(tries):
                w = weight(world)
                if rng.random() < w:
                    return world
                drawn.append((w, world))
                world = deal(rng)
            if not resample:
                return world
            # No draw was kept: one of them is taken by its weight (sampling-importance-resampling),
            # not the next one whatever its weight (at four players that left the claimed role with the
            # claimant in 54 % of the worlds where it was there in 85 % of the games; see worlds_rule).
            pick = rng.random() * sum(w for w, _ in drawn)
            for w, world in drawn:
                pick -= w
                if pick < 0:
                    return world
            return drawn[-1][1]

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
        my_attack = attack_rate(k.players[me].habits)
        for p in k.living_others():
            # Square roots and narrow bounds: a game shows a handful of challenged claims, so a
            # record is taken halfway (measured: the raw ratios swing from 0.4 to 2.5 within a game).
            bluffing = (1.0 - base["honesty"]) * math.sqrt(k.bluff_rate(p.seat) / my_bluff)
            scepticism = base["scepticism"] * math.sqrt(k.challenge_rate(p.seat) / my_chal)
            aggression = base["aggression"] * math.sqrt(attack_rate(p.habits) / my_attack)
            out[p.seat] = {
                "honesty": min(0.9, max(0.4, 1.0 - bluffing)),
                "scepticism": min(1.6, max(0.5, scepticism)),
                "aggression": min(0.85, max(0.25, aggression)),
            }
        return out

    #: the roles whose claims a table of `normal` (and the rollouts) almost never calls: 1 % of the
    #: chances at four players (55 calls of 8,733 Reporters, 36 of 3,786 Police claims)
    QUIET = ("reporter", "police")
    #: whether the search may bluff a :attr:`QUIET` role its prior did not choose (the ``quiet_bluffs``
    #: param, 0 or 1; with three or more players in: face to face it may). Off: such a bluff looks
    #: free in the rollouts, whose seats call it as seldom, and half of the search's own bluffs at
    #: four players were these (121 of 230 in 400 quick games); left out, it bluffed 17 % of its
    #: action claims instead of 23 %, and won as often (docs/bots.md, "`hard` beside people: truer
    #: worlds, no quiet bluffs").
    quiet_bluffs = 0

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
        if len(k.living_others()) > 1 and not int(bot.params.get("quiet_bluffs", self.quiet_bluffs)):
            # A bluff the table hardly ever calls looks free in the rollouts (their seats call it as
            # seldom), so the search would take it where its prior does not: left to the prior.
            out = [a for a in out if a == prior or CLAIM.get(a["type"], "") not in self.QUIET
                   or CLAIM[a["type"]] in k.hand]
        return out

    #: standard errors a turn's claim of a role the searcher does not hold must clear, on top of the
    #: search's rule (0.02 + 2), to overrule a prior that bluffs nothing (the ``bluff_z`` param; with
    #: three or more players in, and in the flat search only: face to face none, as there the search
    #: already bluffed like people). A best candidate that is such a bluff and falls short is set
    #: aside for the next best. 0: a bluff overrules the prior as any other candidate does (before
    #: 2026-12-05, afternoon). 2: most of `hard`'s bluffs at four players were the search's own, a Hacker
    #: or a Mafia its 20 worlds found paying by a little; asked for twice the evidence, the quick
    #: search's winners bluffed 12.1 % of their action claims instead of 16.3 % (people 12 %), won as
    #: often against three `normal` (56.2 % against 56.8 %, 400 deals) and held its own head to head
    #: against the old rule (docs/bots.md, "`hard` beside people: bluffs that must pay clearly").
    bluff_z = 2.0

    def extra_z(self, bot: ISMCTSBot, view: View, candidate: Action, prior: Action) -> float:
        """:attr:`bluff_z` when ``candidate`` is a turn's claim of a role not in the searcher's hand and
        ``prior`` claims none it lacks, with three or more players in, in the flat search (where it
        was measured); otherwise 0."""
        role = CLAIM.get(candidate["type"])
        if role is None or not isinstance(bot, FlatSearchBot):
            return 0.0
        hand = view["players"][view["you"]]["hidden"]
        if role in hand or sum(1 for p in view["players"] if p["alive"]) < 3:
            return 0.0
        held = CLAIM.get(prior["type"])
        if held is not None and held not in hand:
            return 0.0
        return float(bot.params.get("bluff_z", self.bluff_z))

    #: a quick search face to face (20 worlds: the 30 ms clock's) overrules the heuristic when a
    #: candidate's paired mean beats it by this many standard errors, with no margin, instead of
    #: the full search's 0.02 + 2: fitted to the full search's own decisions (its 200 worlds, world
    #: by world, at 1,134 face-to-face decisions), where 20 worlds judged this way gain 0.038 a
    #: decision over the heuristic (in the rollouts' win probability) against 0.027 at the full
    #: search's rule and 0.044 for the full search itself (``scripts/distill_capitol.py``;
    #: docs/bots.md, "Hard at scale")
    quick_z = 0.75

    def quick_rule(self, bot: ISMCTSBot, view: View) -> tuple[float, float] | None:
        """Face to face only, and for the flat search only (where it was fitted: the tree search's
        visit counts are not its paired worlds): :attr:`quick_z` standard errors, no margin."""
        if not isinstance(bot, FlatSearchBot) or sum(1 for p in view["players"] if p["alive"]) != 2:
            return None
        return 0.0, self.quick_z

    #: what a challenge must gain, in cards, before the searcher's own heuristic (its prior, and its
    #: seat in the rollouts) makes it as a bystander (the ``bystander`` param; the other seats keep
    #: the heuristic's ``capitol.BYSTANDER``, 0.4, as the table is modelled). 0.8: a bystander calls a
    #: Banker only when the claimant holds it with under a one-in-four chance; the heuristic at 0.8
    #: won more four-player games against three `normal` (0.275 against 0.243, 4,000 games each) and
    #: its winners' challenges were right 76 % of the time (people's figure) against 72 %. Face to
    #: face there is no bystander.
    bystander = 0.8

    def _bystander(self, bot: ISMCTSBot) -> float:
        return float(bot.params.get("bystander", self.bystander))

    def _helper(self, bot: ISMCTSBot) -> CapitolHeuristic:
        memo = _memo(bot)
        if memo.prior_helper is None:
            memo.prior_helper = CapitolHeuristic(
                bot.game, bot.seat, seed=bot.rng.next64(), bystander=self._bystander(bot)
            )
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
            # The searcher's own seat plays on as its prior does; the others as the table is modelled.
            players[bot.seat].bystander = self._bystander(bot)
        dials = memo.seat_dials
        base = PERSONALITIES["heuristic"]
        for p in players:
            p.rng = rng
            d = dials.get(p.seat, base)
            p.honesty, p.scepticism, p.aggression = d["honesty"], d["scepticism"], d["aggression"]
        # The searcher's own seat plays on with its prior's dials (as at the root: with three or more in).
        me = players[bot.seat]
        me.honesty, me.scepticism = self._own_dials(bot, memo.crowd)
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
            if seen >= copies_of(s.options, claim) or rng.random() < rate:
                return legal[1]
            if len(legal) > 2:
                # Ruling 6a: the target's one prompt. Not challenging, it answers the block now, as
                # it would have in the block window.
                return self._block(s, hand, [legal[0], *legal[2:]], rng)
            return legal[0]
        if phase is BLOCK:
            return self._block(s, hand, legal, rng)
        if phase is LOSE or phase is RETURN or phase is SHOW:
            return min(legal, key=lambda a: ROLE_VALUE[a["card"]])
        if phase is EXCHANGE:
            return max(legal, key=lambda a: sum(ROLE_VALUE[c] for c in set(a["cards"])))
        if phase is INVESTIGATE:
            shown = s.shown
            strong = shown in ROLE_VALUE and ROLE_VALUE[shown] >= ROLE_VALUE["judge"]
            return legal[1] if strong else legal[0]
        return rng.choice(legal)

    @staticmethod
    def _block(s: CapitolState, hand: list[str], legal: list[Action], rng: Rng) -> Action:
        """Block (``legal``: a pass, then the blocks): with a role it holds, or bluffed, mostly to
        save a card from a Hacker."""
        blocks = [a for a in legal if a["type"] == "block"]
        held = [a for a in blocks if a["card"] in hand]
        if held:
            return held[0]
        hacked = s.action == "hacker"
        if blocks and ((hacked and (len(hand) == 1 or rng.random() < 0.6)) or rng.random() < 0.03):
            return rng.choice(blocks)
        return legal[0]

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
    #: whether three or more players were in at the decision (the searcher's own dials follow it)
    crowd: bool = False
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
