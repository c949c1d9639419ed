"""Conflictology: Capitol rule data: the deck, the money, the actions and who may claim, block or pay.

Everything here is the rulebook or a ruling of docs/rules/capitol.md (which follows the rulebook and
marks each ruling) written down once, so the rules module reads from tables instead of literals.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from enum import StrEnum
from typing import Final

# Roles, in the contract's order (ruling 1: three copies of each, 18 cards).
ROLES: Final = ("banker", "mafia", "hacker", "judge", "reporter", "police")
ROLE_SET: Final = frozenset(ROLES)
COPIES: Final = 3
DECK: Final = tuple(role for role in ROLES for _ in range(COPIES))
HAND_SIZE: Final = 2

# Money (ruling 2): $2M each, $50M in all, conserved between the purses and the Treasury.
STARTING_MONEY: Final = 2
TREASURY_TOTAL: Final = 50

# ---- Big tables (7 to 10 players): a ruling where the rulebook is silent (docs/rules/capitol.md,
# "Big tables"). The rulebook's deck and Treasury hold up to six; past six, both grow with the table.
RULEBOOK_MAX_PLAYERS: Final = 6
MAX_PLAYERS: Final = 10
COPIES_CHOICES: Final = (3, 4, 5)


def default_copies(players: int) -> int:
    """The copies of each role a table of ``players`` plays with: three up to six (the rulebook), then
    one copy per two seats (four at 7-8, five at 9-10), which keeps the rulebook's six-seat shape: half
    a copy of each role per player and two cards in hands for each one in the deck."""
    return max(COPIES, -(-players // 2))


def deck_of(copies: int) -> tuple[str, ...]:
    """The deck with ``copies`` of each role, in role order (``DECK`` when ``copies`` is three)."""
    return DECK if copies == COPIES else tuple(role for role in ROLES for _ in range(copies))


def min_deck_left(players: int, copies: int) -> int:
    """The cards left in the deck once ``players`` hands are dealt from ``copies`` of each role."""
    return copies * len(ROLES) - HAND_SIZE * players


def copies_in(options: dict[str, object]) -> int:
    """The copies of each role in play of a game with these (checked) options: ``copies``, set past
    six seats or when chosen, else the rulebook's three."""
    copies = options.get("copies", COPIES)
    assert type(copies) is int
    return copies


# ---- Small variants (docs/rules/capitol.md, "Small variants"): fewer roles, fewer copies, one
# influence. Options a game lists only when set: the rulebook's game never shows them.
ROLES_OPTION: Final = "roles"
INFLUENCE_OPTION: Final = "influence"
INFLUENCE_CHOICES: Final = (1, 2)
MIN_ROLES: Final = 2
SMALL_COPIES_CHOICES: Final = (1, 2)


def roles_in(options: dict[str, object]) -> tuple[str, ...]:
    """The roles in play (all six unless the ``roles`` option names fewer), in role order."""
    roles = options.get(ROLES_OPTION)
    return ROLES if roles is None else tuple(r for r in ROLES if r in roles)  # type: ignore[operator]


def copies_of(options: dict[str, object], role: str) -> int:
    """The copies of ``role`` in the deck: none for a role out of play."""
    return copies_in(options) if role in roles_in(options) else 0


def influence_in(options: dict[str, object]) -> int:
    """The face-down cards each player is dealt: the ``influence`` option, else the rulebook's two."""
    hand = options.get(INFLUENCE_OPTION, HAND_SIZE)
    assert type(hand) is int
    return hand


def deck_in(options: dict[str, object]) -> tuple[str, ...]:
    """The whole deck of a game with these (checked) options, in role order."""
    copies, roles = copies_in(options), roles_in(options)
    return deck_of(copies) if roles == ROLES else tuple(r for r in roles for _ in range(copies))


@functools.cache  # every new game asks, for one of a handful of role sets
def absent_actions(roles: tuple[str, ...]) -> frozenset[str]:
    """The turn actions left out when only ``roles`` are in play: those claiming a role out of play
    (an action whose role is in no hand does not exist in the variant, as a role's card is absent)."""
    return frozenset(kind for kind, role in CLAIM.items() if role not in roles)


# ---- end of small variants


# The money in play by seats past six: about $8.3M a seat as at six ($50M), rounded up to $5M.
TREASURY_BIG: Final[dict[int, int]] = {7: 60, 8: 70, 9: 75, 10: 85}


def treasury_total(players: int) -> int:
    """All the money of a table of ``players`` (Treasury and purses): $50M up to six (ruling 2)."""
    return TREASURY_BIG.get(players, TREASURY_TOTAL)


# ---- end of big tables

# What each turn action takes from the Treasury (ruling 2: what is there, if it holds less).
INCOME: Final = 1
FOREIGN_AID: Final = 2
BANKER_TAKE: Final = 3
MAFIA_STEAL: Final = 2  # ruling 13: min(2, the target's money)

# Fees, paid to the Treasury when the action is announced (ruling 10, ruling 17).
COST: Final[dict[str, int]] = {"scandal": 7, "hacker": 3}
FORCED_SCANDAL_AT: Final = 10  # ruling 4

# Cards drawn by an exchange (ruling 14, ruling 16).
DRAW: Final[dict[str, int]] = {"reporter": 2, "police_swap": 1}

# The turn actions, in the order legal actions list them.
TURN_ACTIONS: Final = (
    "income", "foreign_aid", "scandal", "banker", "mafia", "hacker", "reporter",
    "police_investigate", "police_swap",
)
TARGETED: Final = frozenset({"scandal", "mafia", "hacker", "police_investigate"})

# The role a character action claims (ruling 5b: only these have a challenge window).
CLAIM: Final[dict[str, str]] = {
    "banker": "banker",
    "mafia": "mafia",
    "hacker": "hacker",
    "reporter": "reporter",
    "police_investigate": "police",
    "police_swap": "police",
}

