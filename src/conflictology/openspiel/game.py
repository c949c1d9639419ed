"""The engine's games as OpenSpiel Python games: one adapter over the engine contract, no rules.

Everything a state does is the engine's: ``waiting_for`` gives the player to move, the action table
numbers the actions, ``apply_index`` plays them, ``view`` is all a seat observes, ``clone`` and
``to_json`` copy and serialise. The adapter only translates (docs/rl.md, "OpenSpiel"):

* **Who moves.** Capitol is SEQUENTIAL. Its response windows await several seats at once, any of
  whom may answer; they are asked one at a time in seat order, the order the engine lists them in
  (a pass is final and the next seat is asked; the first challenge or block closes the window), as
  the PettingZoo environment does. A simultaneous node would need a rule the rulebook does not have
  (who goes first when two seats challenge at once), and OpenSpiel's search algorithms (ISMCTS,
  MCTS) take sequential games only. Conspiranoicos is SIMULTANEOUS: where both seats are awaited
  (the hidden plays, the rows built card by card) they move together in one joint action. With
  ``turn_based=True`` it is SEQUENTIAL instead, seat 0 then seat 1, for the algorithms that need it;
  that leaks nothing, since until both are in, a seat sees only the back of the other's play (which
  the rules show) and how many row cards it placed.
* **Chance** is SAMPLED_STOCHASTIC: shuffles and draws happen inside the engine, from the seeded
  generator the state carries (and copies, and serialises). There are no chance nodes; the deal of
  a new state comes from the ``seed`` parameter (``-1``: a fresh seed for every new game).
* **Information.** ``information_state_string`` is the seat's trace (memory.py): its views, step
  by step, and its own actions, so it is perfect recall and holds nothing the seat was not shown.
  ``observation_string`` is its view now (without the log) and the events it has just been shown;
  ``observation_tensor`` is the PettingZoo encoder's vector of the same view (docs/rl.md).
* **Returns** are zero-sum: a lone winner +1, each loser -1/(n-1); a shared victory among k seats
  gives each winner (n/k - 1)/(n - 1) (Conspiranoicos' shared victory: 0 and 0). Each game's
  ``max_game_length`` bounds every game by its rules (Capitol's stalemate rule ends a game at 2,000
  decisions and the end of that turn: ``capitol_length_bound``); given smaller, a game still running
  after that many moves is cut there, every seat 0.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyspiel

from conflictology import games
from conflictology.engine import ActionTable, Game, GameState, IllegalAction, Rng, View
from conflictology.games.capitol import data as capitol_data
from conflictology.openspiel import chance
from conflictology.openspiel import options as option_parameters
from conflictology.openspiel.memory import SeatMemory, Traces, flatten, value_text
from conflictology.rl.encoding import encoder_for

PREFIX = "python_conflictology_"
DEALING = "dealing"  # every seat's information state before an explicit-chance game's deal


@dataclass(frozen=True)
class Spec:
    """How one engine game is presented to OpenSpiel."""

    name: str  # the OpenSpiel name after the prefix
    simultaneous: bool
    max_game_length: int  # moves; a bound on every game (Conspiranoicos) or a cut (Capitol)
    # View fields that are the same in every state of a game (the deck's public card list): left out
    # of the strings, which they would only lengthen; the game's parameters already say them.
    static: tuple[str, ...] = ()
    engine: str = ""  # the engine game's name, when not ``name`` (a variant's)
    # A variant: its parameters' defaults (rule options, spelt as parameters) and its table sizes.
    params: tuple[tuple[str, Any], ...] = ()
    players: tuple[int, int] | None = None
    # Every shuffle and draw an explicit chance node (chance.py), for exact algorithms: a small game only.
    explicit_chance: bool = False

    @property
    def game(self) -> str:
        return self.engine or self.name


def capitol_length_bound() -> int:
    """Every Capitol game's length in moves (one move is one engine decision): the stalemate rule
    ends a game at the end of the turn in which its ``MOVE_CAP``-th decision is made, so the bound is
    the cap plus the longest rest of a turn at the largest table. A turn's decisions: the action, a
    challenge window and a block window (a pass from every other seat), a block's challenge window
    (every seat but the blocker's, with ``anyone_challenges_block``), two losses (ruling 11), and one
    return, exchange, show or Police choice."""
    others = capitol_data.MAX_PLAYERS - 1
    return capitol_data.MOVE_CAP + 1 + 3 * others + 2 + 2


SPECS = {
    "capitol": Spec("capitol", simultaneous=False, max_game_length=capitol_length_bound()),
    # Six rounds of two plays, a send and a keep; two specials; twelve row cards: 38 moves at most.
    "conspiranoicos": Spec("conspiranoicos", simultaneous=True, max_game_length=38, static=("cards",)),
    # The mini variant (docs/rules/capitol.md, "Small variants"; docs/rl.md): two players, one card
    # each from one Banker, one Hacker and one Judge, four turns. Small enough for exact CFR.
    "capitol_mini": Spec(
        "capitol_mini",
        simultaneous=False,
        max_game_length=capitol_length_bound(),
        engine="capitol",
        params=(("roles", "banker+hacker+judge"), ("copies", 1), ("influence", 1), ("stalemate_turns", 4)),
        players=(2, 2),
        explicit_chance=True,
    ),
}


def table_of(state: GameState) -> ActionTable:
    """The state's action table: a Conspiranoicos state dealt from another deck file numbers its
    actions by its own deck (docs/engine.md); otherwise the game's."""
    own = getattr(state, "action_table", None)
    return own if isinstance(own, ActionTable) else state.game.action_table


def action_text(table: ActionTable, index: int) -> str:
    """An action of the table as its type and fields: ``mafia target=2``, ``send card=G0 to=zone``."""
    action = table.action(index)
    fields = " ".join(f"{k}={value_text(action[k])}" for k in sorted(action) if k != "type")
    return f"{action['type']} {fields}".rstrip()


def returns_for(winners: list[int], players: int) -> list[float]:
    if not winners:
        return [0.0] * players
    k = len(winners)
    win, lose = (players / k - 1) / (players - 1), -1 / (players - 1)
    return [win if seat in winners else lose for seat in range(players)]


class EngineHandle:
    """Holds an engine state inside an OpenSpiel state.

    OpenSpiel clones a Python state by deep-copying its attributes and serialises it by pickling
    them; this handle turns both into the engine's own ``clone`` and ``to_json``/``from_json``.
    """

    __slots__ = ("name", "state")

    def __init__(self, name: str, state: GameState) -> None:
        self.name, self.state = name, state

    def __deepcopy__(self, memo: dict[int, Any]) -> EngineHandle:
        return EngineHandle(self.name, self.state.clone())

    def __reduce__(self) -> tuple[Any, tuple[str, str]]:
        return (_restore, (self.name, self.state.to_json()))


def _restore(name: str, text: str) -> EngineHandle:
    return EngineHandle(name, games.get(name).from_json(text))


def game_type(spec: Spec, *, sequential: bool | None = None) -> Any:
    engine = games.get(spec.game)
    low, high = spec.players or (engine.min_players, engine.max_players)
    params: dict[str, Any] = {
        "players": low,
        "seed": -1,
        "max_game_length": spec.max_game_length,
        **option_parameters.defaults(engine),
        **dict(spec.params),
    }
    if spec.simultaneous:
        params["turn_based"] = False
    simultaneous = spec.simultaneous if sequential is None else not sequential
    return pyspiel.GameType(
        short_name=PREFIX + spec.name,
        long_name=engine.title,
        dynamics=(
            pyspiel.GameType.Dynamics.SIMULTANEOUS if simultaneous else pyspiel.GameType.Dynamics.SEQUENTIAL
        ),
        chance_mode=(
            pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
            if spec.explicit_chance
            else pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC
        ),
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=high,
        min_num_players=low,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=params,
    )


class ConflictologyGame(pyspiel.Game):  # type: ignore[misc]  # pyspiel ships no type information
    """One engine game with its parameters: ``players``, ``seed``, ``max_game_length``, for a
    simultaneous game ``turn_based``, and one per rule option of the engine (options.py)."""

    spec: Spec

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        spec = self.spec
        given = dict(params or {})
        self.engine: Game = games.get(spec.game)
        low, high = spec.players or (self.engine.min_players, self.engine.max_players)
        self.players = int(given.get("players", low))
        self.engine.check_players(self.players)
        if not low <= self.players <= high:
            raise ValueError(f"{PREFIX}{spec.name} is played by {low}–{high} players, got {self.players}")
        self.seed = int(given.get("seed", -1))
        self.options: dict[str, Any] = option_parameters.engine_options(
            self.engine, {**dict(spec.params), **given}
        )
        probe = self.engine.new_game(self.players, seed=0, options=self.options)  # refuses a bad option
        self.turn_based = bool(given.get("turn_based", False))
        self.simultaneous = spec.simultaneous and not self.turn_based
        self.cut = int(given.get("max_game_length", spec.max_game_length))
        n = self.players
        self.deals = (
            chance.deals(capitol_data.deck_in(self.options), self.options["first_player"], n)
            if spec.explicit_chance
            else []
        )
        info = pyspiel.GameInfo(
            num_distinct_actions=table_of(probe).size,
            max_chance_outcomes=len(self.deals),
            num_players=n,
            min_utility=-1.0 / (n - 1),
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=self.cut,
        )
        super().__init__(game_type(spec, sequential=not self.simultaneous), info, given)
        self.encoder = encoder_for(spec.game)

    def new_engine_state(self) -> GameState:
        seed = Rng.fresh_seed() if self.seed < 0 else self.seed
        return self.engine.new_game(self.players, seed=seed, options=self.options)

    def new_initial_state(self) -> ConflictologyState:
        if self.spec.explicit_chance:  # the deal is the first chance node
            state = ConflictologyState(self, self.dealt(0))
            state._chance = [(p, ("deal", i)) for i, (p, _, _) in enumerate(self.deals)]
            return state
        return ConflictologyState(self, self.new_engine_state())

    def dealt(self, index: int) -> GameState:
        """The engine state of deal ``index`` of an explicit-chance game (its generator: chance.AFTER)."""
        _, order, first = self.deals[index]
        options = {**self.options, "first_player": first}
        return self.engine.new_game(self.players, seed=chance.AFTER, options=options, deck=list(order))

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> Observer:
        return Observer(self, iig_obs_type, params)


class ConflictologyState(pyspiel.State):  # type: ignore[misc]
    """An engine state seen through OpenSpiel (see the module docstring)."""

    def __init__(self, game: ConflictologyGame, engine_state: GameState) -> None:
        super().__init__(game)
        # Only plain attributes: OpenSpiel copies and pickles this object's __dict__.
        self._name = game.spec.game
        self._spec = game.spec.name
        self._players = game.players
        self._simultaneous = game.simultaneous
        self._cut = game.cut
        self._moves = 0
        self._engine = EngineHandle(self._name, engine_state)
        self._traces = Traces(engine_state, game.spec.static)
        # An explicit-chance game: the outcomes of the chance node this state is (None: not one),
        # each a probability and what it is, ("deal", index) or ("move", seat, action, script).
        self._explicit = game.spec.explicit_chance
        self._chance: list[tuple[float, tuple[Any, ...]]] | None = None

    # -- the engine inside ------------------------------------------------------------------------
    @property
    def engine_state(self) -> GameState:
        """The engine state itself (its ``view(seat)`` is what that seat sees)."""
        return self._engine.state

    def _game(self) -> Game:
        return games.get(self._name)

    def _memory(self, seat: int) -> SeatMemory:
        table = table_of(self._engine.state)
        return self._traces.current(lambda index: action_text(table, index))[seat]

    def _cut_short(self) -> bool:
        return self._moves >= self._cut and not self._engine.state.is_over()

    # -- OpenSpiel's API --------------------------------------------------------------------------
    def current_player(self) -> int:
        state = self._engine.state
        if self._chance is not None:
            return int(pyspiel.PlayerId.CHANCE)
        if state.is_over() or self._cut_short():
            return int(pyspiel.PlayerId.TERMINAL)
        waiting = state.waiting_for()
        if self._simultaneous and len(waiting) > 1:
            if len(waiting) != self._players:
                raise RuntimeError(f"a simultaneous move must await every seat, got {waiting}")
            return int(pyspiel.PlayerId.SIMULTANEOUS)
        return waiting[0]

    def _legal_actions(self, player: int) -> list[int]:
        if self._chance is not None:
            return list(range(len(self._chance)))
        return sorted(self._engine.state.legal_action_indices(player))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return [] if self._chance is None else [(i, p) for i, (p, _) in enumerate(self._chance)]

    def _apply_action(self, action: int) -> None:
        if self._chance is not None:
            self._resolve_chance(int(action))
            return
        player = self.current_player()
        if self._explicit:
            index = int(action)
            if index not in self._engine.state.legal_action_indices(player):
                raise IllegalAction(f"action {index} is not legal for seat {player} now")
            found = chance.outcomes(self._engine.state, player, index)
            if found is not None:  # the move draws: its outcomes are the next node
                self._chance = [(p, ("move", player, index, script)) for p, script in found]
                return
        self._play({player: int(action)})

    def _resolve_chance(self, outcome: int) -> None:
        chances = self._chance
        assert chances is not None
        if not 0 <= outcome < len(chances):
            raise IllegalAction(f"chance outcome {outcome} out of range (0–{len(chances) - 1})")
        self._chance = None
        what = chances[outcome][1]
        if what[0] == "deal":
            game: ConflictologyGame = self.get_game()
            dealt = game.dealt(what[1])
            self._engine = EngineHandle(self._name, dealt)
            self._traces = Traces(dealt, SPECS[self._spec].static)
            return
        _, seat, index, script = what
        state = self._engine.state
        self._traces.played(state, ((seat, index),), script)
        chance.apply_scripted(state, seat, index, script)
        self._moves += 1

    def _apply_actions(self, actions: list[int]) -> None:
        self._play({seat: int(a) for seat, a in enumerate(actions)})

    def _play(self, moves: dict[int, int]) -> None:
        state = self._engine.state
        move = tuple(sorted(moves.items()))  # seat order: the engine awaits both, takes either first
        for seat, index in move if len(move) > 1 else ():  # all checked before any is applied
            if index not in state.legal_action_indices(seat):
                raise IllegalAction(f"action {index} is not legal for seat {seat} now")
        self._traces.played(state, move)
        for seat, index in move:
            state.apply_index(seat, index)
        self._moves += 1

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"chance outcome {action}"
        return action_text(table_of(self._engine.state), action)

    def is_terminal(self) -> bool:
        return self._chance is None and (self._engine.state.is_over() or self._cut_short())

    def returns(self) -> list[float]:
        state = self._engine.state
        if not state.is_over():
            return [0.0] * self._players
        return returns_for(state.winners(), self._players)

    def information_state_string(self, player: int | None = None) -> str:
        if self._dealing():
            return DEALING
        return self._memory(self._player(player)).information_state()

    def observation_string(self, player: int | None = None) -> str:
        if self._dealing():
            return DEALING
        return observation_text(self, self._player(player))

    def _dealing(self) -> bool:
        """An explicit-chance game's first node: nothing is dealt yet (the engine state inside is a
        placeholder, the first deal, which nobody may see)."""
        return self._chance is not None and self._chance[0][1][0] == "deal"

    def _player(self, player: int | None) -> int:
        seat = self.current_player() if player is None else int(player)
        if not 0 <= seat < self._players:
            raise ValueError(f"a seat 0–{self._players - 1} is needed, got {player}")
        return seat

    def resample_from_infostate(self, player: int, probability_sampler: Any) -> ConflictologyState:
        """A state the seat cannot tell from this one: the engine's ``determinize`` of its view.

        The seat's trace is carried over, so its information state is the same. The other seats'
        traces start at the resampled present: their pasts are not redrawn (the engine draws worlds
        consistent with a view, not whole histories).
        """
        seed = int(probability_sampler() * (1 << 53))
        world = self._game().determinize(self._engine.state.view(player), Rng(seed))
        game: ConflictologyGame = self.get_game()
        out = ConflictologyState(game, world)
        out._moves = self._moves
        out._traces = Traces.of([
            copy.deepcopy(self._memory(p))
            if p == player
            else SeatMemory(world.view(p), SPECS[self._spec].static, first="resampled")
            for p in range(self._players)
        ])
        return out

    def __str__(self) -> str:
        """Everything, every card face up (the engine's open view), without the log."""
        doc = self._game().open_view(self._engine.state)
        left_out = ("log", *SPECS[self._spec].static)
        flat = flatten({k: v for k, v in doc.items() if k not in left_out})
        return " ".join(f"{k}={v}" for k, v in flat.items())


def observation_text(state: ConflictologyState, seat: int) -> str:
    memory = state._memory(seat)
    now = " ".join(f"{k}={v}" for k, v in memory.flat.items())
    seen = [line for line in memory.last if line.startswith(">")]
    return "\n".join([now, *seen])


class Observer:
    """OpenSpiel's PyObserver: the current observation (tensor and string) or the information state
    (string only: the tensor encoders describe the present view, which is not perfect recall)."""

    def __init__(self, game: ConflictologyGame, iig_obs_type: Any, params: Any) -> None:
        if params:
            raise ValueError(f"observation parameters are not supported, got {params!r}")
        if iig_obs_type is not None and (
            not iig_obs_type.public_info
            or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER
        ):
            raise ValueError("only a seat's own observation is supported (public info and its own cards)")
        self.perfect_recall = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        self.game = game
        self.tensor: np.ndarray | None = None
        self.dict: dict[str, np.ndarray] = {}
        if not self.perfect_recall:
            self.tensor = np.zeros(game.encoder.size(game.players), np.float32)
            self.dict = {"observation": self.tensor}

    def set_from(self, state: ConflictologyState, player: int) -> None:
        if self.tensor is None:
            raise ValueError("no information state tensor: use the string, or the observation tensor")
        if state._dealing():
            self.tensor[:] = 0
            return
        view: View = state.engine_state.view(player)
        self.tensor[:] = self.game.encoder.encode(view, self.game.players)

    def string_from(self, state: ConflictologyState, player: int) -> str:
        if self.perfect_recall:
            return state.information_state_string(player)
        return observation_text(state, player)


class CapitolGame(ConflictologyGame):
    spec = SPECS["capitol"]


class ConspiranoicosGame(ConflictologyGame):
    spec = SPECS["conspiranoicos"]


class CapitolMiniGame(ConflictologyGame):
    spec = SPECS["capitol_mini"]


GAME_CLASSES: dict[str, type[ConflictologyGame]] = {
    "capitol": CapitolGame,
    "conspiranoicos": ConspiranoicosGame,
    "capitol_mini": CapitolMiniGame,
}


def register() -> None:
    """Register both games with OpenSpiel (once per process; loading the package does it)."""
    known = {t.short_name for t in pyspiel.registered_games()}
    for name, cls in GAME_CLASSES.items():
        if PREFIX + name not in known:
            pyspiel.register_game(game_type(cls.spec), cls)
