"""A PettingZoo AEC environment over any game of the engine contract.

One decision at a time: the agent to act (``agent_selection``) is the first seat of
``state.waiting_for()``. Where several seats are awaited at once they are asked in seat order — in a
response window a seat that passes drops out and the next is asked; in a simultaneous play (Conspiranoicos)
the first seat's play stays hidden from the second, whose observation shows only that a card was
submitted, so asking in turn leaks nothing.

Actions are integers of the game's fixed action table (``game.action_table``); the observation is a
dict ``{"observation": float32 vector, "action_mask": int8 vector}``, as PettingZoo's card games do.
The mask is the agent's legal actions now (all zeros for an agent that is not awaited). Rewards come
at the end only: +1 to a lone winner, −1 to every loser, 0 to each seat of a shared victory (and to
everyone when the game is truncated).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from conflictology import games
from conflictology.engine import Action, ActionTable, Game, GameState, IllegalAction, Rng, View
from conflictology.rl.encoding import ObservationEncoder, encoder_for

WIN, LOSS, SHARED = 1.0, -1.0, 0.0


class ConflictologyEnv(AECEnv):  # type: ignore[misc]  # pettingzoo ships no type information
    """The AEC environment of one game (see the module docstring)."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["human", "ansi"],
        "name": "conflictology_v0",
        "is_parallelizable": False,
    }

    def __init__(
        self,
        game: str | Game,
        players: int | None = None,
        options: Mapping[str, Any] | None = None,
        render_mode: str | None = None,
        max_steps: int | None = 10_000,
        encoder: ObservationEncoder | None = None,
    ) -> None:
        super().__init__()
        self.game: Game = games.get(game) if isinstance(game, str) else game
        self.players = self.game.min_players if players is None else players
        self.game.check_players(self.players)
        self.game_options = dict(options or {})
        # Checked now, so a bad option is an error at construction rather than at the first reset.
        probe = self.game.new_game(self.players, seed=0, options=self.game_options)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}"
            )
        self.render_mode = render_mode
        self.max_steps = max_steps
        self.encoder = encoder or encoder_for(self.game.name)
        self.metadata = {**type(self).metadata, "name": f"{self.game.name}_v0"}  # type: ignore[misc]

        self.possible_agents: list[str] = [f"player_{i}" for i in range(self.players)]
        self.agents: list[str] = self.possible_agents[:]
        self._seat_of = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        # A state may number its actions by its own table (Capitol past six seats, a Conspiranoicos
        # deck file), fixed by the players and the options: every game of this environment shares it.
        own = getattr(probe, "action_table", None)
        self.table: ActionTable = own if isinstance(own, ActionTable) else self.game.action_table
        self.n_actions = self.table.size
        self.obs_size = self.encoder.size(self.players)
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(0.0, 1.0, shape=(self.obs_size,), dtype=np.float32),
                    "action_mask": spaces.Box(0, 1, shape=(self.n_actions,), dtype=np.int8),
                }
            )
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(self.n_actions) for agent in self.possible_agents}

        self._rng = Rng(Rng.fresh_seed())
        self.state: GameState | None = None
        self.steps = 0
        self.rewards: dict[str, float] = {}
        self._cumulative_rewards: dict[str, float] = {}
        self.terminations: dict[str, bool] = {}
        self.truncations: dict[str, bool] = {}
        self.infos: dict[str, dict[str, Any]] = {}
        self.agent_selection = self.possible_agents[0]

    # -- spaces ----------------------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    # -- the game --------------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game. ``seed`` reseeds the environment: the same seed gives the same deal, and the
        games after it (reset without a seed) follow from it. ``options`` is accepted as PettingZoo
        requires; its key ``"deck"`` stacks the deck (the contract's ``deck``), other keys are ignored."""
        if seed is not None:
            self._rng = Rng(seed)
        deck = (options or {}).get("deck")
        self.state = self.game.new_game(
            self.players, seed=self._rng.next64(), options=self.game_options, deck=deck
        )
        self.steps = 0
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self.agent_selection = self.possible_agents[self.state.waiting_for()[0]]
        if self.render_mode == "human":
            self.render()

    def _state(self) -> GameState:
        if self.state is None:
            raise RuntimeError("call reset() before using the environment")
        return self.state

    def seat(self, agent: str) -> int:
        try:
            return self._seat_of[agent]
        except KeyError:
            raise ValueError(f"unknown agent {agent!r}; agents: {', '.join(self.possible_agents)}") from None

    def view(self, agent: str) -> View:
        """The agent's own view dict (what its seat may know): the encoder's only input."""
        return self._state().view(self.seat(agent))

    def legal_actions(self, agent: str) -> list[Action]:
        """The agent's legal actions as dicts (``[]`` when it is not awaited)."""
        return self._state().legal_actions(self.seat(agent))

    def action_mask(self, agent: str) -> np.ndarray:
        mask = np.zeros(self.n_actions, dtype=np.int8)
        mask[self._state().legal_action_indices(self.seat(agent))] = 1
        return mask

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return {
            "observation": self.encoder.encode(self.view(agent), self.players),
            "action_mask": self.action_mask(agent),
        }

    def step(self, action: int | np.integer[Any] | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        state = self._state()
        seat = self.seat(agent)
        if action is None:
            raise IllegalAction(f"{agent} is awaited and must act; None is only for a finished agent")
        index = int(action)
        legal = state.legal_action_indices(seat)
        if index not in legal:
            what = repr(self.table.action(index)) if 0 <= index < self.n_actions else "out of the table"
            raise IllegalAction(
                f"action {index} ({what}) is not legal for {agent} now; legal: {sorted(legal)}"
            )
        state.apply_index(seat, index)
        self.steps += 1
        if state.is_over():
            self.rewards = self._final_rewards(state.winners())
            self.terminations = dict.fromkeys(self.agents, True)
        elif self.max_steps is not None and self.steps >= self.max_steps:
            self.truncations = dict.fromkeys(self.agents, True)
        else:
            self.agent_selection = self.possible_agents[state.waiting_for()[0]]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _final_rewards(self, winners: list[int]) -> dict[str, float]:
        out = {}
        for agent in self.agents:
            seat = self.seat(agent)
            if seat not in winners:
                out[agent] = LOSS
            else:
                out[agent] = WIN if len(winners) == 1 else SHARED
        return out

    # -- rendering -------------------------------------------------------------------------------
    def render(self) -> str | None:
        """The public table (a spectator's view: no hidden card) as text; printed in ``human`` mode."""
        if self.render_mode is None:
            return None
        from conflictology.terminal.render import render_text

        text = render_text(self._state().view(None), names=self.possible_agents)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    def __str__(self) -> str:
        return str(self.metadata["name"])