# Ruling 6: who may block what, claiming which roles. Foreign Aid: anyone else, as Banker; Hacker: the
# target only, as Judge; Mafia: the target only, with the roles of the `steal_blockers` option.
BLOCK_ROLES: Final[dict[str, tuple[str, ...]]] = {"foreign_aid": ("banker",), "hacker": ("judge",)}
BLOCKED_BY_ANYONE: Final = frozenset({"foreign_aid"})
STEAL_BLOCKER_CHOICES: Final = ("mafia", "police", "reporter")


def block_roles(action: str, steal_blockers: Sequence[str], roles: Sequence[str] = ROLES) -> tuple[str, ...]:
    """The roles a block of ``action`` may claim (ruling 6); a Mafia steal's are the table's
    ``steal_blockers`` option (none by the rulebook). Only ``roles`` in play (a small variant's):
    Foreign Aid cannot be blocked where no Banker is dealt."""
    out = tuple(steal_blockers) if action == "mafia" else BLOCK_ROLES.get(action, ())
    return out if len(roles) == len(ROLES) else tuple(r for r in out if r in roles)


@functools.cache  # a handful of option sets; a state keeps its table's (``fields.opt_blocks``)
def blocks_by_action(steal_blockers: tuple[str, ...], roles: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """``block_roles`` of every turn action that can be blocked at a table with these options."""
    out = {kind: block_roles(kind, steal_blockers, roles) for kind in TURN_ACTIONS}
    return {kind: blockers for kind, blockers in out.items() if blockers}


# Every role that can ever appear in a `block` (for the action table).
BLOCKING_ROLES: Final = ("banker", "mafia", "judge", "reporter", "police")

DEFAULT_OPTIONS: Final[dict[str, object]] = {
    "first_player": None,
    "forced_scandal": True,
    "steal_blockers": [],
    "anyone_challenges_block": False,
}


# The stalemate rule (docs/rules/capitol.md, "Ruling S", ours: the rulebook is silent). A game in which
# nobody loses an influence for STALEMATE_TURNS turns in a row (the room option ``stalemate_turns``,
# within its bounds; never off) ends, and so does any game at MOVE_CAP decisions (no option lifts it).
# Either way the players with the most face-down cards win, then the richest: a shared win on a tie.
STALEMATE_OPTION: Final = "stalemate_turns"
STALEMATE_TURNS: Final = 40
STALEMATE_BOUNDS: Final = (1, 200)  # under 10: the short variants (docs/rules/capitol.md)
MOVE_CAP: Final = 2000
STALEMATE_FORM_CHOICES: Final = (10, 20, 40, 80, 200)  # what a host's form offers (any in bounds is valid)


class Phase(StrEnum):
    """Every decision the game awaits is one phase (the values are the views' and the saves' strings).

    ``turn``            the actor chooses an action (forced Scandal at $10M, ruling 4)
    ``challenge``       every other living player may challenge the actor's claim (ruling 5b)
    ``block``           the eligible blockers may block (ruling 6)
    ``block_challenge`` the actor (or, with the option, anyone but the blocker) may challenge (ruling 7)
    ``lose``            the first seat of the loss queue turns a card face up (rulings 9, 11, 12)
    ``return``          a blocker whose block was accepted puts a card back (ruling 8, the book's rule)
    ``exchange``        the actor keeps as many cards as they held (Reporter ruling 14, Police swap 16)
    ``show``            the investigated target shows a card to the Police player (ruling 15)
    ``investigate``     the Police player lets the target keep it or forces a redraw (ruling 15)
    ``over``            one player has a face-down card left (ruling 18)
    """

    TURN = "turn"
    CHALLENGE = "challenge"
    BLOCK = "block"
    BLOCK_CHALLENGE = "block_challenge"
    LOSE = "lose"
    RETURN = "return"
    EXCHANGE = "exchange"
    SHOW = "show"
    INVESTIGATE = "investigate"
    OVER = "over"


class Then(StrEnum):
    """What follows once the loss queue is empty (``NONE``: no loss is pending)."""

    NONE = ""
    END_TURN = "end_turn"
    CONTINUE = "continue"  # the action stands: block window if any, then resolution
    RESOLVE = "resolve"


# The members as module globals: the rules compare phases at every decision of every playout, and a
# global is read faster than an enum's attribute (``phase is TURN``, never ``Phase.TURN`` in a loop).
TURN: Final = Phase.TURN
CHALLENGE: Final = Phase.CHALLENGE
BLOCK: Final = Phase.BLOCK
BLOCK_CHALLENGE: Final = Phase.BLOCK_CHALLENGE
LOSE: Final = Phase.LOSE
RETURN: Final = Phase.RETURN
EXCHANGE: Final = Phase.EXCHANGE
SHOW: Final = Phase.SHOW
INVESTIGATE: Final = Phase.INVESTIGATE
OVER: Final = Phase.OVER
NO_LOSSES: Final = Then.NONE
END_TURN: Final = Then.END_TURN
CONTINUE: Final = Then.CONTINUE
RESOLVE: Final = Then.RESOLVE


# Names as players read them in the log (and in clients that render from the fields).
ROLE_NAME: Final[dict[str, str]] = {role: role.capitalize() for role in ROLES}
ACTION_NAME: Final[dict[str, str]] = {
    "income": "Income",
    "foreign_aid": "Foreign Aid",
    "scandal": "Scandal",
    "banker": "Banker",
    "mafia": "Mafia",
    "hacker": "Hacker",
    "reporter": "Reporter",
    "police_investigate": "Police (investigate)",
    "police_swap": "Police (swap)",
}
