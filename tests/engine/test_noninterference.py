"""Non-interference, tested from the state's side: change what seat X cannot know, X sees nothing change.

The conformance suite's check goes view -> determinize -> view, so a view that leaks a secret passes it
(the rebuilt state is drawn from the leaky view and leaks the same thing back). Here each game has a
*scrambler* built from the real state alone (its decoded save, never X's view): it redeals, among
themselves, the cards X cannot place, keeping everything X can know. Over thousands of random steps
(every player count, every seat and the spectator), X's view and legal actions must not change.

What a scrambler may move (and what it must keep), per game:

Capitol: the face-down cards of the other players and the deck, counts kept. Pinned: X's own hand
(with an exchange it is choosing), a card X saw as Police and still knows, a card revealed to win a
challenge and not yet replaced. Kept consistent: another player's exchange (its pre-draw hand is the
first ``keep`` cards of its hand), another Police player's knowledge and the card shown to them.

Conspiranoicos: in Collect Evidence, the fronts of the opponent's hand and of its hidden submitted play
among cards with the same back, both draw decks, the challenge deck and the face-down Final Challenge
(the opponent's private log entries follow their cards); while rows are built, which of the
opponent's (public) evidence cards are already in its row, and in what order.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from conflictology import games
from conflictology.engine import Game, GameState
from conflictology.games.capitol import GAME as CAPITOL
from conflictology.games.conspiranoicos import GAME as CONSPIRANOICOS
from conflictology.games.conspiranoicos import ConspiranoicosState
from conflictology.games.conspiranoicos.state import BUILD, COLLECT, PLAY

Scrambler = Callable[[GameState, int | None, random.Random], GameState]

# A slot is a place holding one card: (a list, an index in it).
Slot = tuple[list[Any], int]


def redeal(
    slots: list[Slot],
    rng: random.Random,
    backs: list[str | None] | None = None,
    back_of: dict[str, str] | None = None,
) -> dict[Any, Any]:
    """Shuffle the cards of ``slots`` among them; slot k with ``backs[k]`` not None only takes a card
    with that back (``back_of``). Returns old card -> new card, slot by slot (for private log entries)."""
    cards = [where[i] for where, i in slots]
    wanted = backs or [None] * len(slots)
    pool = cards[:]
    rng.shuffle(pool)
    out: list[Any] = [None] * len(slots)
    # The constrained slots first: each back has at least as many cards as slots asking for it.
    for k, b in enumerate(wanted):
        if b is not None:
            assert back_of is not None
            out[k] = pool.pop(rng.choice([j for j, c in enumerate(pool) if back_of[c] == b]))
    for k, b in enumerate(wanted):
        if b is None:
            out[k] = pool.pop()
    mapping = {}
    for (where, i), old, new in zip(slots, cards, out, strict=True):
        where[i] = new
        mapping[old] = new
    return mapping


# ---------------------------------------------------------------- Capitol


def scramble_capitol(state: GameState, seat: int | None, rng: random.Random) -> GameState:
    doc = json.loads(state.to_json())
    hidden: list[list[str]] = doc["hidden"]
    n = doc["n"]
    # Cards X knows to be in a hand (a set: two sources naming one role may be one card).
    pins = {(t, c) for p, t, c in doc["known"] if p == seat}
    if doc["reveal_seat"] >= 0:
        pins.add((doc["reveal_seat"], doc["reveal_card"]))
    pinned: set[tuple[int, int]] = set()
    for t, c in sorted(pins):
        if t == seat:
            continue
        j = next(j for j, x in enumerate(hidden[t]) if x == c and (t, j) not in pinned)
        pinned.add((t, j))
    # Another Police player's knowledge names a card in a hand: remember its place, to follow it.
    known_at: list[tuple[int, int, int] | None] = []
    taken: set[tuple[int, int]] = set()
    for p, t, c in doc["known"]:
        if p == seat or t == seat:
            known_at.append(None)
            continue
        # Two Police players may know the same card (likelier at a big table): share its place.
        free = [j for j, x in enumerate(hidden[t]) if x == c and ((t, j) not in taken or (t, j) in pinned)]
        j = free[0] if free else next(j for j, x in enumerate(hidden[t]) if x == c)
        taken.add((t, j))
        known_at.append((p, t, j))
    exchange_other = doc["phase"] == "exchange" and doc["actor"] != seat
    if exchange_other:
        assert doc["ex_hand"] == hidden[doc["actor"]][: doc["keep"]], "an exchange draws after the hand"

    slots: list[Slot] = [(doc["deck"], i) for i in range(len(doc["deck"]))]
    for s in range(n):
        if s != seat:
            slots += [(hidden[s], j) for j in range(len(hidden[s])) if (s, j) not in pinned]
    redeal(slots, rng)

    for k, at in enumerate(known_at):
        if at is not None:
            p, t, j = at
            doc["known"][k] = [p, t, hidden[t][j]]
    if exchange_other:
        doc["ex_hand"] = hidden[doc["actor"]][: doc["keep"]]
    if doc["phase"] == "investigate" and seat not in (doc["actor"], doc["target"]):
        doc["shown"] = next(c for p, t, c in doc["known"] if p == doc["actor"] and t == doc["target"])
    return CAPITOL.from_json(json.dumps(doc))


# ---------------------------------------------------------------- Conspiranoicos


def scramble_conspiranoicos(state: GameState, seat: int | None, rng: random.Random) -> GameState:
    assert isinstance(state, ConspiranoicosState)
    deck = state.deck
    back_of = dict(zip(deck.ids, deck.backs, strict=True))
    doc = json.loads(state.to_json())
    others = [p for p in (0, 1) if p != seat]
    phase = doc["phase"]
    if phase in COLLECT:
        constrained: list[Slot] = []
        for p in others:
            constrained += [(doc["hands"][p], i) for i in range(len(doc["hands"][p]))]
            if phase == PLAY and doc["plays"][p] is not None:
                constrained.append((doc["plays"], p))  # submitted, still hidden
        free: list[Slot] = [(d, i) for d in doc["draws"] for i in range(len(d))]
        free += [(doc["challenge_deck"], i) for i in range(len(doc["challenge_deck"]))]
        final = [doc["final"]]
        if not doc["final_revealed"]:
            free.append((final, 0))
        backs: list[str | None] = [back_of[where[i]] for where, i in constrained]
        mapping = redeal(constrained + free, rng, backs + [None] * len(free), back_of)
        doc["final"] = final[0]
        _follow_private_log(doc, others, mapping)
    elif phase == BUILD:
        for p in others:
            evidence = doc["hands"][p] + doc["rows"][p]
            rng.shuffle(evidence)
            placed = len(doc["rows"][p])
            doc["rows"][p], doc["hands"][p] = evidence[:placed], evidence[placed:]
    return ConspiranoicosState.from_dict(doc)


def _follow_private_log(doc: dict[str, Any], seats: list[int], mapping: dict[str, str]) -> None:
    """The seats' own log entries (their opening hand, the cards they drew) name their new cards."""
    moved = {old: new for old, new in mapping.items() if old != new}
    if not moved:
        return
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(moved, key=len, reverse=True))) + r")\b")
    for entry in doc["log"]:
        if entry.get("private") not in seats:
            continue
        if "card" in entry:
            entry["card"] = moved.get(entry["card"], entry["card"])
        if "cards" in entry:
            entry["cards"] = [moved.get(c, c) for c in entry["cards"]]
        entry["text"] = pattern.sub(lambda m: moved[m.group(1)], entry["text"])


