"""The game-agnostic conformance suite: every registered game must pass it.

Thousands of seeded random playouts check that ``waiting_for``, ``legal_actions`` and ``apply`` agree;
that every game ends; that JSON round trips reproduce views, legal actions and the future; that views
are JSON-ready; that illegal and malformed actions raise ``IllegalAction`` and change nothing; and
non-interference: a state drawn by ``determinize`` from seat X's view (so differing from the real one
only in what X cannot know) gives X the identical view and the same legal actions.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

from conflictology import IllegalAction, games
from conflictology.engine import Game, GameState, Rng, action_key

GAME_NAMES = games.names()
# CONFORMANCE_GAMES scales the run (CI default: 1,200 playouts per game).
PLAYOUTS = int(os.environ.get("CONFORMANCE_GAMES", "1200"))
MAX_DECISIONS = 5_000


def player_counts(game: Game) -> list[int]:
    return list(range(game.min_players, game.max_players + 1))


def playouts(game: Game, count: int, seed: int) -> Iterator[tuple[int, GameState, Rng]]:
    """``count`` fresh games spread over every player count, each with its own seeded chooser."""
    master = Rng(seed)
    counts = player_counts(game)
    for i in range(count):
        players = counts[i % len(counts)]
        yield i, game.new_game(players=players, seed=master.next64()), Rng(master.next64())


def random_step(state: GameState, rng: Rng) -> tuple[int, dict[str, Any]]:
    """Any awaited seat (not only the first: response windows admit any of them) plays a random action."""
    seat = rng.choice(state.waiting_for())
    action = rng.choice(state.legal_actions(seat))
    state.apply(seat, action)
    return seat, action


def all_views(state: GameState) -> list[Any]:
    return [state.view(seat) for seat in [*range(state.num_players), None]]


def all_legal(state: GameState) -> list[list[dict[str, Any]]]:
    return [state.legal_actions(seat) for seat in range(state.num_players)]


@pytest.fixture(params=GAME_NAMES)
def game(request: pytest.FixtureRequest) -> Game:
    return games.get(request.param)


def check_consistent(game: Game, state: GameState) -> None:
    """``waiting_for`` and ``legal_actions`` agree, and every listed action is well formed."""
    waiting = state.waiting_for()
    n = state.num_players
    # A state may number its actions by its own table (a Capitol table past six seats, a
    # Conspiranoicos deck file): the game's otherwise.
    table = getattr(state, "action_table", game.action_table)
    assert waiting == sorted(set(waiting)), f"waiting_for must be sorted and unique: {waiting}"
    assert all(0 <= s < n for s in waiting)
    assert (waiting == []) == state.is_over()
    assert (state.winners() != []) == state.is_over()
    for seat in range(n):
        legal = state.legal_actions(seat)
        if seat not in waiting:
            assert legal == [], f"seat {seat} is not awaited but has legal actions {legal}"
            continue
        assert legal, f"seat {seat} is awaited but has no legal action"
        keys = [action_key(a) for a in legal]
        assert len(set(keys)) == len(keys), f"an action is listed twice: {keys}"
        for action in legal:
            assert isinstance(action.get("type"), str)
            assert json.loads(json.dumps(action)) == action, "actions must be JSON-ready"
            # Legal actions are listed in the table's canonical spelling, so RL users can map both ways.
            assert table.action(table.index(action)) == action
        assert state.legal_action_indices(seat) == [table.index(a) for a in legal]
        assert state.timeout_action(seat) in legal, "the timeout action must be legal"
        assert state.decision_kind(seat) in ("turn", "response", "choice"), "a clock the server knows"


def check_views(game: Game, state: GameState) -> None:
    for seat, view in zip([*range(state.num_players), None], all_views(state), strict=True):
        assert isinstance(view, dict)
        assert json.loads(json.dumps(view)) == view, "views must be JSON-ready (no tuples, sets, objects)"
        assert view["game"] == game.name
        assert view["you"] == seat
        assert len(view["players"]) == state.num_players


def test_registry_lists_both_games() -> None:
    assert games.names() == ["capitol", "conspiranoicos"]
    for name in games.names():
        assert games.get(name).name == name
    with pytest.raises(ValueError):
        games.get("chess")


def test_random_playouts_agree_and_end(game: Game) -> None:
    """The core loop: at every step the awaited seats and legal actions agree, and every game ends."""
    lengths = []
    for _, state, rng in playouts(game, PLAYOUTS, seed=1):
        decisions = 0
        while not state.is_over():
            check_consistent(game, state)
            random_step(state, rng)
            decisions += 1
            assert decisions < MAX_DECISIONS, "a game must end"
        check_consistent(game, state)
        assert state.waiting_for() == []
        assert all(legal == [] for legal in all_legal(state))
        winners = state.winners()
        assert winners == sorted(set(winners)) and all(0 <= w < state.num_players for w in winners)
        lengths.append(decisions)
    assert min(lengths) > 0


def test_every_legal_action_applies_and_views_are_json(game: Game) -> None:
    """Each listed action applies cleanly on a clone; views stay JSON-ready all game long."""
    for _, state, rng in playouts(game, max(20, PLAYOUTS // 20), seed=2):
        while not state.is_over():
            check_views(game, state)
            for seat in state.waiting_for():
                for action in state.legal_actions(seat):
                    trial = state.clone()
                    trial.apply(seat, action)
            random_step(state, rng)
        check_views(game, state)


def malformed_actions(legal: list[dict[str, Any]]) -> list[Any]:
    example = legal[0]
    bad: list[Any] = [
        None, 7, "pass", ["pass"], {}, {"type": None}, {"type": 3}, {"type": "no-such-action"},
        {**example, "unexpected": 1},
    ]
    for key, value in example.items():
        if key == "type":
            continue
        missing = {k: v for k, v in example.items() if k != key}
        bad.append(missing)
        for wrong in (None, True, -1, 10**9, "x" * 300, 2.5, [value], {"v": value}):
            if wrong != value or type(wrong) is not type(value):
                bad.append({**example, key: wrong})
    return bad


def test_a_view_since_an_entry_is_the_view_with_its_log_from_there(game: Game) -> None:
    """``view_since(seat, k)`` is ``view(seat)`` with ``log[k:]``, and the whole log's length, for
    every seat and spectator at every step, the end included (a server renders only that tail)."""
    for _, state, rng in playouts(game, max(10, PLAYOUTS // 60), seed=6):
        while True:
            for seat in [*range(state.num_players), None]:
                whole = state.view(seat)
                log = whole["log"]
                for k in {0, 1, len(log) // 2, max(0, len(log) - 1), len(log), len(log) + 3}:
                    tail, length = state.view_since(seat, k)
                    assert length == len(log)
                    assert tail == {**whole, "log": log[k:]}, (seat, k)
            if state.is_over():
                break
            random_step(state, rng)


def test_illegal_and_malformed_actions_change_nothing(game: Game) -> None:
    for _, state, rng in playouts(game, max(20, PLAYOUTS // 20), seed=3):
        step = 0
        while not state.is_over():
            waiting = state.waiting_for()
            if step % 3 == 0:
                before = state.to_json()
                seat = rng.choice(waiting)
                legal = state.legal_actions(seat)
                legal_keys = {action_key(a) for a in legal}
                attempts: list[tuple[Any, Any]] = [(seat, a) for a in malformed_actions(legal)]
                # Actions of the game that are not legal now, for an awaited seat.
                for _ in range(8):
                    candidate = game.action_table.action(rng.randrange(game.action_table.size))
                    if action_key(candidate) not in legal_keys:
                        attempts.append((seat, candidate))
                # A legal action by a seat that is not awaited, or by no seat at all.
                others = [s for s in range(state.num_players) if s not in waiting]
                if others:
                    attempts.append((rng.choice(others), legal[0]))
                for bad_seat in (-1, state.num_players, None, "0", True, 1.0):
                    attempts.append((bad_seat, legal[0]))
                for bad_seat, action in attempts:
                    with pytest.raises(IllegalAction):
                        state.apply(bad_seat, action)
                    assert state.to_json() == before, f"{action!r} by {bad_seat!r} changed the state"
            random_step(state, rng)
            step += 1
        with pytest.raises(IllegalAction):
            state.apply(0, game.action_table.action(0))


def test_json_round_trip_reproduces_views_legal_actions_and_future(game: Game) -> None:
    for _, state, rng in playouts(game, max(30, PLAYOUTS // 10), seed=4):
        step = 0
        while not state.is_over():
            if step % 4 == 0:
                text = state.to_json()
                json.loads(text)
                copy = game.from_json(text)
                assert copy.to_json() == text
                assert all_views(copy) == all_views(state)
                assert all_legal(copy) == all_legal(state)
                assert copy.waiting_for() == state.waiting_for()
                # The same future: the same actions give the same states, shuffles included.
                future_rng = Rng(rng.next64())
                a, b = state.clone(), copy
                for _ in range(25):
                    if a.is_over():
                        break
                    seat = future_rng.choice(a.waiting_for())
                    action = future_rng.choice(a.legal_actions(seat))
                    a.apply(seat, action)
                    b.apply(seat, action)
                    assert a.to_json() == b.to_json()
                    assert all_views(a) == all_views(b)
            random_step(state, rng)
            step += 1
        assert game.from_json(state.to_json()).winners() == state.winners()


def test_clone_is_independent(game: Game) -> None:
    for _, state, rng in playouts(game, 40, seed=5):
        while not state.is_over():
            before = state.to_json()
            twin = state.clone()
            assert twin.to_json() == before
            random_step(twin, Rng(rng.next64()))
            assert state.to_json() == before, "playing on a clone changed the original"
            random_step(state, rng)


def test_same_seed_same_game(game: Game) -> None:
    for players in player_counts(game):
        a = game.new_game(players=players, seed=42)
        b = game.new_game(players=players, seed=42)
        assert a.to_json() == b.to_json()
        ra, rb = Rng(9), Rng(9)
        while not a.is_over():
            random_step(a, ra)
            random_step(b, rb)
            assert a.to_json() == b.to_json()
        assert a.winners() == b.winners()
    options_none = game.new_game(players=game.min_players, seed=3, options=None)
    options_empty = game.new_game(players=game.min_players, seed=3, options={})
    assert options_none.to_json() == options_empty.to_json()


def test_new_game_refuses_bad_arguments(game: Game) -> None:
    for players in (game.min_players - 1, game.max_players + 1, 0, -1, "2", 2.0, None, True):
        with pytest.raises(ValueError):
            game.new_game(players=players, seed=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        game.new_game(players=game.min_players, seed=1, options={"no_such_option": True})
    with pytest.raises(ValueError):
        game.new_game(players=game.min_players, seed=1, options=[])  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        game.new_game(players=game.min_players, seed=1, deck=["not-a-card"] * 18)
    with pytest.raises(ValueError):
        game.new_game(players=game.min_players, seed=1, deck=[])


def test_file_options_name_real_options_and_each_bundled_name_starts_a_game(game: Game) -> None:
    """``file_options`` (what a server lets a remote player name) lists options of the game, and every
    bundled name it allows is one the game itself accepts."""
    file_options = game.file_options()
    assert isinstance(file_options, dict)
    defaults = game.default_options()
    for key, allowed in file_options.items():
        assert key in defaults, f"{key!r} is not an option of {game.name}"
        assert isinstance(allowed, list) and all(isinstance(n, str) and n for n in allowed)
        for bundled in allowed:
            state = game.new_game(players=game.min_players, seed=1, options={key: bundled})
            assert state.waiting_for()


def test_module_name_names_each_game_and_refuses_an_unknown_one() -> None:
    for name in games.names():
        assert importlib.import_module(games.module_name(name)).GAME is games.get(name)
    with pytest.raises(ValueError, match="unknown game"):
        games.module_name("chess")


def test_action_table_is_fixed_and_invertible(game: Game) -> None:
    table = game.action_table
    assert table.size == len(table.actions) > 0
    for i in range(table.size):
        assert table.index(table.action(i)) == i
    assert games.get(game.name).action_table.size == table.size
    with pytest.raises(IllegalAction):
        table.action(table.size)
    with pytest.raises(IllegalAction):
        table.index({"type": "no-such-action"})


def test_non_interference_through_determinize(game: Game) -> None:
    """A world drawn from X's view differs from the real one only in what X cannot see, and gives X
    the same view and the same legal actions; many such worlds exist, and each plays on to an end."""
    sampler = Rng(77)
    hidden_varied = 0
    checked = 0
    for _, state, rng in playouts(game, max(30, PLAYOUTS // 8), seed=6):
        step = 0
        while not state.is_over():
            if step % 3 == 0:
                for seat in range(state.num_players):
                    view = state.view(seat)
                    world = game.determinize(view, Rng(sampler.next64()))
                    assert world.view(seat) == view, "a determinized world must look the same to its seat"
                    assert world.legal_actions(seat) == state.legal_actions(seat)
                    assert world.waiting_for() == state.waiting_for()
                    assert world.view(None) == state.view(None), "public facts must be kept"
                    checked += 1
                    if world.to_json() != state.to_json():
                        hidden_varied += 1
                    if checked % 25 == 0:
                        play_rng = Rng(sampler.next64())
                        decisions = 0
                        while not world.is_over():
                            random_step(world, play_rng)
                            decisions += 1
                            assert decisions < MAX_DECISIONS
            random_step(state, rng)
            step += 1
    assert checked > 100
    # Hidden cards really are re-drawn (otherwise the check above would prove nothing).
    assert hidden_varied > checked // 4

