"""The Capitol game state: the engine's object over the fields (``fields.py``), with its copy and its save.

``CapitolState`` is what the engine, the server and the bots hold. It deals a new game, clones itself
(a few list copies: a search clones at every walk), writes and reads its JSON save (with the checks a
save from outside needs) and answers the engine's calls by the rules (``rules.py``) and the views
(``views.py``): thin methods, the logic lives there.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Final

from conflictology.engine import ActionTable, GameState, IllegalAction, Rng, View, json_text
from conflictology.games.capitol import data, rules
from conflictology.games.capitol.data import OVER, Phase, Then
from conflictology.games.capitol.fields import FIELDS, CapitolFields, Key
from conflictology.games.capitol.honesty import NO_CLAIMS, honesty_int, honesty_list, public_honesty
from conflictology.games.capitol.table import table_for
from conflictology.games.capitol.views import render_view
from conflictology.native import method

# A phase or a ``then`` by its string, for reading a save (one dict lookup, no enum call).
_PHASE_OF: dict[str, Phase] = {p.value: p for p in Phase}
_THEN_OF: dict[str, Then] = {t.value: t for t in Then}
# A list's own copy, read once as a global (clone copies every hand with it).
_COPY: Final = list.copy


class Setup:
    """A table's checked options and what every deal derives from them (``set_options``' fields, the
    deck, the hand size, the Treasury): made once and only ever read. A search or a benchmark deals
    thousands of games with the table's own options, and deriving them again cost a new game about as
    much as its shuffle (``game.new_game`` keeps one per table size)."""

    __slots__ = ("cards", "derived", "first", "hand", "lists", "options", "players", "treasury")

    def __init__(self, players: int, options: dict[str, Any]) -> None:
        self.players = players
        self.options = options
        self.lists = tuple(key for key, value in options.items() if type(value) is list)
        self.derived = CapitolFields()
        self.derived.set_options(options)
        self.cards = data.deck_in(options)  # the whole deck, in role order
        self.hand = data.influence_in(options)
        self.treasury = data.treasury_total(players) - data.STARTING_MONEY * players
        self.first: int | None = options["first_player"]


class CapitolState(CapitolFields, GameState):
    __slots__ = ()

    # ------------------------------------------------------------------ construction

    @classmethod
    def deal(cls, setup: Setup, deck: list[str], rng: Rng) -> CapitolState:
        """A new game at ``setup``'s table: seat i holds ``deck[2i:2i+2]``, the rest is the draw pile,
        top first."""
        s = cls.__new__(cls)
        players = setup.players
        s.n = players
        # The game's own options (a caller may change a game's, never the setup's); what they derive
        # is only ever read, so every game of the table shares it.
        options = setup.options.copy()
        for key in setup.lists:
            options[key] = options[key][:]
        s.options = options
        derived = setup.derived
        s.opt_forced = derived.opt_forced
        s.opt_steal = derived.opt_steal
        s.opt_anyone = derived.opt_anyone
        s.opt_stalemate = derived.opt_stalemate
        s.opt_roles = derived.opt_roles
        s.opt_absent = derived.opt_absent
        s.opt_blocks = derived.opt_blocks
        s.money = [data.STARTING_MONEY] * players
        hs = setup.hand
        s.hidden = [deck[i : i + hs] for i in range(0, players * hs, hs)]
        s.revealed = [[] for _ in range(players)]
        s.alive = [True] * players
        s.deck = deck[players * hs :]
        s.treasury = setup.treasury
        s.rng = rng
        first = setup.first
        if first is None:
            first = rng.randrange(players)  # ruling 3
        s.known = []
        s.log = [("start", first)]
        s.winner = -1
        s.honesty = NO_CLAIMS
        s.quiet = 0
        s.moves = 0
        s.tied = []
        s.one_prompt = True
        s.passed = []
        s.losses = []
        s.ex_hand = []
        rules.begin_turn(s, first)
        s._lseat = -1
        s._legal = rules.NO_CHOICES
        return s

    @property
    def num_players(self) -> int:
        return self.n

    def clone(self) -> CapitolState:
        c = CapitolState.__new__(CapitolState)
        c.n = self.n
        c.options = self.options  # never mutated
        c.opt_forced = self.opt_forced
        c.opt_steal = self.opt_steal
        c.opt_anyone = self.opt_anyone
        c.opt_stalemate = self.opt_stalemate
        c.opt_roles = self.opt_roles
        c.opt_absent = self.opt_absent
        c.opt_blocks = self.opt_blocks  # never mutated (shared by every table with these options)
        c.money = self.money.copy()
        c.hidden = [*map(_COPY, self.hidden)]  # copies made in C: no slice objects, no comprehension's call
        c.revealed = [*map(_COPY, self.revealed)]
        c.alive = self.alive.copy()
        c.deck = self.deck.copy()
        c.treasury = self.treasury
        c.rng = Rng(self.rng.state)
        c.phase = self.phase
        c.actor = self.actor
        c.action = self.action
        c.target = self.target
        c.claim = self.claim
        c.challenger = self.challenger
        c.blocker = self.blocker
        c.block_claim = self.block_claim
        c.block_challenger = self.block_challenger
        c.block_answer = self.block_answer
        c.one_prompt = self.one_prompt
        c.awaiting = self.awaiting.copy()
        c.passed = self.passed.copy()
        c.losses = self.losses.copy()
        c.then = self.then
        c.reveal_seat = self.reveal_seat
        c.reveal_card = self.reveal_card
        c.keep = self.keep
        c.ex_hand = self.ex_hand.copy()
        c.shown = self.shown
        c.known = self.known.copy()
        c.log = self.log.copy()
        c.winner = self.winner
        c.honesty = self.honesty
        c.quiet = self.quiet
        c.moves = self.moves
        c.tied = self.tied  # never mutated: set once, when the game ends
        # Choices are only ever read, so the twin may share them.
        c._lseat = self._lseat
        c._legal = self._legal
        return c

    # ------------------------------------------------------------------ queries

    def waiting_for(self) -> list[int]:
        # .copy(), not [:]: a slice makes a slice object first (about 250 instructions more, at every
        # decision of every playout).
        return self.awaiting.copy()

    def is_over(self) -> bool:
        return self.phase is OVER

    def winners(self) -> list[int]:
        if self.phase is not OVER:
            return []
        return self.tied[:] if self.tied else [self.winner]

    @property
    def action_table(self) -> ActionTable:
        """This table's numbering of the actions: the game's up to six seats, extended past six
        (``game.table_for``; openspiel, the RL environments and the search read a state's own)."""
        return table_for(self.n)

    # The rules' own functions as the engine's methods: from source no extra call on a search's hot
    # path; compiled, one Python call into C (``native.method``: a compiled function does not bind).
    legal_actions = method(rules.legal_actions)

    # ------------------------------------------------------------------ applying actions

    def legal_action_indices(self, seat: int) -> list[int]:
        # The engine's default builds every action dict and looks each up; a search asks this at
        # each of its own decisions of every walk, so the keys are mapped straight to the table's.
        index = _table_keys(self.n)[1]
        legal = rules.choices(self, seat)
        return [index[k] for k in legal.keys or rules.keys_of(legal)]

    def apply_index(self, seat: int, index: int) -> None:
        keys = _table_keys(self.n)[0]
        if type(index) is not int or not 0 <= index < len(keys):
            raise IllegalAction(f"action index out of range: {index!r} (table has {len(keys)})")
        rules.apply_key(self, seat, keys[index], None)

    apply = method(rules.apply)

    decision_kind = method(rules.decision_kind)
    timeout_action = method(rules.timeout_action)

    # ------------------------------------------------------------------ views and JSON

    def view(self, seat: int | None) -> View:
        if seat is not None and (type(seat) is not int or not 0 <= seat < self.n):
            raise ValueError(f"no seat {seat!r} at a table of {self.n}")
        return render_view(self, seat)

    def view_since(self, seat: int | None, start: int) -> tuple[View, int]:
        if seat is not None and (type(seat) is not int or not 0 <= seat < self.n):
            raise ValueError(f"no seat {seat!r} at a table of {self.n}")
        return render_view(self, seat, log_start=max(0, start)), len(self.log)

    def to_json(self) -> str:
        doc: dict[str, Any] = {"game": "capitol", "version": 1}
        for name in FIELDS:
            doc[name] = getattr(self, name)
        doc["rng"] = self.rng.state
        doc["honesty"] = honesty_list(self.honesty)  # readable in a save: one bool per claim
        return json_text(doc)

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> CapitolState:
        if doc.get("game") != "capitol" or doc.get("version") != 1:
            raise ValueError("not a Capitol state (version 1)")
        s = cls.__new__(cls)
        try:
            s.n = int(doc["n"])
            s.set_options(dict(doc["options"]))
            s.money = [int(m) for m in doc["money"]]
            s.hidden = [[str(c) for c in h] for h in doc["hidden"]]
            s.revealed = [[str(c) for c in r] for r in doc["revealed"]]
            s.alive = [bool(a) for a in doc["alive"]]
            s.deck = [str(c) for c in doc["deck"]]
            s.treasury = int(doc["treasury"])
            s.rng = Rng(int(doc["rng"]))
            phase = str(doc["phase"])
            s.actor = int(doc["actor"])
            s.action = str(doc["action"])
            s.target = int(doc["target"])
            s.claim = str(doc["claim"])
            s.challenger = int(doc["challenger"])
            s.blocker = int(doc["blocker"])
            s.block_claim = str(doc["block_claim"])
            s.block_challenger = int(doc["block_challenger"])
            # A save from before ruling 6a has neither: it plays on with the two prompts it started
            # with (its target, if it passed, is asked in the block window as it was promised).
            s.block_answer = str(doc.get("block_answer", ""))
            one_prompt = doc.get("one_prompt", False)
            if type(one_prompt) is not bool:
                raise ValueError(f"one_prompt must be true or false, got {one_prompt!r}")
            s.one_prompt = one_prompt
            s.awaiting = [int(x) for x in doc["awaiting"]]
            s.passed = [int(x) for x in doc["passed"]]
            s.losses = [int(x) for x in doc["losses"]]
            then = str(doc["then"])
            s.reveal_seat = int(doc["reveal_seat"])
            s.reveal_card = str(doc["reveal_card"])
            s.keep = int(doc["keep"])
            s.ex_hand = [str(c) for c in doc["ex_hand"]]
            s.shown = str(doc["shown"])
            s.known = [(int(p), int(t), str(c)) for p, t, c in doc["known"]]
            s.log = [tuple(e) for e in doc["log"]]
            s.winner = int(doc["winner"])
            # A save written before the stalemate rule has none of its counters: they start from 0.
            s.quiet = int(doc.get("quiet", 0))
            s.moves = int(doc.get("moves", 0))
            s.tied = [int(x) for x in doc.get("tied", [])]
            honest = doc.get("honesty")
            if honest is not None and (type(honest) is not list or any(type(b) is not bool for b in honest)):
                raise ValueError(f"honesty must be a list of booleans, got {honest!r}")
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"malformed Capitol state: {exc}") from exc
        s._lseat = -1
        s._legal = rules.NO_CHOICES
        if phase not in _PHASE_OF or then not in _THEN_OF:
            raise ValueError(f"inconsistent Capitol state: phase {phase!r}")
        s.phase = _PHASE_OF[phase]
        s.then = _THEN_OF[then]
        s.check_invariants()
        # Each claim in the log has its bit. A save written before the record existed has none: its
        # claims count as honest unless a challenge caught them (what the public log says).
        public = public_honesty(s.log)
        if honest is None:
            honest = public
        elif len(honest) != len(public):
            raise ValueError(f"malformed Capitol state: {len(public)} claims in the log, {len(honest)} bits")
        elif any(b and not c for b, c in zip(honest, public, strict=True)):
            raise ValueError("malformed Capitol state: a claim caught bluffing is recorded honest")
        s.honesty = honesty_int(honest)
        return s

    def check_invariants(self) -> None:
        """Raise ``ValueError`` unless money and cards are conserved and the fields fit together."""
        n = self.n
        seat_lists = (self.money, self.hidden, self.revealed, self.alive)
        if not 2 <= n <= data.MAX_PLAYERS or any(len(x) != n for x in seat_lists):
            raise ValueError("inconsistent Capitol state: seat lists")
        total = data.treasury_total(n)
        if sum(self.money) + self.treasury != total or min(self.money) < 0 or self.treasury < 0:
            raise ValueError("inconsistent Capitol state: money is not conserved")
        cards = list(self.deck)
        for h in self.hidden:
            cards += h
        for r in self.revealed:
            cards += r
        full = data.deck_in(self.options)
        if sorted(cards) != sorted(full):
            raise ValueError(f"inconsistent Capitol state: the {len(full)} cards are not all there")
        if self.phase not in _PHASE_OF or self.then not in _THEN_OF:
            raise ValueError(f"inconsistent Capitol state: phase {self.phase!r}")
        # Ruling 6a: a sealed answer lives from the target's answer until the action stands (the
        # challenge window, and the losses of a challenge that decides whether it stands).
        answer = self.block_answer
        if answer and not (
            self.one_prompt
            and (self.phase is data.CHALLENGE or self.phase is data.LOSE)
            and (answer == "pass" or answer in data.block_roles(self.action, self.opt_steal))
        ):
            raise ValueError(f"inconsistent Capitol state: block_answer {answer!r} in phase {self.phase}")
        if any(not 0 <= s < n for s in self.awaiting) or not -1 <= self.actor < n:
            raise ValueError("inconsistent Capitol state: seats out of range")
        hand = data.influence_in(self.options)
        drawing = self.actor if self.phase is data.EXCHANGE else -1  # holds the drawn cards too
        if any(len(self.hidden[s]) + len(self.revealed[s]) != hand for s in range(n) if s != drawing):
            raise ValueError(f"inconsistent Capitol state: every player holds {hand} cards, face up or down")
        if any(bool(self.hidden[s]) != self.alive[s] for s in range(n)):
            raise ValueError("inconsistent Capitol state: alive players are those with face-down cards")



def _table_keys(n: int) -> tuple[list[Key], dict[Key, int]]:
    """The action table of a table of ``n`` as keys, and each key's index."""
    return _keys_of(n > data.RULEBOOK_MAX_PLAYERS)


@functools.cache
def _keys_of(big: bool) -> tuple[list[Key], dict[Key, int]]:
    """The keys of the six-seat table (or ``big``: the ten-seat one), built once, on first use."""
    keys: list[Key] = []
    for action in table_for(data.MAX_PLAYERS if big else data.RULEBOOK_MAX_PLAYERS).actions:
        key = rules.key_of(dict(action))
        assert key is not None
        keys.append(key)
    return keys, {k: i for i, k in enumerate(keys)}
