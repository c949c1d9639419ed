"""Information-set Monte Carlo tree search, for any game of the contract.

The bot decides from its seat's view alone. Each iteration draws one world consistent with that view
(``game.determinize(view, rng)``: the hidden cards sampled among those the seat cannot rule out),
walks a tree shared by all worlds, and plays the world out. Statistics are kept per seat and per
integer action (``game.action_table``), with availability counts, as in Cowling, Powley and Whitehouse,
"Information Set Monte Carlo Tree Search" (2012): an action is only compared with the others in the
worlds where it was legal.

Where several seats are awaited at once (Conspiranoicos' simultaneous plays, Capitol's response
windows), every awaited seat picks its action from the node's own statistics without seeing the
others' choice, and the pair is applied in seat order (decoupled UCT). So the search never lets a
seat react to a simultaneous play it could not have seen.

A game may register a :class:`SearchPolicy`: a faster or smarter playout, a cut-off evaluation, or a
decision it answers exactly without search (Conspiranoicos' row ordering).

With ``SearchPolicy.paired_root`` (Capitol) the root compares only the game's candidates, each sampled
world walked after every one of them on the same random numbers, every seat acting by the game's
model (:meth:`SearchPolicy.actor`), the searcher's later decisions in a tree of its own nodes; the
game's own choice stands unless clearly beaten (:meth:`ISMCTSBot._act_paired`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Iterable
from typing import Any

from conflictology.bots import Bot
from conflictology.engine import Action, ActionTable, Game, GameState, IllegalAction, Rng, View


class SearchPolicy:
    """Per-game hooks for the search. The defaults are game-agnostic."""

    #: True: the other seats act by :meth:`playout_action` inside the tree too (an opponent model),
    #: instead of by statistics that, gathered over the searcher's worlds, would know its cards
    model_opponents: bool = False

    #: see :meth:`prior`; 0 turns the prior off
    prior_margin: float = 0.0

    #: playout decisions before the playout is cut off and :meth:`evaluate` scores it (None: to the end)
    playout_limit: int | None = None

    #: True: ISMCTS plays each sampled world after every root candidate in turn, with the same random
    #: numbers (:meth:`ISMCTSBot._act_paired`): a paired comparison at the root, the game's
    #: :meth:`actor` for every seat's default play, and the prior kept unless clearly beaten
    paired_root: bool = False

    #: in the paired search, a decision of the searcher's below the root plays :meth:`actor`'s choice
    #: until its node has been visited this many times, then widens to the candidates one at a time
    widen_after: int = 8

    #: decisions of a paired iteration after which :meth:`evaluate` scores it (None: to the end)
    rollout_limit: int | None = None

    def playout_action(self, state: GameState, seat: int, rng: Rng) -> Action:
        """The action a seat takes in a playout: uniformly random by default."""
        return rng.choice(state.legal_actions(seat))

    def cutoff(self, state: GameState) -> bool:
        """Stop the playout here and score it with :meth:`evaluate` (never, by default)."""
        return False

    def evaluate(self, state: GameState) -> list[float]:
        """Each seat's expected reward in ``state`` (1 shared among the winners once over)."""
        return rewards(state)

    def walk_end(self, bot: ISMCTSBot) -> Callable[[GameState], bool]:
        """A fresh test for one walk of the paired search, asked before each of its decisions: True
        ends the walk there, scored by :meth:`evaluate` (a game may count what the walk has played:
        the test is made anew for every walk). By default :meth:`cutoff`."""
        return self.cutoff

    def sampler(self, bot: ISMCTSBot, view: View) -> Callable[[Rng], GameState]:
        """How worlds are drawn for one decision: uniformly among those the view allows, by default.
        A game may weight them by what the public record suggests (claims, for example)."""
        game = bot.game
        return lambda rng: game.determinize(view, rng)

    def prior(self, bot: ISMCTSBot, view: View, legal: list[Action]) -> Action | None:
        """The game's own choice, which the search must beat by ``prior_margin`` (None: no prior)."""
        return None

    def decide(self, bot: ISMCTSBot, view: View, legal: list[Action]) -> Action | None:
        """A decision the game answers without search (None: search it)."""
        return None

    def candidates(
        self, bot: ISMCTSBot, view: View, legal: list[Action], prior: Action | None
    ) -> list[Action]:
        """The actions a flat search (:class:`FlatSearchBot`) compares: all legal ones by default."""
        return legal

    def rollout(self, bot: ISMCTSBot, state: GameState, rng: Rng) -> list[float]:
        """Play a sampled world to its end (or cut-off) for a flat search; each seat's reward."""
        return bot._playout(state, rng)

    def actor(self, bot: ISMCTSBot, rng: Rng) -> Callable[[GameState, int], Action]:
        """The model of every seat for one iteration of the paired search (a fresh one per
        iteration): the action ``seat`` takes in ``state``. It must decide from that seat's own
        information in the sampled world. Default: :meth:`playout_action` drawing from ``rng``."""
        return lambda state, seat: self.playout_action(state, seat, rng)

    def observe(self, seat: int, actor: int, action: Action, index: int) -> Hashable:
        """What ``seat`` learns when ``actor`` takes ``action`` (the paired search keys its tree by
        it, so worlds that differ only in another seat's hidden choice share a node). Default: the
        action itself."""
        return index

    def check_params(self, params: dict[str, Any]) -> None:
        """Raise ``ValueError``, with what is wrong, for a param of this game's search that is out
        of range (asked once, when the bot is made, so a bad spec is refused before any game)."""

    def prior_iterations(self, view: View, legal: list[Action]) -> float:
        """A multiplier on the iteration budget for this decision (1: the budget as given)."""
        return 1.0

    def quick_rule(self, bot: ISMCTSBot, view: View) -> tuple[float, float] | None:
        """How clearly a candidate must beat the prior in a quick flat search (``margin``, ``z``), or
        None for the search's own (``prior_margin`` and two standard errors)."""
        return None

    def extra_z(self, bot: ISMCTSBot, view: View, candidate: Action, prior: Action) -> float:
        """Standard errors a ``candidate`` must clear on top of the rule's to overrule ``prior`` (0:
        none; a game may ask more of some candidates, as Capitol of a bluff against an honest prior)."""
        return 0.0


