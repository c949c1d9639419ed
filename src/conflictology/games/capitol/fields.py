"""What a Capitol state holds, field by field: the one record the rules, the views and the worlds read.

A state is a handful of plain lists and scalars (``__slots__``) so that ``clone`` is a few list copies
and random playouts stay fast. :class:`CapitolFields` declares them; ``state.CapitolState`` (the
engine's object: clone, JSON, the engine methods) inherits them, and ``rules.py`` and ``views.py``
take a ``CapitolFields``, so neither needs the module that calls them.

``phase`` and ``then`` always hold the members of ``data.Phase`` and ``data.Then`` (a save and a view
are read into them), so the rules compare them by identity, the fastest test there is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mypy_extensions import mypyc_attr

from conflictology.engine import Action, Rng
from conflictology.games.capitol.data import (
    MAX_PLAYERS,
    STALEMATE_OPTION,
    STALEMATE_TURNS,
    Phase,
    Then,
    absent_actions,
    blocks_by_action,
    roles_in,
)

# A legal action as an immutable key ``(type, field, value)``: the field "target" (an int seat), "card"
# (a role) or "cards" (a kept hand, a sorted tuple of roles), or None and None for a bare type. The
# state caches keys, never the dicts it hands out.
Key = tuple[str, str | None, Any]



# Every seat a table can have, as a decision's ``targets`` whose aimed keys are its own.
ANY_SEAT: tuple[bool, ...] = (True,) * MAX_PLAYERS
# The ``others`` of every decision but a turn: none (only ever read).
NO_OTHERS: list[int] = []


class Choices:
    """The legal actions of one decision (rules.choices), shared by the states in the same situation,
    so only ever read: each key, in the order the actions are listed, with its action as a template
    dict; and the same templates in that order (what legal_actions copies out). Slots, not a
    NamedTuple: a slot is read by a specialised instruction, a NamedTuple's field by a lookup.

    A turn's are made with their templates only (``keys`` None, ``bare`` and ``aimed`` given): a
    random playout at ten seats meets a turn not kept at about one turn in ten, and hashing some forty
    keys into a dict was most of what a new turn cost. ``rules.keys_of`` makes the dict when it is
    first asked for (by an action index or a key, never in a playout)."""

    __slots__ = ("actions", "aimed", "bare", "keys", "others", "targets")

    def __init__(
        self,
        keys: Mapping[Key, Action] | None,
        bare: dict[str, Key] | None = None,
        aimed: dict[str, tuple[str, dict[Any, Key]]] | None = None,
        targets: tuple[bool, ...] = ANY_SEAT,
        others: list[int] = NO_OTHERS,
        actions: tuple[Action, ...] = (),
    ) -> None:
        self.keys = keys
        self.actions = actions if keys is None else tuple(keys.values())
        # The keys again, by the action's type (``rules.apply`` reads an action dict through these):
        # a bare type's key by the type, a string with a cached hash; a type with a field, its field
        # and its keys by the field's value. Looking up the type and the value costs less than making
        # the key's tuple and hashing it, at every decision. A turn's choices are made often (the big
        # tables meet many situations) and come with theirs, shared by every turn: their targets'
        # keys hold every seat, and ``targets`` says which seats this turn may aim at.
        if bare is None or aimed is None:
            if keys is None:
                raise ValueError("choices made without their keys need their tables")
            bare, aimed = by_type(keys)
        self.bare = bare
        self.aimed = aimed
        self.targets = targets
        # A turn's: the other seats alive, in seat order, whom its character actions' challenge
        # window awaits (``rules._on_turn`` copies it; only read). None but a turn's have any.
        self.others = others


def by_type(keys: Iterable[Key]) -> tuple[dict[str, Key], dict[str, tuple[str, dict[Any, Key]]]]:
    """``Choices.bare`` and ``Choices.aimed`` of ``keys``."""
    bare: dict[str, Key] = {}
    aimed: dict[str, tuple[str, dict[Any, Key]]] = {}
    for key in keys:
        kind, field, value = key
        if field is None:
            bare[kind] = key
            continue
        named, by_value = aimed.setdefault(kind, (field, {}))
        if named != field:
            raise ValueError(f"{kind!r} is keyed by both {named!r} and {field!r}")
        by_value[value] = key
    return bare, aimed


# A log entry is a tuple (event type, fields…); views.py renders it. ("_raw", dict) holds an entry
# already rendered (a determinized state copies the log it was drawn from).
LogEntry = tuple[Any, ...]

# The fields a save holds, in its order (``to_json``).
FIELDS = (
    "n", "options", "money", "hidden", "revealed", "alive", "deck", "treasury", "rng", "phase",
    "actor", "action", "target", "claim", "challenger", "blocker", "block_claim", "block_challenger",
    "awaiting", "passed", "losses", "then", "reveal_seat", "reveal_card", "keep", "ex_hand", "shown",
    "known", "log", "winner", "honesty", "quiet", "moves", "tied", "block_answer", "one_prompt",
)
# Every field a state has: the saved ones, what the options derive, and the last choices asked for.
# (A compiled class has no ``__slots__`` to read them from.)
SLOTS = (
    *FIELDS, "opt_forced", "opt_steal", "opt_anyone", "opt_stalemate", "opt_roles", "opt_absent",
    "opt_blocks", "_lseat", "_legal",
)


# Compiled (conflictology.native), the fields are a native class's, read and written in C by the
# compiled rules; ``state.CapitolState``, which is not compiled, subclasses it.
@mypyc_attr(allow_interpreted_subclasses=True)
class CapitolFields:
    __slots__ = SLOTS

    n: int
    options: dict[str, Any]
    opt_forced: bool
    opt_steal: tuple[str, ...]
    opt_anyone: bool
    opt_stalemate: int  # turns in a row with no influence lost that end the game (the stalemate rule)
    opt_roles: tuple[str, ...]  # the roles in play (all six but in a small variant)
    opt_absent: frozenset[str]  # the turn actions a small variant leaves out (their role is not in play)
    opt_blocks: Mapping[str, tuple[str, ...]]  # the roles that may block each action (data.block_roles)
    money: list[int]
    hidden: list[list[str]]
    revealed: list[list[str]]
    alive: list[bool]
    deck: list[str]  # top first
    treasury: int
    rng: Rng
    phase: Phase
    actor: int
    action: str  # the turn action's type, "" before it is chosen
    target: int  # -1: none
    claim: str  # the role the action claims, "" for general actions
    challenger: int
    blocker: int
    block_claim: str
    block_challenger: int
    # Ruling 6a: the target's answer on blocking given in the challenge window, sealed (its own view
    # only) until the action stands: "" none given (a block window asks, if the action stands),
    # "pass" (it let it pass) or the role of its block.
    block_answer: str
    # Ruling 6a is played (the target answers once): every game dealt since. A game saved before it
    # (an archived game's initial state, a save in progress) is played on with the two prompts it
    # started with, so its recorded decisions replay exactly as they were played.
    one_prompt: bool
    awaiting: list[int]  # the seats that may still answer, in seat order
    passed: list[int]  # who passed in the current window, in the order they passed
    losses: list[int]  # seats that must still lose an influence, first one now
    then: Then
    reveal_seat: int  # a true claim revealed in a challenge, replaced once the losses are taken
    reveal_card: str
    keep: int  # an exchange: how many cards the actor keeps
    ex_hand: list[str]  # an exchange: the actor's hand before drawing (private)
    shown: str  # an investigation: the card shown to the Police player (private)
    known: list[tuple[int, int, str]]  # (police seat, target, card) still known to be in that hand
    log: list[LogEntry]
    winner: int
    honesty: int  # the claims' private record (honesty.py), never in a view before the end
    # The stalemate rule (data.STALEMATE_TURNS, data.MOVE_CAP): turns ended in a row with no influence
    # lost (-1 while the turn of a loss is still going on), decisions applied, and the winners of a
    # game it ended in a tie ([] otherwise: ``winner`` says who won).
    quiet: int
    moves: int
    tied: list[int]
    # The choices of the last seat asked (rules.choices), -1 and none when unknown (never -1 with some).
    _lseat: int
    _legal: Choices

    def set_options(self, options: dict[str, Any]) -> None:
        self.options = options
        self.opt_forced = options["forced_scandal"]
        self.opt_steal = tuple(options["steal_blockers"])
        self.opt_anyone = options["anyone_challenges_block"]
        # Absent from the default options (so the views and saves of the games that leave it alone stay
        # as they were): absent means the rule's default, never off.
        self.opt_stalemate = options.get(STALEMATE_OPTION, STALEMATE_TURNS)
        self.opt_roles = roles_in(options)
        self.opt_absent = absent_actions(self.opt_roles)
        self.opt_blocks = blocks_by_action(self.opt_steal, self.opt_roles)
