"""Capitol's rules as functions over a state: the legal actions and the phase machine that applies them
(turns, challenge and block windows, losses, exchanges, Police). The phases: ``data.Phase``.

Losses are queued (``losses``) because one answer can cost two influences (ruling 11); ``then`` says
what follows once the queue is empty: end the turn, continue the action (block window, then
resolution), or resolve it. A card revealed to win a challenge (``reveal_seat``/``reveal_card``) stays
in its owner's hand until the challenger's loss is taken, then is shuffled back and replaced: the
rulebook's order ("YOU lose an influence card. The challenged player then returns their revealed
card"), which wins over ruling 9's.

The target of a Hacker (or of a Mafia, when the table's ``steal_blockers`` lets it block) answers once:
in the challenge window it may challenge, block (claiming a role) or let it pass (ruling 6a). A block
chosen there is sealed (``block_answer``): nobody else sees it while the window is open, and it takes
effect, logged then, when the action stands (the window closes with no challenge, or a challenge
fails). A target that let it pass is asked again only when a new choice arises: after someone else's
challenge failed.

Each claim (an action's role, a block's role) adds its bit to the private ``honesty`` record
(``honesty.py``) as it is made: whether the claimant held the role at that moment.

The functions take the state's fields (``fields.CapitolFields``); ``CapitolState`` calls them from its
engine methods. Only the functions without a leading underscore are called from outside.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from itertools import combinations, compress
from typing import Any, Final, NoReturn

from conflictology.engine import Action, IllegalAction, Rng
from conflictology.games.capitol import data
from conflictology.games.capitol.data import (
    BLOCK,
    BLOCK_CHALLENGE,
    CHALLENGE,
    CONTINUE,
    END_TURN,
    EXCHANGE,
    INVESTIGATE,
    LOSE,
    NO_LOSSES,
    OVER,
    RESOLVE,
    RETURN,
    SHOW,
    TURN,
    Phase,
)
from conflictology.games.capitol.fields import CapitolFields, Choices, Key

_PASS: Key = ("pass", None, None)
_CHALLENGE: Key = ("challenge", None, None)
# The action a card phase asks for: the phase's name, as a plain string (an action's type is a str).
_CARD_ACTION: dict[Phase, str] = {LOSE: "lose", RETURN: "return", SHOW: "show"}

# A decision's choices (``fields.Choices``) depend on a few fields only (the seat, who is alive, which
# fees the purse covers, the hand...), so they are made once per situation (the memos below) and
# shared by every state in it: read-only, and a template is copied out, never handed out.
NO_CHOICES = Choices({})
# The last seat asked once an action is applied: an int no caller holds (``choices`` finds the last
# seat's choices by identity), so ``_legal`` need not be reset: one store less a decision.
_NOBODY: Final = -(1 << 64)


def action_of(k: Key) -> Action:
    """The action dict of a key (a kept hand's cards sorted, as the action table lists them)."""
    kind, name, value = k
    if name is None:
        return {"type": kind}
    return {"type": kind, name: list(value) if name == "cards" else value}


@functools.cache
def _entry(k: Key) -> tuple[Key, Action]:
    """A key with its template: one of each for every situation that lists it (only the action
    table's actions are ever keys, so this stays small)."""
    return k, action_of(k)


def _choices_of(keys: list[Key]) -> Choices:
    return Choices(dict(map(_entry, keys)))


def choices(s: CapitolFields, seat: object) -> Choices:
    """The choices of ``seat`` (none if not awaited), kept for the last seat asked."""
    # By identity: ``_lseat`` is only ever -1 (with no choices), ``_NOBODY`` (an action applied since)
    # or the very int the choices were made for, so True is never taken for seat 1; an equal int that
    # is another object only misses.
    if seat is s._lseat:
        return s._legal
    if type(seat) is not int or seat not in s.awaiting:
        return NO_CHOICES
    legal: Choices
    phase = s.phase
    if phase is CHALLENGE:
        # Ruling 6a: the target's one prompt (challenge, block or let it pass).
        one_prompt = seat == s.target and s.one_prompt
        # The roles that may block the action (``opt_blocks``: data.block_roles at this table's options).
        legal = _answer_choices(s.opt_blocks.get(s.action, ())) if one_prompt else _PASS_OR_CHALLENGE
    elif phase is TURN:
        legal = _turn_of(s, seat)
    elif phase is BLOCK_CHALLENGE:
        legal = _PASS_OR_CHALLENGE
    elif phase is BLOCK:
        legal = _block_choices(s.opt_blocks.get(s.action, ()))
    elif phase is LOSE or phase is RETURN or phase is SHOW:
        legal = _card_choices(phase, tuple(s.hidden[seat]))
    elif phase is EXCHANGE:
        legal = _exchange_choices(tuple(sorted(s.hidden[seat])), s.keep)
    elif phase is INVESTIGATE:
        legal = _INVESTIGATE
    else:
        return NO_CHOICES
    s._lseat = seat
    s._legal = legal
    return legal


# Every seat number a table can have: compress() over it and ``alive`` lists the living seats in C (it
# stops at the end of ``alive``); every character action opens a window to the others alive.
_SEATS: Final = range(data.MAX_PLAYERS)


# The turn's thresholds and fees (ruling 4, ruling 10), read at every turn of every playout.
_FEES: Final = data.COST
_FORCED_AT: Final = data.FORCED_SCANDAL_AT
_SCANDAL_FEE: Final = data.COST["scandal"]
_HACKER_FEE: Final = data.COST["hacker"]


def legal_keys(s: CapitolFields, seat: object) -> list[Key]:
    """The legal actions' keys for ``seat`` ([] if not awaited)."""
    return list(keys_of(choices(s, seat)))


def keys_of(legal: Choices) -> Mapping[Key, Action]:
    """``legal.keys``, made from the templates the first time for a turn's choices (``Choices``)."""
    keys = legal.keys
    if keys is None:
        keys = legal.keys = {_template_key(a): a for a in legal.actions}
    return keys


def _template_key(action: Action) -> Key:
    k = key_of(action)
    if k is None:
        raise ValueError(f"not an action template: {action!r}")
    return k


def legal_actions(s: CapitolFields, seat: object) -> list[Action]:
    # Every call hands out fresh dicts that nobody else holds, so a caller scribbling on them cannot
    # reach the state, nor any other state in the same situation: a template's values are strings,
    # ints or None, so a shallow copy is a whole one. A kept hand's cards are a list: made anew.
    # The last seat asked is remembered by ``choices``, below: in a playout every decision asks here
    # first, so the two commonest decisions are tested before it.
    phase = s.phase
    if phase is CHALLENGE and seat != s.target and type(seat) is int and seat in s.awaiting:
        # ``choices`` of the commonest decisions written out, as it caches them: one call less. A seat
        # other than the target in a challenge window (pass or challenge), its two dicts made by
        # literals (a list of two built by ``map`` costs twice as much)...
        s._lseat = seat
        s._legal = _PASS_OR_CHALLENGE
        return [{"type": "pass"}, {"type": "challenge"}]
    elif phase is TURN and type(seat) is int and seat in s.awaiting:
        # ... and a turn (a third of a playout's decisions, and the most actions to list).
        legal = _turn_of(s, seat)
        s._lseat = seat
        s._legal = legal
        return [*map(_COPY, legal.actions)]  # (a turn lists no kept hand, and seldom two actions)
    legal = choices(s, seat)
    if phase is EXCHANGE:
        return [{"type": "keep", "cards": list(cards)} for _, _, cards in keys_of(legal)]
    actions = legal.actions
    if len(actions) == 2:
        # Most other decisions have two actions (pass or block, a card of two, keep or redraw): two
        # copies written out cost half what ``map`` costs for two.
        first, second = actions
        return [_COPY(first), _COPY(second)]
    return [*map(_COPY, actions)]  # the list built by an instruction, not by a call to list()


_COPY: Final = dict.copy  # one global read instead of a global and an attribute, at every decision
_PASS_OR_CHALLENGE = _choices_of([_PASS, _CHALLENGE])
_INVESTIGATE = _choices_of([("let_keep", None, None), ("force_redraw", None, None)])


@functools.cache
def _answer_choices(roles: tuple[str, ...]) -> Choices:
    return _choices_of([_PASS, _CHALLENGE] + [("block", "card", r) for r in roles])


@functools.cache
def _block_choices(roles: tuple[str, ...]) -> Choices:
    return _choices_of([_PASS] + [("block", "card", r) for r in roles])


@functools.cache
def _card_choices(phase: Phase, hand: tuple[str, ...]) -> Choices:
    return _choices_of([(_CARD_ACTION[phase], "card", r) for r in dict.fromkeys(hand)])


@functools.cache
def _exchange_choices(pool: tuple[str, ...], keep: int) -> Choices:
    return _choices_of([("keep", "cards", c) for c in dict.fromkeys(combinations(pool, keep))])


# A turn's situation: the seat, who is alive (2**9 others at ten seats), the purse's class (``_PURSE``),
# whether the table forces a Scandal at $10M, and a small variant's absent actions.
Turn = tuple[int, tuple[bool, ...], int, bool, frozenset[str]]

# The turns' choices by situation, looked up by a dict subscript (a third of a playout's decisions;
# an ``lru_cache``'s call and bookkeeping cost about 160 instructions more) and emptied when full, so
# that the big tables' rarely met situations do not pile up. A situation made without its key dict
# (``Choices``) takes about 790 bytes (tracemalloc), 1,300 before: 6,144 of them hold the memory 4,096
# did (4.7 MB), and random play at ten seats misses at 6.6 % of its decisions instead of 9.1 %.
_TURNS: dict[Turn, Choices] = {}
_TURNS_KEPT = 6144  # not Final: a test shrinks it, and a compiled module would have inlined a Final


def _turn_of(s: CapitolFields, seat: int) -> Choices:
    """The choices of ``seat``'s turn, by its situation: who is alive, and what its purse forces or
    affords (ruling 4: a Scandal forced at ``FORCED_SCANDAL_AT``; ruling 10: the fees)."""
    turn = (seat, tuple(s.alive), _PURSE[s.money[seat]], s.opt_forced, s.opt_absent)
    legal = _TURNS.get(turn)
    return _turn_choices(turn) if legal is None else legal


def _turn_choices(turn: Turn) -> Choices:
    """The choices of a turn's situation, made on first meeting and kept in ``_TURNS``."""
    if len(_TURNS) >= _TURNS_KEPT:
        _TURNS.clear()
    legal = _TURNS[turn] = _new_turn_choices(*turn)
    return legal


def _new_turn_choices(
    seat: int, alive: tuple[bool, ...], purse: int, forced_option: bool, absent: frozenset[str]
) -> Choices:
    # Made from the templates each action has once (``_entry``), the targets picked by ``compress``
    # over who else is alive: at ten seats a turn has 10 * 2**9 * 4 situations, too many to keep them
    # all, and random play meets one not kept at about one turn in ten (benchmarks/README.md). Their
    # keys are made only if asked for (``keys_of``).
    others = [*alive]
    others[seat] = False
    seats = [*compress(_SEATS, others)]  # whom a character action's challenge window awaits
    scandal = purse >= _COVERS_SCANDAL
    hacker = purse >= _COVERS_HACK
    targets = (*others, *_NO_SEATS[len(others) :])
    if forced_option and purse == _FORCED:
        # Ruling 4: checked when the turn starts, before anything else.
        forced = (*compress(_AIMED["scandal"], others),)
        return Choices(None, {}, _FORCED_AIMED, targets, seats, forced)
    actions = [_BARE["income"], _BARE["foreign_aid"]]
    if scandal:
        actions += compress(_AIMED["scandal"], others)
    actions.append(_BARE["banker"])
    actions += compress(_AIMED["mafia"], others)
    if hacker:
        actions += compress(_AIMED["hacker"], others)
    actions.append(_BARE["reporter"])
    actions += compress(_AIMED["police_investigate"], others)
    actions.append(_BARE["police_swap"])
    if absent:
        kept = [_entry(_template_key(a)) for a in actions if a["type"] not in absent]
        return Choices(dict(kept), others=seats)
    return Choices(None, _TURN_BARE, _TURN_AIMED[scandal, hacker], targets, seats, (*actions,))


# Each turn action with a target, its template for every seat a table can have; and the template of
# each one without (each ``_entry``'s own).
_AIMED: Final = {
    kind: tuple(_entry((kind, "target", t))[1] for t in _SEATS)
    for kind in ("scandal", "mafia", "hacker", "police_investigate")
}
# A turn's ``Choices.bare`` and ``aimed`` (by whether the purse covers a Scandal and a Hack), shared
# by every turn (only read): the aimed keys hold every seat, the turn's ``targets`` say which count.
_TURN_BARE: Final[dict[str, Key]] = {
    kind: (kind, None, None) for kind in ("income", "foreign_aid", "banker", "reporter", "police_swap")
}
_BARE: Final = {kind: _entry(k)[1] for kind, k in _TURN_BARE.items()}
_AIMED_BY_SEAT: Final = {
    kind: ("target", {t: _entry((kind, "target", t))[0] for t in _SEATS}) for kind in _AIMED
}
_TURN_AIMED: Final = {
    (scandal, hacker): {
        kind: _AIMED_BY_SEAT[kind]
        for kind in ("scandal", "mafia", "hacker", "police_investigate")
        if (scandal or kind != "scandal") and (hacker or kind != "hacker")
    }
    for scandal in (False, True)
    for hacker in (False, True)
}
_FORCED_AIMED: Final = {"scandal": _AIMED_BY_SEAT["scandal"]}
_NO_SEATS: Final = (False,) * data.MAX_PLAYERS

# A purse's class, by the money in it (ruling 4: a Scandal forced at ``FORCED_SCANDAL_AT``; ruling 10:
# the fees): an index into a tuple costs less than three comparisons. No purse holds more than the
# biggest table's money (``check_invariants``).
_COVERS_HACK: Final = 1
_COVERS_SCANDAL: Final = 2
_FORCED: Final = 3
_PURSE: Final = tuple(
    _FORCED if m >= _FORCED_AT else (m >= _SCANDAL_FEE) + (m >= _HACKER_FEE)
    for m in range(max(map(data.treasury_total, range(2, data.MAX_PLAYERS + 1))) + 1)
)


def only_choice(hand: list[str]) -> str | None:
    """Ruling 12a: a hand of one face-down card, or of two of the same role, leaves no choice of what
    to lose, return or show: it is taken automatically (None: the player chooses)."""
    return hand[0] if hand.count(hand[0]) == len(hand) else None


def apply(s: CapitolFields, seat: object, action: Any) -> None:
    """The engine's ``apply``: always by value, never by identity (the dict may be one legal_actions
    handed out and the caller changed since: a Mafia retargeted at oneself, an Income turned into a
    Scandal).

    ``apply_key`` (and ``key_of``'s two commonest cases) written out in one function: a Python call costs
    about as much as the rest of a pass in a challenge window, and every decision of a playout comes
    through here.
    The key is read as ``key_of`` reads it (tests/games/capitol/test_robustness.py), but found
    through the legal choices' own tables (``Choices.bare`` and ``aimed``): a key the choices do not
    hold is refused either way, and a lookup by the type's string and the field's value costs less
    than making the key's tuple and hashing it."""
    legal = s._legal if seat is s._lseat else choices(s, seat)
    k: Key | None = None
    if type(action) is dict:
        kind = action.get("type")
        if type(kind) is str:
            size = len(action)
            if size == 1:
                k = legal.bare.get(kind)
            elif size == 2:
                aimed = legal.aimed.get(kind)
                if aimed is not None:
                    # Checked as strictly as ``key_of``: a seat is an int (not a bool), a role a
                    # string, a kept hand a list of strings (its key sorted).
                    field, by_value = aimed
                    value = action.get(field, _MISSING)
                    if field == "target":
                        if type(value) is int:
                            k = by_value.get(value)
                            if k is not None and not legal.targets[value]:
                                k = None  # a seat this turn may not aim at (its keys hold every seat)
                    elif field == "card":
                        if type(value) is str:
                            k = by_value.get(value)
                    elif type(value) is list and all(type(c) is str for c in value):
                        k = by_value.get(tuple(sorted(value)))
    if k is None:
        _refuse(s, seat, legal, None, action)
    s._lseat = _NOBODY  # no seat finds these choices again; the handler may still read them
    s.moves += 1
    return _ON_PHASE[s.phase](s, seat, k)  # (None: returned, not dropped, two instructions less)


def apply_key(s: CapitolFields, seat: object, k: Key | None, action: Any) -> None:
    """Apply the action keyed ``k`` (``None``: not an action) for ``seat``: the phase machine. Raise
    ``IllegalAction``, changing nothing, unless it is legal now. ``action`` is what the caller sent,
    for the refusal (``None`` with a key: the action of the table's entry ``k``)."""
    # ``choices`` with its cache's hit written out: an action mostly follows legal_actions' call.
    legal = s._legal if seat is s._lseat else choices(s, seat)
    if k is None or k not in (legal.keys or keys_of(legal)):
        _refuse(s, seat, legal, k, action)
    s._lseat = _NOBODY  # no seat finds these choices again; the handler may still read them
    s.moves += 1
    _ON_PHASE[s.phase](s, seat, k)


def _refuse(s: CapitolFields, seat: object, legal: Choices, k: Key | None, action: Any) -> NoReturn:
    if not legal.actions:  # an awaited seat always has a legal action
        awaiting = s.awaiting
        raise IllegalAction(f"seat {seat!r} is not awaited now (waiting for {awaiting}); phase {s.phase}")
    raise IllegalAction(refusal(s, seat, action_of(k) if action is None and k is not None else action))


def _on_lose(s: CapitolFields, seat: int, k: Key) -> None:
    s.losses.pop(0)
    _lose(s, seat, k[2])
    if s.phase is not OVER:
        _run_losses(s)


def _on_return(s: CapitolFields, seat: int, k: Key) -> None:
    _replace(s, seat, k[2])
    s.log.append(("return", seat))
    _next_turn(s)


def refusal(s: CapitolFields, seat: object, action: Any) -> str:
    if type(action) is not dict:
        return f"an action is an object with a 'type', got {type(action).__name__}"
    return (
        f"illegal action for seat {seat} in phase {s.phase}: {action!r}; legal: "
        + json.dumps(legal_actions(s, seat), separators=(",", ":"))
    )


def decision_kind(s: CapitolFields, seat: object) -> str:
    """Ruling 19's three clocks: the player's turn, a response window (challenge or block), and
    any other choice (a card to lose, return, keep or show, a Police peek)."""
    phase = s.phase
    if phase is TURN:
        return "turn"
    if phase is CHALLENGE or phase is BLOCK or phase is BLOCK_CHALLENGE:
        return "response"
    return "choice"


def timeout_action(s: CapitolFields, seat: object) -> Action:
    """Ruling 19: a response passes, an exchange keeps the hand, a turn takes Income (or, when
    forced, a Scandal against the next living seat: every Scandal costs the same); a lost, shown
    or returned card is drawn at random from a copy of the state's generator, so asking twice
    gives the same answer and asking changes nothing."""
    legal = legal_actions(s, seat)
    if not legal:
        raise IllegalAction(f"seat {seat!r} is not awaited")
    phase = s.phase
    if phase is TURN:
        if legal[0]["type"] == "income":
            return legal[0]
        targets = [a["target"] for a in legal]
        after = [t for t in targets if t > seat]
        target = after[0] if after else targets[0]
        return {"type": "scandal", "target": target}
    if phase is EXCHANGE:
        return {"type": "keep", "cards": sorted(s.ex_hand)}
    if phase is LOSE or phase is SHOW or phase is RETURN:
        return legal[Rng(s.rng.state ^ 0x5DEECE66D).randrange(len(legal))]
    if phase is INVESTIGATE:
        return {"type": "let_keep"}
    return {"type": "pass"}


def begin_turn(s: CapitolFields, seat: int) -> None:
    """``seat``'s turn begins: a new game's first (``CapitolState.deal``, its lists made empty before)."""
    _next_turn(s, seat)


def _next_turn(s: CapitolFields, seat: int = -1) -> None:
    """The next turn begins (``seat``: a new game's first turn, ``begin_turn``), unless the stalemate
    rule ends the game between the two turns: the last turn's window is cleared. One function, not a
    call of ``begin_turn`` at every turn (about 400 instructions less a turn)."""
    if seat < 0:
        s.quiet += 1
        if s.quiet >= s.opt_stalemate or s.moves >= _MOVE_CAP:
            _stalemate(s)
            return
        # Ruling 3: clockwise (seat order), skipping eliminated players. Someone is always alive, so
        # the walk ends (back at the actor at the latest).
        n = s.n
        alive = s.alive
        seat = s.actor + 1
        while True:
            if seat == n:
                seat = 0
            if alive[seat]:
                break
            seat += 1
    s.phase = TURN
    s.actor = seat
    s.action = ""
    s.target = -1
    s.claim = ""
    s.challenger = -1
    s.blocker = -1
    s.block_claim = ""
    s.block_challenger = -1
    s.block_answer = ""
    s.awaiting = [seat]
    # These lists are mostly empty by now (a window's passes, the loss queue, an exchange's hand):
    # only a leftover one is replaced, so a turn allocates one list, not four.
    if s.passed:
        s.passed = []
    if s.losses:
        s.losses = []
    s.then = NO_LOSSES
    s.keep = 0
    if s.ex_hand:
        s.ex_hand = []
    s.shown = ""
    s.reveal_seat = -1
    s.reveal_card = ""


_MOVE_CAP: Final = data.MOVE_CAP


def _others_alive(s: CapitolFields, seat: int) -> list[int]:
    others = [*compress(_SEATS, s.alive)]
    if s.alive[seat]:
        others.remove(seat)
    return others


def _on_turn(s: CapitolFields, seat: int, k: Key) -> None:
    kind, _, target = k
    if target is None:
        target = -1
    s.action = kind
    s.target = target
    cost = _FEES.get(kind)
    if cost:
        # Ruling 10: fees are paid when the action is announced and never refunded.
        s.money[seat] -= cost
        s.treasury += cost
    s.log.append(("action", seat, kind, target))
    if kind == "income":
        _gain(s, seat, data.INCOME)
        _next_turn(s)
    elif kind == "foreign_aid":
        _continue(s)  # no challenge window (ruling 5b): straight to the block window
    elif kind == "scandal":
        s.losses = [target]
        s.then = END_TURN
        _run_losses(s)
    else:
        claim = data.CLAIM[kind]
        s.claim = claim
        s.honesty = s.honesty << 1 | (claim in s.hidden[seat])
        s.phase = CHALLENGE
        # Every other seat alive: the turn's choices list them (``apply`` leaves the choices of the
        # decision it applies in ``_legal`` while it runs), a copy costing less than a new list.
        s.awaiting = s._legal.others.copy()
        if s.passed:
            s.passed = []


def _on_challenge(s: CapitolFields, seat: int, k: Key) -> None:
    kind = k[0]
    if kind != "challenge":
        if seat == s.target and s.one_prompt and s.action in s.opt_blocks:  # (a blockable action)
            # Ruling 6a: the target's answer on blocking, sealed until the action stands. To the
            # others it has answered without challenging, as a pass (``passed``) says.
            s.block_answer = k[2] if kind == "block" else "pass"
        s.awaiting.remove(seat)
        s.passed.append(seat)
        if not s.awaiting:
            _continue(s)
        return
    actor = s.actor
    claim = s.claim
    s.challenger = seat
    s.awaiting = []
    s.log.append(("challenge", seat, actor, claim))
    if claim in s.hidden[actor]:
        # The book: the challenger loses, *then* the revealed card goes back into the deck, the
        # deck is shuffled and its owner draws (ruling 9 swaps these two; the book wins). Then
        # the action goes on.
        s.log.append(("reveal", actor, claim))
        s.reveal_seat = actor
        s.reveal_card = claim
        s.losses = [seat]
        # Ruling 11 (the book's Hacker text): a target who challenged a true Hacker loses the
        # challenge, then the hack, with no Judge window; anyone else goes on to the block window.
        s.then = RESOLVE if s.action == "hacker" and seat == s.target else CONTINUE
    else:
        s.log.append(("bluff", actor, claim))
        s.losses = [actor]
        s.then = END_TURN
    _run_losses(s)


def _continue(s: CapitolFields) -> None:
    """The action stands after its challenge window: open the block window, or resolve."""
    kind = s.action
    if kind in s.opt_blocks:  # (some role may block it)
        if kind in data.BLOCKED_BY_ANYONE:
            blockers = _others_alive(s, s.actor)
        else:
            # Ruling 6: only the target blocks, even after their own failed challenge.
            blockers = [s.target] if s.alive[s.target] else []
            answer = s.block_answer
            s.block_answer = ""
            if blockers and answer and answer != "pass":
                _block(s, s.target, answer)  # ruling 6a: the sealed block takes effect now
                return
            if answer == "pass" and s.challenger < 0:
                blockers = []  # ruling 6a: it let it pass, and nothing new has happened since
        if blockers:
            s.phase = BLOCK
            s.awaiting = blockers
            s.passed = []
            return
    _resolve(s)


def _on_block(s: CapitolFields, seat: int, k: Key) -> None:
    if k[0] == "pass":
        s.awaiting.remove(seat)
        s.passed.append(seat)
        if not s.awaiting:
            _resolve(s)
        return
    _block(s, seat, k[2])


def _block(s: CapitolFields, seat: int, role: str) -> None:
    """``seat`` blocks claiming ``role`` (the claim is made now: its honesty bit is the hand's now)."""
    s.blocker = seat
    s.block_claim = role
    s.honesty = s.honesty << 1 | (role in s.hidden[seat])
    s.log.append(("block", seat, role, s.actor))
    s.phase = BLOCK_CHALLENGE
    s.passed = []
    if s.opt_anyone:
        s.awaiting = _others_alive(s, seat)  # the actor included
    else:
        s.awaiting = [s.actor]  # ruling 7: the book's two options are the actor's


def _on_block_challenge(s: CapitolFields, seat: int, k: Key) -> None:
    kind = k[0]
    blocker = s.blocker
    if kind == "pass":
        s.awaiting.remove(seat)
        s.passed.append(seat)
        if s.awaiting:
            return
        # Ruling 8 (the book's "Accept the block"): the action is not executed; the blocker
        # puts a card of their choice back, shuffles and draws one.
        s.log.append(("blocked", s.actor, blocker))
        s.phase = RETURN
        s.awaiting = [blocker]
        card = only_choice(s.hidden[blocker])
        if card is not None:
            _replace(s, blocker, card)
            s.log.append(("return", blocker))
            _next_turn(s)
        return
    claim = s.block_claim
    s.block_challenger = seat
    s.awaiting = []
    s.log.append(("challenge", seat, blocker, claim))
    if claim in s.hidden[blocker]:
        # The book (ruling 9, in the book's order): the challenger loses, then the revealed card is
        # replaced; the block stands with no second exchange (ruling 8).
        s.log.append(("reveal", blocker, claim))
        s.log.append(("blocked", s.actor, blocker))
        s.reveal_seat = blocker
        s.reveal_card = claim
        s.losses = [seat]
        s.then = END_TURN
    else:
        # The block fails and the action resolves (a false Judge then loses twice, ruling 11).
        s.log.append(("bluff", blocker, claim))
        s.losses = [blocker]
        s.then = RESOLVE
    _run_losses(s)


def _run_losses(s: CapitolFields) -> None:
    losses = s.losses
    hidden = s.hidden
    while losses:
        seat = losses[0]
        hand = hidden[seat]
        if not hand:
            # Ruling 11: a player who lost their last influence early loses only what they had.
            losses.pop(0)
            continue
        # only_choice(hand) written out: a loss is taken here more often than anywhere else.
        card = hand[0]
        if hand.count(card) == len(hand):
            losses.pop(0)
            _lose(s, seat, card)
            if s.phase is OVER:
                return
            continue
        s.phase = LOSE
        s.awaiting = [seat]
        return
    seat = s.reveal_seat
    if seat >= 0:
        s.reveal_seat = -1
        if s.alive[seat]:
            _replace(s, seat, s.reveal_card)
            s.log.append(("replace", seat, s.reveal_card))
        s.reveal_card = ""
    then = s.then
    if then is END_TURN:
        _next_turn(s)
    elif then is CONTINUE:
        _continue(s)
    else:
        _resolve(s)


def _lose(s: CapitolFields, seat: int, card: str) -> None:
    hand = s.hidden[seat]
    hand.remove(card)
    s.revealed[seat].append(card)  # ruling 12: face up for the rest of the game
    s.log.append(("lose", seat, card))
    s.quiet = -1  # the turn of this loss is not a quiet one (it ends next, counting 0)
    if s.known:
        _forget(s, seat)
    if hand:
        return
    # Ruling 12: eliminated; their money returns to the Treasury.
    s.alive[seat] = False
    money = s.money[seat]
    s.money[seat] = 0
    s.treasury += money
    s.log.append(("out", seat, money))
    alive = s.alive
    if alive.count(True) == 1:  # (counted in C: no list of the living made at every elimination)
        # Ruling 18: the last player with a face-down card wins.
        winner = alive.index(True)
        s.phase = OVER
        s.awaiting = []
        s.winner = winner
        s.log.append(("win", winner))


def _stalemate(s: CapitolFields) -> None:
    """The stalemate rule (docs/rules/capitol.md): the game ends between two turns, after
    ``opt_stalemate`` turns in a row with no influence lost or once ``data.MOVE_CAP`` decisions were
    made. The living players with the most face-down cards win, then the richest; a tie shares the win."""
    reason = "quiet" if s.quiet >= s.opt_stalemate else "cap"
    living = list(compress(_SEATS, s.alive))
    best = max((len(s.hidden[i]), s.money[i]) for i in living)
    winners = [i for i in living if (len(s.hidden[i]), s.money[i]) == best]
    count = s.quiet if reason == "quiet" else s.moves
    s.phase = OVER
    s.awaiting = []
    s.passed = []
    s.winner = winners[0]
    s.tied = winners if len(winners) > 1 else []
    s.log.append(("stalemate", reason, count, *winners))  # flat: a log entry is hashable


def _resolve(s: CapitolFields) -> None:
    kind = s.action
    actor = s.actor
    target = s.target
    if not s.alive[actor]:
        _next_turn(s)
        return
    if target >= 0 and not s.alive[target]:
        # Ruling 12: the target was eliminated before the action resolved.
        s.log.append(("no_effect", target))
        _next_turn(s)
        return
    if kind == "foreign_aid":
        _gain(s, actor, data.FOREIGN_AID)
    elif kind == "banker":
        _gain(s, actor, data.BANKER_TAKE)
    elif kind == "mafia":
        amount = min(data.MAFIA_STEAL, s.money[target])  # ruling 13
        s.money[target] -= amount
        s.money[actor] += amount
        s.log.append(("steal", actor, target, amount))
    elif kind == "hacker":
        s.losses = [target]
        s.then = END_TURN
        _run_losses(s)
        return
    elif kind == "reporter" or kind == "police_swap":
        _begin_exchange(s, data.DRAW[kind])
        return
    elif kind == "police_investigate":
        s.phase = SHOW
        s.awaiting = [target]
        card = only_choice(s.hidden[target])
        if card is not None:
            _show(s, target, card)
        return
    _next_turn(s)


def _gain(s: CapitolFields, seat: int, amount: int) -> None:
    amount = min(amount, s.treasury)  # ruling 2: the Treasury pays what it holds
    s.money[seat] += amount
    s.treasury -= amount
    s.log.append(("gain", seat, amount))


def _begin_exchange(s: CapitolFields, count: int) -> None:
    actor = s.actor
    hand = s.hidden[actor]
    s.ex_hand = hand.copy()
    s.keep = len(hand)
    hand += s.deck[:count]
    del s.deck[:count]
    if s.known:
        _forget(s, actor)
    s.log.append(("draw", actor, count))
    s.phase = EXCHANGE
    s.awaiting = [actor]


def _on_exchange(s: CapitolFields, seat: int, k: Key) -> None:
    cards: list[str] = list(k[2])
    rest = s.hidden[seat].copy()
    for card in cards:
        rest.remove(card)
    s.hidden[seat] = list(cards)
    s.deck += rest
    s.rng.shuffle(s.deck)
    s.log.append(("exchange", seat, len(rest)))
    _next_turn(s)


def _on_show(s: CapitolFields, seat: int, k: Key) -> None:
    _show(s, seat, k[2])


def _show(s: CapitolFields, target: int, card: str) -> None:
    police = s.actor
    s.shown = card
    s.known = [k for k in s.known if k[0] != police or k[1] != target]
    s.known.append((police, target, card))
    s.log.append(("show", target, police))
    s.phase = INVESTIGATE
    s.awaiting = [police]


def _on_investigate(s: CapitolFields, seat: int, k: Key) -> None:
    kind = k[0]
    target = s.target
    if kind == "force_redraw":
        _replace(s, target, s.shown)
    s.log.append((kind, seat, target))
    _next_turn(s)


def _replace(s: CapitolFields, seat: int, card: str) -> None:
    """A card goes back into the deck, the deck is shuffled, the holder draws the top card."""
    hand = s.hidden[seat]
    hand.remove(card)
    deck = s.deck
    deck.append(card)
    s.rng.shuffle(deck)
    hand.append(deck.pop(0))
    if s.known:
        _forget(s, seat)


def _forget(s: CapitolFields, seat: int) -> None:
    # Police knowledge of a hand lasts until that hand changes in any way.
    s.known = [k for k in s.known if k[1] != seat]


# The phase machine: each phase's handler of an awaited seat's legal action (its key).
# A handler's seat is an int: ``apply`` calls it only once the choices of that very seat have the key
# (``apply`` takes any object as a seat, and refuses what is not an int awaited now).
_ON_PHASE: Final[dict[Phase, Callable[[CapitolFields, Any, Key], None]]] = {
    CHALLENGE: _on_challenge,
    TURN: _on_turn,
    BLOCK: _on_block,
    BLOCK_CHALLENGE: _on_block_challenge,
    LOSE: _on_lose,
    RETURN: _on_return,
    EXCHANGE: _on_exchange,
    SHOW: _on_show,
    INVESTIGATE: _on_investigate,
}

_MISSING: Any = object()


def key_of(action: Any) -> Key | None:
    """The key of an action dict, checked strictly (seats are ints, not bools or floats; roles are
    strings; no extra field), or ``None``. A kept hand is a multiset: its key sorts the cards."""
    if type(action) is not dict:
        return None
    kind = action.get("type")
    if type(kind) is not str:
        return None
    size = len(action)
    if size == 1:
        return (kind, None, None)
    if size != 2:
        return None
    value = action.get("target", _MISSING)
    if value is not _MISSING:
        return (kind, "target", value) if type(value) is int else None
    value = action.get("card", _MISSING)
    if value is not _MISSING:
        return (kind, "card", value) if type(value) is str else None
    value = action.get("cards", _MISSING)
    if type(value) is list and all(type(c) is str for c in value):
        return (kind, "cards", tuple(sorted(value)))
    return None