_POLICIES: dict[str, SearchPolicy] = {}
_DEFAULT_POLICY = SearchPolicy()


def register_policy(game_name: str, policy: SearchPolicy) -> None:
    _POLICIES[game_name] = policy


def policy_for(game: Game) -> SearchPolicy:
    return _POLICIES.get(game.name, _DEFAULT_POLICY)


def rewards(state: GameState) -> list[float]:
    """1 for a lone winner, 1/k each for k winners sharing a victory, 0 for everyone else."""
    winners = state.winners()
    out = [0.0] * state.num_players
    for w in winners:
        out[w] = 1.0 / len(winners)
    return out


class _Node:
    """One node of the shared tree: per-seat action statistics and children by joint action."""

    __slots__ = ("children", "stats", "visits")

    def __init__(self) -> None:
        # stats[seat][action index] = [visits, total reward for that seat, availability]
        self.stats: dict[int, dict[int, list[float]]] = {}
        self.children: dict[tuple[tuple[int, Hashable], ...], _Node] = {}
        #: times a paired iteration decided at this node (the searcher's decisions only)
        self.visits = 0


class ISMCTSBot(Bot):
    """Single-observer ISMCTS with decoupled simultaneous moves.

    Params: ``iterations`` (per decision; default 400), ``seconds`` (a wall-clock cap per decision;
    default none), ``exploration`` (the UCB constant; default 0.7), ``margin`` (how much better than
    the prior an override must be), and for the paired search ``paired`` (1/0; default the policy's),
    ``widen`` (visits before a later decision leaves the model's choice) and ``z`` (standard errors
    on top of ``margin``), and ``quick`` (1/0: see :attr:`quick_iterations`). Under an iteration
    budget alone (``seconds`` out of reach), a given seed and view give the same decision.
    """

    name = "ismcts"

    #: a budget this small (in iterations, or seconds on the clock) makes a quick search, which
    #: weighs the game's prior on its :meth:`SearchPolicy.quick_rule` (the ``quick`` param, 1/0, says
    #: so whatever the budget; a ``z`` given keeps its own): the pool's ``hard:seconds=0.03`` and the
    #: 200 iterations that stand for it; ``hard``'s 0.3 s and its 2,000 iterations stay full searches
    quick_iterations = 500
    quick_seconds = 0.1

    def __init__(self, game: Game, seat: int, seed: int | None = None, **params: Any) -> None:
        super().__init__(game, seat, seed, **params)
        self.iterations = int(params.get("iterations", 400))
        seconds = params.get("seconds")
        self.seconds: float | None = None if seconds is None else float(seconds)
        self.exploration = float(params.get("exploration", 0.7))
        self.policy = policy_for(game)
        #: how much better (in win probability) the search's pick must be to overrule the prior
        self.prior_margin = float(params.get("margin", self.policy.prior_margin))
        #: compare the root's candidates world by world (see :meth:`_act_paired`)
        self.paired = bool(int(params.get("paired", int(self.policy.paired_root))))
        #: own decisions below the root follow the game's model until visited this many times
        self.widen_after = max(1, int(params.get("widen", self.policy.widen_after)))
        #: standard errors of the paired difference an override of the prior must clear
        self.params_z = float(params.get("z", 2.0))
        if self.iterations < 1:
            raise ValueError("iterations must be at least 1")
        quick = params.get("quick")
        if quick is not None and str(quick) not in ("0", "1"):
            raise ValueError(f"quick must be 0 or 1, not {quick!r}")
        small = self.iterations <= self.quick_iterations or (
            self.seconds is not None and self.seconds <= self.quick_seconds
        )
        self.quick = small if quick is None else bool(int(quick))
        self.policy.check_params(params)
        #: iterations run by the last decision (benchmarks read it)
        self.last_iterations = 0
        #: the prior the flat search's last decision weighed (None: no search ran; benchmarks read
        #: it: ``benchmarks/bots_like_people.py --census`` splits a search's challenges by it)
        self.last_prior: Action | None = None
        #: the root statistics of the last decision: action index -> (visits, mean reward)
        self.last_root_stats: dict[int, tuple[int, float]] = {}
        #: the paired search's tree of the last decision (tests read it)
        self.last_tree: _Node | None = None
        self.total_iterations = 0
        self.total_seconds = 0.0
        self._table: ActionTable = game.action_table
        #: what the game's search policy keeps on this bot (the policy object is shared by every bot;
        #: its own type: Capitol's ``_SearchMemo``)
        self.policy_memo: object | None = None

    def act(self, view: View, legal: list[Action]) -> Action:
        if not legal:
            raise IllegalAction(f"seat {self.seat} has no legal action")
        if len(legal) == 1:
            return legal[0]
        shortcut = self.policy.decide(self, view, legal)
        if shortcut is not None:
            return shortcut
        start = time.perf_counter()
        # A game whose table depends on the state (Conspiranoicos with another deck file) carries it.
        table = getattr(self.game.determinize(view, self.rng.copy()), "action_table", self.game.action_table)
        self._table = table
        legal_idx = [table.index(a) for a in legal]
        budget = max(1, int(self.iterations * self.policy.prior_iterations(view, legal)))
        deadline = None if self.seconds is None else start + self.seconds
        if self.paired:
            try:
                return self._act_paired(view, legal, budget, deadline)
            finally:
                self.total_seconds += time.perf_counter() - start
        rule = self.policy.quick_rule(self, view) if self.quick and "z" not in self.params else None
        # A quick search asks for the game's prior first, so that its clock covers it (the
        # heuristic takes milliseconds of a 30 ms clock); the full search asks after, as before.
        quick_prior = self.policy.prior(self, view, legal) if rule is not None else None
        root = _Node()
        done = 0
        draw = self.policy.sampler(self, view)
        while done < budget:
            world = draw(self.rng)
            self._iterate(root, world)
            done += 1
            if deadline is not None and time.perf_counter() >= deadline:
                break
        self.last_iterations = done
        mine = root.stats.get(self.seat, {})
        self.last_root_stats = {idx: (int(e[0]), _mean(e)) for idx, e in mine.items()}
        self.total_iterations += done
        self.total_seconds += time.perf_counter() - start
        # The most visited action wins; ties go to the higher mean, then to the listed order.
        best = max(
            range(len(legal)),
            key=lambda i: (
                mine.get(legal_idx[i], (0, 0.0))[0],
                _mean(mine.get(legal_idx[i])),
                -i,
            ),
        )
        margin, z = self.prior_margin, self.params_z
        if rule is not None:
            margin, z = rule
            prior = quick_prior
        elif margin <= 0:
            return legal[best]  # no prior to weigh (the game's prior is not even asked)
        else:
            prior = self.policy.prior(self, view, legal)
        if prior is not None and prior in legal:
            # Search-verified heuristic: keep the game's own choice unless the search found an
            # action clearly better (by ``margin`` in win probability) and well explored.
            p = legal.index(prior)
            p_entry = mine.get(legal_idx[p])
            b_entry = mine.get(legal_idx[best])
            if best != p and p_entry is not None and b_entry is not None:
                # ``z`` standard errors of a win rate (variance at most 1/4) on top of the margin.
                noise = z * math.sqrt(0.25 / max(1, b_entry[0]) + 0.25 / max(1, p_entry[0]))
                if _mean(b_entry) - _mean(p_entry) < margin + noise:
                    return legal[p]
            elif best != p:
                return legal[p]  # the search never tried the prior's action: keep it
        return legal[best]

    # -- the paired search -------------------------------------------------------------------------
    def _act_paired(self, view: View, legal: list[Action], budget: int, deadline: float | None) -> Action:
        """ISMCTS whose root compares the game's candidates on common random numbers.

        Each round draws one world from the view and one seed; the world is then played once after
        every candidate in turn, each time with a fresh :meth:`SearchPolicy.actor`
        drawing from that seed, so two candidates are compared world by world (a paired difference).
        Below the root the walk follows the searcher's tree (its own decisions only, keyed by what it
        observed in between): per-seat statistics with availability counts, the model's choice until a
        node has been visited ``widen_after`` times, then UCB over the model's choice and the
        candidates, one more per doubling of the visits. The other seats act by the model from their
        own cards. The prior (the game's own choice) stands unless the best candidate beats it by
        ``margin`` plus ``z`` standard errors of the paired difference.
        """
        policy = self.policy
        table = self._table
        prior = policy.prior(self, view, legal)
        cands = list(policy.candidates(self, view, legal, prior))
        if prior is not None and prior not in cands:
            cands = [prior, *cands]
        if len(cands) == 1:
            self.last_iterations = 0
            self.last_root_stats = {}
            return cands[0]
        cidx = [table.index(a) for a in cands]
        p = cands.index(prior) if prior is not None else None
        draw = policy.sampler(self, view)
        root = _Node()
        # results[j][r]: the searcher's reward in round r after candidate j
        results: list[list[float]] = [[] for _ in cands]
        rounds = done = 0
        while done < budget:
            world = draw(self.rng)
            seed = self.rng.next64()
            row: list[float] = []
            for j in range(len(cands)):
                if deadline is not None and time.perf_counter() >= deadline:
                    break
                row.append(self._paired_iteration(root, world.clone(), cidx, cidx[j], Rng(seed)))
                done += 1
            if len(row) < len(cands):
                break  # out of time mid-round: the round is not paired, leave it out
            for j, reward in enumerate(row):
                results[j].append(reward)
            rounds += 1
            if deadline is not None and time.perf_counter() >= deadline:
                break
        self.last_iterations = done
        self.total_iterations += done
        self.last_tree = root
        mine = root.stats.get(self.seat, {})
        self.last_root_stats = {idx: (int(e[0]), _mean(e)) for idx, e in mine.items()}
        if rounds == 0:
            return cands[p] if p is not None else cands[0]
        means = [sum(r) / rounds for r in results]
        if p is None or self.prior_margin <= 0:
            return cands[max(range(len(cands)), key=lambda j: (means[j], -j))]
        return _overrule(self, view, cands, results, means, p, self.prior_margin, self.params_z)

    def _paired_iteration(
        self, root: _Node, state: GameState, root_options: list[int], first: int, rng: Rng
    ) -> float:
        """One walk: ``first`` at the root, then the searcher's tree, then the model to the end."""
        policy = self.policy
        table = self._table
        me = self.seat
        act = policy.actor(self, rng)
        stop = policy.walk_end(self)
        path: list[tuple[_Node, list[int], int]] = [(root, root_options, first)]
        root.visits += 1
        events: list[tuple[int, Hashable]] = [(me, first)]
        state.apply_index(me, first)
        node: _Node | None = root
        expanded = False
        limit = policy.rollout_limit
        steps = 0
        while True:
            awaited = state.waiting_for()
            if not awaited:
                reward = rewards(state)
                break
            if (limit is not None and steps >= limit) or stop(state):
                reward = policy.evaluate(state)
                break
            steps += 1
            own = None
            if node is not None and me in awaited:
                own_legal = state.legal_action_indices(me)
                if len(own_legal) > 1:
                    # One of the searcher's decisions: find (or grow) its node in the tree.
                    key = tuple(events)
                    events = []
                    child = node.children.get(key)
                    if child is None:
                        if expanded:
                            node = None
                        else:
                            child = node.children[key] = _Node()
                            expanded = True
                    if child is not None:
                        node = child
                        own, options = self._select_own(node, state, own_legal, act)
                        node.visits += 1
                        path.append((node, options, own))
            if own is None:
                seat = awaited[0]
                action = act(state, seat)
                if node is None:
                    state.apply(seat, action)  # past the tree: no index to record
                    continue
                idx = table.index(action)
                state.apply_index(seat, idx)
                seen = idx if seat == me else policy.observe(me, seat, action, idx)
                events.append((seat, seen))
                continue
            # The searcher chose without seeing what the seats awaited with it do; apply in seat order.
            for seat in awaited:
                if seat not in state.waiting_for():
                    continue  # e.g. a response window closed by an earlier seat's challenge
                if seat == me:
                    if state.legal_action_indices(me) != own_legal:
                        # An earlier seat moved the game on (a block opens a new window): the choice
                        # was for another decision, even where the same action is legal in the new
                        # one (a pass), so it is moot; the searcher decides again at the next step.
                        path.pop()[0].visits -= 1
                        continue
                    state.apply_index(me, own)
                    events.append((me, own))
                else:
                    action = act(state, seat)
                    idx = table.index(action)
                    state.apply_index(seat, idx)
                    events.append((seat, policy.observe(me, seat, action, idx)))
        r = reward[me]
        for n, options, chosen in path:
            stats = n.stats.setdefault(me, {})
            _mark_available(stats, options)
            entry = stats[chosen]
            entry[0] += 1
            entry[1] += r
        return r

    def _select_own(
        self, node: _Node, state: GameState, legal_idx: list[int], act: Callable[[GameState, int], Action]
    ) -> tuple[int, list[int]]:
        """The searcher's action at a node below the root, and the options it was chosen among."""
        table = self._table
        default = table.index(act(state, self.seat))
        n = node.visits
        if n < self.widen_after:
            return default, [default]
        width = 2 + int(math.log2(n / self.widen_after))
        view = state.view(self.seat)
        legal = state.legal_actions(self.seat)
        ranked = [table.index(a) for a in self.policy.candidates(self, view, legal, table.action(default))]
        options = [default]
        for idx in ranked:
            if idx not in options and idx in legal_idx:
                options.append(idx)
            if len(options) >= width:
                break
        stats = node.stats.get(self.seat, {})
        for idx in options:  # an option not tried yet first, in the model's order
            if idx not in stats or stats[idx][0] == 0:
                return idx, options
        c = self.exploration
        best, best_score = default, -math.inf
        for idx in options:
            visits, total, avail = stats[idx]
            score = total / visits + c * math.sqrt(math.log(max(avail, 1)) / visits)
            if score > best_score:
                best, best_score = idx, score
        return best, options

    # -- one iteration ------------------------------------------------------------------------------
    def _iterate(self, root: _Node, state: GameState) -> None:
        path: list[tuple[_Node, list[tuple[int, int]], dict[int, list[int]]]] = []
        node = root
        expanded = False
        policy = self.policy
        while not expanded:
            awaited = state.waiting_for()
            if not awaited or policy.cutoff(state):
                break
            model = policy.model_opponents
            options: dict[int, list[int]] = {
                s: state.legal_action_indices(s) for s in awaited if not model or s == self.seat
            }
            chosen: list[tuple[int, int]] = []
            for seat in awaited:
                if seat in options:
                    idx, new = self._select(node, seat, options[seat])
                    expanded = expanded or new
                else:
                    # Another seat, played by the game's model of a player: its choice is made in
                    # the sampled world (its own cards), not from statistics gathered over our worlds.
                    idx = self._table.index(policy.playout_action(state, seat, self.rng))
                chosen.append((seat, idx))
            applied = self._apply_joint(state, chosen)
            path.append((node, applied, options))
            key = tuple(applied)
            child = node.children.get(key)
            if child is None:
                child = node.children[key] = _Node()
                expanded = True
            node = child
        reward = self._playout(state)
        for n, applied, options in path:
            for seat, idxs in options.items():
                _mark_available(n.stats.setdefault(seat, {}), idxs)
            for seat, idx in applied:
                if seat in options:
                    entry = n.stats[seat][idx]
                    entry[0] += 1
                    entry[1] += reward[seat]

    def _select(self, node: _Node, seat: int, options: list[int]) -> tuple[int, bool]:
        """UCB over the actions legal in this world; an untried action first (True: new)."""
        if len(options) == 1:
            stats = node.stats.get(seat)
            entry = stats.get(options[0]) if stats else None
            return options[0], entry is None or entry[0] == 0
        stats = node.stats.get(seat)
        if stats is None:
            return self.rng.choice(options), True
        untried = [i for i in options if i not in stats or stats[i][0] == 0]
        if untried:
            return self.rng.choice(untried), True
        c = self.exploration
        best = options[0]
        best_score = -math.inf
        for idx in options:
            n, w, avail = stats[idx]
            score = w / n + c * math.sqrt(math.log(avail) / n)
            if score > best_score:
                best, best_score = idx, score
        return best, False

    def _apply_joint(self, state: GameState, chosen: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Apply each seat's choice in seat order; a choice the earlier ones made moot is dropped."""
        applied: list[tuple[int, int]] = []
        for seat, idx in chosen:
            if applied and seat not in state.waiting_for():
                continue  # e.g. a response window closed by an earlier seat's challenge
            try:
                state.apply_index(seat, idx)
            except IllegalAction:
                continue
            applied.append((seat, idx))
        if not applied:  # cannot happen with a consistent engine; never loop forever
            raise RuntimeError(f"none of {chosen} could be applied")
        return applied

    def _playout(self, state: GameState, rng: Rng | None = None) -> list[float]:
        policy = self.policy
        rng = self.rng if rng is None else rng
        limit = policy.playout_limit
        steps = 0
        while True:
            awaited = state.waiting_for()
            if not awaited:
                return rewards(state)
            if (limit is not None and steps >= limit) or policy.cutoff(state):
                return policy.evaluate(state)
            seat = awaited[0]
            state.apply(seat, policy.playout_action(state, seat, rng))
            steps += 1


class FlatSearchBot(ISMCTSBot):
    """Flat Monte Carlo over determinizations (perfect-information Monte Carlo with the seat's view).

    For one decision, every world drawn from the view (the game's :meth:`SearchPolicy.sampler`) is
    played out once after each candidate action (:meth:`SearchPolicy.candidates`) with the same
    random numbers, by the game's :meth:`SearchPolicy.rollout` (in Capitol: every seat played by the
    heuristic from its own view of that world). Common random numbers make the comparison of two
    candidates a paired one: their difference is measured world by world. The game's own choice
    (:meth:`SearchPolicy.prior`) stands unless another candidate beats it by ``margin`` plus two
    standard errors of that paired difference.

    Params as :class:`ISMCTSBot`; ``iterations`` counts worlds (each played once per candidate);
    ``margin`` and ``z`` (standard errors) set how clearly a candidate must beat the prior.
    """

    name = "pimc"

    #: the flat search's iterations are worlds, each played after every candidate: 50 make it quick
    #: (20 stand for the 30 ms clock), ``hard``'s 0.3 s and the 200-world measure stay full searches
    quick_iterations = 50

    def __init__(self, game: Game, seat: int, seed: int | None = None, **params: Any) -> None:
        super().__init__(game, seat, seed, **params)
        #: the last decision's candidates and each candidate's reward world by world, beside its
        #: ``last_prior`` (``scripts/distill_capitol.py`` reads them)
        self.last_candidates: list[Action] = []
        self.last_results: list[list[float]] = []

    def act(self, view: View, legal: list[Action]) -> Action:
        self.last_prior = None
        if not legal:
            raise IllegalAction(f"seat {self.seat} has no legal action")
        if len(legal) == 1:
            return legal[0]
        policy = self.policy
        shortcut = policy.decide(self, view, legal)
        if shortcut is not None:
            return shortcut
        start = time.perf_counter()
        prior = policy.prior(self, view, legal)
        self.last_prior = prior
        cands = policy.candidates(self, view, legal, prior)
        if prior is not None and prior not in cands:
            cands = [prior, *cands]
        self.last_iterations = 0
        self.last_root_stats = {}
        if len(cands) == 1:
            return cands[0]
        budget = max(1, int(self.iterations * policy.prior_iterations(view, legal)))
        deadline = None if self.seconds is None else start + self.seconds
        draw = policy.sampler(self, view)
        results: list[list[float]] = [[] for _ in cands]
        done = tries = 0
        longest = 0.0  # the longest world so far (sampled and played after every candidate)
        while done < budget and tries < 2 * budget:
            if deadline is not None and tries and time.perf_counter() + longest > deadline:
                break  # the next world would likely end past the clock: keep the decision within it
            began = time.perf_counter()
            tries += 1
            world = draw(self.rng)
            # A state that carries its own table (Conspiranoicos with another deck file) is honoured.
            self._table = getattr(world, "action_table", self.game.action_table)
            seed = self.rng.next64()
            row: list[float] = []
            for action in cands:
                state = world.clone()
                try:
                    state.apply(self.seat, action)
                except IllegalAction:
                    break  # cannot happen with a consistent determinization: drop the world
                row.append(policy.rollout(self, state, Rng(seed))[self.seat])
            if len(row) == len(cands):
                for j, r in enumerate(row):
                    results[j].append(r)
                done += 1
            now = time.perf_counter()
            longest = max(longest, now - began)
            if deadline is not None and now >= deadline:
                break
        self.last_iterations = done
        self.total_iterations += done
        self.total_seconds += time.perf_counter() - start
        self.last_candidates, self.last_results, self.last_prior = cands, results, prior
        if done == 0:
            return prior if prior is not None else cands[0]
        means = [sum(r) / done for r in results]
        self.last_root_stats = {self._table.index(a): (done, m) for a, m in zip(cands, means, strict=True)}
        if prior is None or self.prior_margin <= 0:
            return cands[max(range(len(cands)), key=lambda j: (means[j], -j))]
        margin, z = self.prior_margin, self.params_z
        if self.quick and "z" not in self.params:
            margin, z = policy.quick_rule(self, view) or (margin, z)
        return _overrule(self, view, cands, results, means, cands.index(prior), margin, z)


def flat_factory(**defaults: Any) -> Callable[..., Bot]:
    """A registry factory for the flat search with default params (a caller's params override them)."""

    def make(game: Game, seat: int, seed: int | None = None, **params: Any) -> Bot:
        return FlatSearchBot(game, seat, seed, **{**defaults, **params})

    return make


def _overrule(
    bot: ISMCTSBot,
    view: View,
    cands: list[Action],
    results: list[list[float]],
    means: list[float],
    p: int,
    margin: float,
    z: float,
) -> Action:
    """The prior ``cands[p]`` unless the best candidate beats it by ``margin`` plus ``z`` standard
    errors of their paired difference, plus the candidate's :meth:`SearchPolicy.extra_z`. A best
    candidate that clears the rule but not its extra is set aside and the next best is weighed the
    same way (with no extra asked of any candidate, the best one alone is weighed, as before)."""
    left = list(range(len(cands)))
    while True:
        best = max(left, key=lambda j: (means[j], -j))
        if best == p:
            return cands[p]
        mean, se = _paired(results[best], results[p])
        if mean <= margin + z * se:
            return cands[p]
        extra = bot.policy.extra_z(bot, view, cands[best], cands[p])
        if extra <= 0 or mean > margin + (z + extra) * se:
            return cands[best]
        left.remove(best)


def _paired(a: list[float], b: list[float]) -> tuple[float, float]:
    """The mean of the paired differences a - b and its standard error (1 with a single pair)."""
    n = len(a)
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    mean = sum(diffs) / n
    if n < 2:
        return mean, 1.0
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    return mean, math.sqrt(var / n)


def _mark_available(stats: dict[int, list[float]], options: Iterable[int]) -> None:
    """Availability counts (Cowling et al.): each option legal in this walk's world was available."""
    for idx in options:
        entry = stats.get(idx)
        if entry is None:
            stats[idx] = [0, 0.0, 1]
        else:
            entry[2] += 1


def _mean(entry: list[float] | tuple[int, float] | None) -> float:
    if not entry or not entry[0]:
        return 0.0
    return entry[1] / entry[0]


def factory(**defaults: Any) -> Callable[..., Bot]:
    """A registry factory for ISMCTS with default params (a caller's params override them)."""

    def make(game: Game, seat: int, seed: int | None = None, **params: Any) -> Bot:
        return ISMCTSBot(game, seat, seed, **{**defaults, **params})

    return make