# ---------------------------------------------------------------- the check

SCRAMBLERS: dict[str, Scrambler] = {"capitol": scramble_capitol, "conspiranoicos": scramble_conspiranoicos}
OPTIONS: dict[str, list[dict[str, Any]]] = {
    "capitol": [
        {},
        {"forced_scandal": False, "steal_blockers": ["mafia", "police"]},
        {"anyone_challenges_block": True},
    ],
    "conspiranoicos": [
        {},
        {"face_up_slots": []},
        {"face_up_slots": [1, 2, 3, 4, 5, 6]},
        {"face_up_slots": [2, 6]},
    ],
}


def random_states(game: Game, games_count: int, seed: int) -> Iterator[GameState]:
    """Every state of ``games_count`` random games over every player count and a few option sets."""
    rng = random.Random(seed)
    counts = list(range(game.min_players, game.max_players + 1))
    options = OPTIONS[game.name]
    for i in range(games_count):
        state = game.new_game(
            players=counts[i % len(counts)], seed=rng.getrandbits(64), options=options[i % len(options)]
        )
        yield state
        while not state.is_over():
            seat = rng.choice(state.waiting_for())
            state.apply(seat, rng.choice(state.legal_actions(seat)))
            yield state


def check_scrambled(state: GameState, scramble: Scrambler, rng: random.Random) -> None:
    for seat in [*range(state.num_players), None]:
        other = scramble(state, seat, rng)
        assert other.view(seat) == state.view(seat), f"seat {seat} sees what it cannot know"
        if seat is not None:
            assert other.legal_actions(seat) == state.legal_actions(seat)


@pytest.mark.parametrize(("name", "games_count"), [("capitol", 150), ("conspiranoicos", 120)])
def test_views_ignore_what_the_viewer_cannot_know(name: str, games_count: int) -> None:
    game = games.get(name)
    rng = random.Random(2026)
    steps = changed = 0
    for state in random_states(game, games_count, seed=11):
        check_scrambled(state, SCRAMBLERS[name], rng)
        steps += 1
        changed += scramble_changes_something(state, SCRAMBLERS[name], rng)
    assert steps >= 2000
    # The scramblers must actually move hidden cards, or the test would prove nothing.
    assert changed >= steps // 3


def scramble_changes_something(state: GameState, scramble: Scrambler, rng: random.Random) -> bool:
    return any(scramble(state, seat, rng).to_json() != state.to_json() for seat in range(state.num_players))


def test_the_scramblers_keep_what_the_seat_knows() -> None:
    """Sanity: the seat's own cards never move, and the states stay valid saves (from_json checks)."""
    rng = random.Random(5)
    for state in random_states(CAPITOL, 20, seed=3):
        for seat in range(state.num_players):
            other = scramble_capitol(state, seat, rng)
            assert json.loads(other.to_json())["hidden"][seat] == json.loads(state.to_json())["hidden"][seat]
    for state in random_states(CONSPIRANOICOS, 20, seed=3):
        for seat in (0, 1):
            other = scramble_conspiranoicos(state, seat, rng)
            mine, theirs = json.loads(state.to_json()), json.loads(other.to_json())
            assert (theirs["hands"][seat], theirs["rows"][seat]) == (mine["hands"][seat], mine["rows"][seat])
