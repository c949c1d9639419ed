"""The Capitol game state and its rules: turns, challenge and block windows, losses, exchanges.

A state is a handful of plain lists and scalars (``__slots__``) so that ``clone`` is a few list copies
and random playouts stay fast. Every decision the game awaits is one *phase*:

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

Losses are queued (``losses``) because one answer can cost two influences (ruling 11); ``then`` says
what follows once the queue is empty: end the turn, continue the action (block window, then
resolution), or resolve it. A card revealed to win a challenge (``reveal_seat``/``reveal_card``) stays
in its owner's hand until the challenger's loss is taken, then is shuffled back and replaced: the
rulebook's order ("YOU lose an influence card. The challenged player then returns their revealed
card"), which wins over ruling 9's.

``honesty`` is the private record behind the end-of-game summary. Who claimed what, and who challenged
it, is already in the public log; the one secret is whether each claimant held the role at the moment
of the claim. So the record is one bit per claim (an action's role, a block's role), in log order,
after a leading 1: an int, so recording costs a shift and ``clone`` copies nothing. No view shows it
before the end (views.py builds the summary from the log and these bits).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from itertools import combinations
from typing import Any

from conflictology.engine import Action, GameState, IllegalAction, Rng, View, json_text
from conflictology.games.capitol import data

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
PHASES = (TURN, CHALLENGE, BLOCK, BLOCK_CHALLENGE, LOSE, RETURN, EXCHANGE, SHOW, INVESTIGATE, OVER)

# What follows an emptied loss queue.
THEN_END = "end_turn"
THEN_CONTINUE = "continue"  # the action stands: block window if any, then resolution
THEN_RESOLVE = "resolve"
THENS = ("", THEN_END, THEN_CONTINUE, THEN_RESOLVE)

# A legal action as an immutable key ``(type, field, value)``: the field "target" (an int seat), "card"
# (a role) or "cards" (a kept hand, a sorted tuple of roles), or None and None for a bare type. The
# state caches keys, never the dicts it hands out.
Key = tuple[str, str | None, Any]
_PASS: Key = ("pass", None, None)
_CHALLENGE: Key = ("challenge", None, None)

# A log entry is a tuple (event type, fields…); views.py renders it. ("_raw", dict) holds an entry
# already rendered (a determinized state copies the log it was drawn from).
LogEntry = tuple[Any, ...]

_FIELDS = (
    "n", "options", "money", "hidden", "revealed", "alive", "deck", "treasury", "rng", "phase",
    "actor", "action", "target", "claim", "challenger", "blocker", "block_claim", "block_challenger",
    "awaiting", "passed", "losses", "then", "reveal_seat", "reveal_card", "keep", "ex_hand", "shown",
    "known", "log", "winner", "honesty",
)
NO_CLAIMS = 1  # ``honesty`` before the first claim: the leading 1 alone


class CapitolState(GameState):
    __slots__ = (*_FIELDS, "opt_forced", "opt_steal", "opt_anyone", "_lseat", "_legal")

    n: int
    options: dict[str, Any]
    opt_forced: bool
    opt_steal: tuple[str, ...]
    opt_anyone: bool
    money: list[int]
    hidden: list[list[str]]
    revealed: list[list[str]]
    alive: list[bool]
    deck: list[str]  # top first
    treasury: int
    rng: Rng
    phase: str
    actor: int
    action: str  # the turn action's type, "" before it is chosen
    target: int  # -1: none
    claim: str  # the role the action claims, "" for general actions
    challenger: int
    blocker: int
    block_claim: str
    block_challenger: int
    awaiting: list[int]  # the seats that may still answer, in seat order
    passed: list[int]  # who passed in the current window, in the order they passed
    losses: list[int]  # seats that must still lose an influence, first one now
    then: str
    reveal_seat: int  # a true claim revealed in a challenge, replaced once the losses are taken
    reveal_card: str
    keep: int  # an exchange: how many cards the actor keeps
    ex_hand: list[str]  # an exchange: the actor's hand before drawing (private)
    shown: str  # an investigation: the card shown to the Police player (private)
    known: list[tuple[int, int, str]]  # (police seat, target, card) still known to be in that hand
    log: list[LogEntry]
    winner: int
    honesty: int  # private until the end (see the module docstring)
    _lseat: int
    _legal: list[Key]

    # ------------------------------------------------------------------ construction

    @classmethod
    def deal(cls, players: int, options: dict[str, Any], deck: list[str], rng: Rng) -> CapitolState:
        """A new game: seat i holds ``deck[2i:2i+2]``, the rest is the draw pile, top first."""
        s = cls.__new__(cls)
        s.n = players
        s._set_options(options)
        s.money = [data.STARTING_MONEY] * players
        hs = data.HAND_SIZE
        s.hidden = [deck[i * hs : i * hs + hs] for i in range(players)]
        s.revealed = [[] for _ in range(players)]
        s.alive = [True] * players
        s.deck = deck[players * hs :]
        s.treasury = data.TREASURY_TOTAL - data.STARTING_MONEY * players
        s.rng = rng
        first = options["first_player"]
        if first is None:
            first = rng.randrange(players)  # ruling 3
        s.known = []
        s.log = [("start", first)]
        s.winner = -1
        s.honesty = NO_CLAIMS
        s._lseat = -1
        s._legal = []
        s._begin_turn(first)
        return s

    def _set_options(self, options: dict[str, Any]) -> None:
        self.options = options
        self.opt_forced = options["forced_scandal"]
        self.opt_steal = tuple(options["steal_blockers"])
        self.opt_anyone = options["anyone_challenges_block"]

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
        c.money = self.money[:]
        c.hidden = [h[:] for h in self.hidden]
        c.revealed = [r[:] for r in self.revealed]
        c.alive = self.alive[:]
        c.deck = self.deck[:]
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
        c.awaiting = self.awaiting[:]
        c.passed = self.passed[:]
        c.losses = self.losses[:]
        c.then = self.then
        c.reveal_seat = self.reveal_seat
        c.reveal_card = self.reveal_card
        c.keep = self.keep
        c.ex_hand = self.ex_hand[:]
        c.shown = self.shown
        c.known = self.known[:]
        c.log = self.log[:]
        c.winner = self.winner
        c.honesty = self.honesty
        # The cached legal list is never mutated in place, so the twin may share it.
        c._lseat = self._lseat
        c._legal = self._legal
        return c

    # ------------------------------------------------------------------ queries

    def waiting_for(self) -> list[int]:
        return self.awaiting[:]

    def is_over(self) -> bool:
        return self.phase == OVER

    def winners(self) -> list[int]:
        return [self.winner] if self.phase == OVER else []

    def _legal_keys(self, seat: int) -> list[Key]:
        """The legal actions' keys for ``seat`` ([] if not awaited), cached for the last seat asked."""
        if type(seat) is int and seat == self._lseat:
            return self._legal
        if type(seat) is not int or seat not in self.awaiting:
            return []
        keys = self._compute_legal(seat)
        self._lseat = seat
        self._legal = keys
        return keys

    def legal_actions(self, seat: int) -> list[Action]:
        # The cache holds immutable keys; every call hands out fresh dicts that nobody else holds, so
        # a caller scribbling on them cannot reach the state (nor a clone sharing the cache).
        keys = self._legal_keys(seat)
        if self.phase == EXCHANGE:
            return [{"type": "keep", "cards": list(cards)} for _, _, cards in keys]
        return [{"type": k} if f is None else {"type": k, f: v} for k, f, v in keys]

    def _compute_legal(self, seat: int) -> list[Key]:
        phase = self.phase
        if phase in (CHALLENGE, BLOCK_CHALLENGE):
            return [_PASS, _CHALLENGE]
        if phase == TURN:
            return self._turn_actions(seat)
        if phase == BLOCK:
            return [_PASS] + [("block", "card", r) for r in self._block_roles()]
        if phase in (LOSE, RETURN, SHOW):
            return [(phase, "card", r) for r in _distinct(self.hidden[seat])]
        if phase == EXCHANGE:
            pool = sorted(self.hidden[seat])
            return [("keep", "cards", c) for c in dict.fromkeys(combinations(pool, self.keep))]
        if phase == INVESTIGATE:
            return [("let_keep", None, None), ("force_redraw", None, None)]
        return []

    def _turn_actions(self, seat: int) -> list[Key]:
        money = self.money[seat]
        alive = self.alive
        targets = [t for t in range(self.n) if t != seat and alive[t]]
        if self.opt_forced and money >= data.FORCED_SCANDAL_AT:
            # Ruling 4: checked when the turn starts, before anything else.
            return [("scandal", "target", t) for t in targets]
        out: list[Key] = [("income", None, None), ("foreign_aid", None, None)]
        if money >= data.COST["scandal"]:
            out += [("scandal", "target", t) for t in targets]
        out.append(("banker", None, None))
        out += [("mafia", "target", t) for t in targets]
        if money >= data.COST["hacker"]:
            out += [("hacker", "target", t) for t in targets]
        out.append(("reporter", None, None))
        out += [("police_investigate", "target", t) for t in targets]
        out.append(("police_swap", None, None))
        return out

    def _block_roles(self) -> tuple[str, ...]:
        if self.action == "mafia":
            return self.opt_steal
        return data.BLOCK_ROLES.get(self.action, ())

    # ------------------------------------------------------------------ applying actions

    def legal_action_indices(self, seat: int) -> list[int]:
        # The engine's default builds every action dict and looks each up; a search asks this at
        # each of its own decisions of every walk, so the keys are mapped straight to the table's.
        index = _table_keys()[1]
        return [index[k] for k in self._legal_keys(seat)]

    def apply_index(self, seat: int, index: int) -> None:
        keys = _table_keys()[0]
        if type(index) is not int or not 0 <= index < len(keys):
            raise IllegalAction(f"action index out of range: {index!r} (table has {len(keys)})")
        self._apply_key(seat, keys[index], index)

    def apply(self, seat: int, action: Any) -> None:
        # Always by value, never by identity: the dict may be one legal_actions handed out and the
        # caller changed since (a Mafia retargeted at oneself, an Income turned into a Scandal).
        self._apply_key(seat, _key(action), action)

    def _apply_key(self, seat: int, k: Key | None, action: Any) -> None:
        legal = self._legal_keys(seat)
        if not legal:  # an awaited seat always has a legal action
            raise IllegalAction(
                f"seat {seat!r} is not awaited now (waiting for {self.awaiting}); phase {self.phase}"
            )
        if k is None or k not in legal:
            if type(action) is int:
                action = self.game.action_table.action(action)
            raise IllegalAction(self._refusal(seat, action))
        self._lseat = -1
        phase = self.phase
        if phase == CHALLENGE:
            self._on_challenge(seat, k[0])
        elif phase == TURN:
            self._on_turn(seat, k)
        elif phase == BLOCK:
            self._on_block(seat, k)
        elif phase == BLOCK_CHALLENGE:
            self._on_block_challenge(seat, k[0])
        elif phase == LOSE:
            self.losses.pop(0)
            self._lose(seat, k[2])
            if self.phase != OVER:
                self._run_losses()
        elif phase == RETURN:
            self._replace(seat, k[2])
            self.log.append(("return", seat))
            self._next_turn()
        elif phase == EXCHANGE:
            self._on_exchange(seat, list(k[2]))
        elif phase == SHOW:
            self._show(seat, k[2])
        elif phase == INVESTIGATE:
            self._on_investigate(seat, k[0])

    def _refusal(self, seat: int, action: Any) -> str:
        if type(action) is not dict:
            return f"an action is an object with a 'type', got {type(action).__name__}"
        return (
            f"illegal action for seat {seat} in phase {self.phase}: {action!r}; legal: "
            + json.dumps(self.legal_actions(seat), separators=(",", ":"))
        )

    def decision_kind(self, seat: int) -> str:
        """Ruling 19's three clocks: the player's turn, a response window (challenge or block), and
        any other choice (a card to lose, return, keep or show, a Police peek)."""
        phase = self.phase
        if phase == TURN:
            return "turn"
        if phase in (CHALLENGE, BLOCK, BLOCK_CHALLENGE):
            return "response"
        return "choice"

    def timeout_action(self, seat: int) -> Action:
        """Ruling 19: a response passes, an exchange keeps the hand, a turn takes Income (or, when
        forced, a Scandal against the next living seat: every Scandal costs the same); a lost, shown
        or returned card is drawn at random from a copy of the state's generator, so asking twice
        gives the same answer and asking changes nothing."""
        legal = self.legal_actions(seat)
        if not legal:
            raise IllegalAction(f"seat {seat!r} is not awaited")
        phase = self.phase
        if phase == TURN:
            if legal[0]["type"] == "income":
                return legal[0]
            targets = [a["target"] for a in legal]
            after = [t for t in targets if t > seat]
            target = after[0] if after else targets[0]
            return {"type": "scandal", "target": target}
        if phase == EXCHANGE:
            return {"type": "keep", "cards": sorted(self.ex_hand)}
        if phase in (LOSE, SHOW, RETURN):
            return legal[Rng(self.rng.state ^ 0x5DEECE66D).randrange(len(legal))]
        if phase == INVESTIGATE:
            return {"type": "let_keep"}
        return {"type": "pass"}

    # ------------------------------------------------------------------ the rules

    def _begin_turn(self, seat: int) -> None:
        self.phase = TURN
        self.actor = seat
        self.action = ""
        self.target = -1
        self.claim = ""
        self.challenger = -1
        self.blocker = -1
        self.block_claim = ""
        self.block_challenger = -1
        self.awaiting = [seat]
        self.passed = []
        self.losses = []
        self.then = ""
        self.keep = 0
        self.ex_hand = []
        self.shown = ""
        self.reveal_seat = -1
        self.reveal_card = ""

    def _next_turn(self) -> None:
        # Ruling 3: clockwise (seat order), skipping eliminated players.
        n = self.n
        alive = self.alive
        s = self.actor
        for _ in range(n):
            s = (s + 1) % n
            if alive[s]:
                break
        self._begin_turn(s)

    def _others_alive(self, seat: int) -> list[int]:
        alive = self.alive
        return [s for s in range(self.n) if s != seat and alive[s]]

    def _on_turn(self, seat: int, k: Key) -> None:
        kind: str = k[0]
        self.action = kind
        target: int = -1 if k[2] is None else k[2]
        self.target = target
        cost = data.COST.get(kind)
        if cost:
            # Ruling 10: fees are paid when the action is announced and never refunded.
            self.money[seat] -= cost
            self.treasury += cost
        self.log.append(("action", seat, kind, target))
        if kind == "income":
            self._gain(seat, data.INCOME)
            self._next_turn()
        elif kind == "foreign_aid":
            self._continue()  # no challenge window (ruling 5b): straight to the block window
        elif kind == "scandal":
            self.losses = [target]
            self.then = THEN_END
            self._run_losses()
        else:
            claim = data.CLAIM[kind]
            self.claim = claim
            self.honesty = self.honesty << 1 | (claim in self.hidden[seat])
            self.phase = CHALLENGE
            self.awaiting = self._others_alive(seat)
            self.passed = []

    def _on_challenge(self, seat: int, kind: str) -> None:
        if kind == "pass":
            self.awaiting.remove(seat)
            self.passed.append(seat)
            if not self.awaiting:
                self._continue()
            return
        actor = self.actor
        claim = self.claim
        self.challenger = seat
        self.awaiting = []
        self.log.append(("challenge", seat, actor, claim))
        if claim in self.hidden[actor]:
            # The book: the challenger loses, *then* the revealed card goes back into the deck, the
            # deck is shuffled and its owner draws (ruling 9 swaps these two; the book wins). Then
            # the action goes on.
            self.log.append(("reveal", actor, claim))
            self.reveal_seat = actor
            self.reveal_card = claim
            self.losses = [seat]
            # Ruling 11 (the book's Hacker text): a target who challenged a true Hacker loses the
            # challenge, then the hack, with no Judge window; anyone else goes on to the block window.
            self.then = THEN_RESOLVE if self.action == "hacker" and seat == self.target else THEN_CONTINUE
        else:
            self.log.append(("bluff", actor, claim))
            self.losses = [actor]
            self.then = THEN_END
        self._run_losses()

    def _continue(self) -> None:
        """The action stands after its challenge window: open the block window, or resolve."""
        kind = self.action
        roles = self._block_roles()
        if roles:
            if kind in data.BLOCKED_BY_ANYONE:
                blockers = self._others_alive(self.actor)
            else:
                # Ruling 6: only the target blocks, even after their own failed challenge.
                blockers = [self.target] if self.alive[self.target] else []
            if blockers:
                self.phase = BLOCK
                self.awaiting = blockers
                self.passed = []
                return
        self._resolve()

    def _on_block(self, seat: int, k: Key) -> None:
        if k[0] == "pass":
            self.awaiting.remove(seat)
            self.passed.append(seat)
            if not self.awaiting:
                self._resolve()
            return
        self.blocker = seat
        role = k[2]
        self.block_claim = role
        self.honesty = self.honesty << 1 | (role in self.hidden[seat])
        self.log.append(("block", seat, role, self.actor))
        self.phase = BLOCK_CHALLENGE
        self.passed = []
        if self.opt_anyone:
            self.awaiting = self._others_alive(seat)  # the actor included
        else:
            self.awaiting = [self.actor]  # ruling 7: the book's two options are the actor's

    def _on_block_challenge(self, seat: int, kind: str) -> None:
        blocker = self.blocker
        if kind == "pass":
            self.awaiting.remove(seat)
            self.passed.append(seat)
            if self.awaiting:
                return
            # Ruling 8 (the book's "Accept the block"): the action is not executed; the blocker
            # puts a card of their choice back, shuffles and draws one.
            self.log.append(("blocked", self.actor, blocker))
            self.phase = RETURN
            self.awaiting = [blocker]
            hand = self.hidden[blocker]
            if hand.count(hand[0]) == len(hand):  # ruling 12a: only one choice
                self._replace(blocker, hand[0])
                self.log.append(("return", blocker))
                self._next_turn()
            return
        claim = self.block_claim
        self.block_challenger = seat
        self.awaiting = []
        self.log.append(("challenge", seat, blocker, claim))
        if claim in self.hidden[blocker]:
            # The book (ruling 9, in the book's order): the challenger loses, then the revealed card is
            # replaced; the block stands with no second exchange (ruling 8).
            self.log.append(("reveal", blocker, claim))
            self.log.append(("blocked", self.actor, blocker))
            self.reveal_seat = blocker
            self.reveal_card = claim
            self.losses = [seat]
            self.then = THEN_END
        else:
            # The block fails and the action resolves (a false Judge then loses twice, ruling 11).
            self.log.append(("bluff", blocker, claim))
            self.losses = [blocker]
            self.then = THEN_RESOLVE
        self._run_losses()

    def _run_losses(self) -> None:
        losses = self.losses
        hidden = self.hidden
        while losses:
            seat = losses[0]
            hand = hidden[seat]
            if not hand:
                # Ruling 11: a player who lost their last influence early loses only what they had.
                losses.pop(0)
                continue
            if hand.count(hand[0]) == len(hand):
                # Ruling 12a: one face-down card, or two of the same role: taken automatically.
                losses.pop(0)
                self._lose(seat, hand[0])
                if self.phase == OVER:
                    return
                continue
            self.phase = LOSE
            self.awaiting = [seat]
            return
        seat = self.reveal_seat
        if seat >= 0:
            self.reveal_seat = -1
            if self.alive[seat]:
                self._replace(seat, self.reveal_card)
                self.log.append(("replace", seat, self.reveal_card))
            self.reveal_card = ""
        then = self.then
        if then == THEN_END:
            self._next_turn()
        elif then == THEN_CONTINUE:
            self._continue()
        else:
            self._resolve()

    def _lose(self, seat: int, card: str) -> None:
        hand = self.hidden[seat]
        hand.remove(card)
        self.revealed[seat].append(card)  # ruling 12: face up for the rest of the game
        self.log.append(("lose", seat, card))
        if self.known:
            self._forget(seat)
        if hand:
            return
        # Ruling 12: eliminated; their money returns to the Treasury.
        self.alive[seat] = False
        money = self.money[seat]
        self.money[seat] = 0
        self.treasury += money
        self.log.append(("out", seat, money))
        living = [s for s in range(self.n) if self.alive[s]]
        if len(living) == 1:
            # Ruling 18: the last player with a face-down card wins.
            self.phase = OVER
            self.awaiting = []
            self.winner = living[0]
            self.log.append(("win", living[0]))

    def _resolve(self) -> None:
        kind = self.action
        actor = self.actor
        target = self.target
        if not self.alive[actor]:
            self._next_turn()
            return
        if target >= 0 and not self.alive[target]:
            # Ruling 12: the target was eliminated before the action resolved.
            self.log.append(("no_effect", target))
            self._next_turn()
            return
        if kind == "foreign_aid":
            self._gain(actor, data.FOREIGN_AID)
        elif kind == "banker":
            self._gain(actor, data.BANKER_TAKE)
        elif kind == "mafia":
            amount = min(data.MAFIA_STEAL, self.money[target])  # ruling 13
            self.money[target] -= amount
            self.money[actor] += amount
            self.log.append(("steal", actor, target, amount))
        elif kind == "hacker":
            self.losses = [target]
            self.then = THEN_END
            self._run_losses()
            return
        elif kind == "reporter" or kind == "police_swap":
            self._begin_exchange(data.DRAW[kind])
            return
        elif kind == "police_investigate":
            self.phase = SHOW
            self.awaiting = [target]
            hand = self.hidden[target]
            if hand.count(hand[0]) == len(hand):  # ruling 12a
                self._show(target, hand[0])
            return
        self._next_turn()

    def _gain(self, seat: int, amount: int) -> None:
        amount = min(amount, self.treasury)  # ruling 2: the Treasury pays what it holds
        self.money[seat] += amount
        self.treasury -= amount
        self.log.append(("gain", seat, amount))

    def _begin_exchange(self, count: int) -> None:
        actor = self.actor
        hand = self.hidden[actor]
        self.ex_hand = hand[:]
        self.keep = len(hand)
        hand += self.deck[:count]
        del self.deck[:count]
        if self.known:
            self._forget(actor)
        self.log.append(("draw", actor, count))
        self.phase = EXCHANGE
        self.awaiting = [actor]

    def _on_exchange(self, seat: int, cards: list[str]) -> None:
        rest = self.hidden[seat][:]
        for card in cards:
            rest.remove(card)
        self.hidden[seat] = list(cards)
        self.deck += rest
        self.rng.shuffle(self.deck)
        self.log.append(("exchange", seat, len(rest)))
        self._next_turn()

    def _show(self, target: int, card: str) -> None:
        police = self.actor
        self.shown = card
        self.known = [k for k in self.known if k[0] != police or k[1] != target]
        self.known.append((police, target, card))
        self.log.append(("show", target, police))
        self.phase = INVESTIGATE
        self.awaiting = [police]

    def _on_investigate(self, seat: int, kind: str) -> None:
        target = self.target
        if kind == "force_redraw":
            self._replace(target, self.shown)
        self.log.append((kind, seat, target))
        self._next_turn()

    def _replace(self, seat: int, card: str) -> None:
        """A card goes back into the deck, the deck is shuffled, the holder draws the top card."""
        hand = self.hidden[seat]
        hand.remove(card)
        deck = self.deck
        deck.append(card)
        self.rng.shuffle(deck)
        hand.append(deck.pop(0))
        if self.known:
            self._forget(seat)

    def _forget(self, seat: int) -> None:
        # Police knowledge of a hand lasts until that hand changes in any way.
        self.known = [k for k in self.known if k[1] != seat]

    # ------------------------------------------------------------------ views and JSON

    def view(self, seat: int | None) -> View:
        from conflictology.games.capitol.views import render_view

        if seat is not None and (type(seat) is not int or not 0 <= seat < self.n):
            raise ValueError(f"no seat {seat!r} at a table of {self.n}")
        return render_view(self, seat)

    def to_json(self) -> str:
        doc: dict[str, Any] = {"game": "capitol", "version": 1}
        for name in _FIELDS:
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
            s._set_options(dict(doc["options"]))
            s.money = [int(m) for m in doc["money"]]
            s.hidden = [[str(c) for c in h] for h in doc["hidden"]]
            s.revealed = [[str(c) for c in r] for r in doc["revealed"]]
            s.alive = [bool(a) for a in doc["alive"]]
            s.deck = [str(c) for c in doc["deck"]]
            s.treasury = int(doc["treasury"])
            s.rng = Rng(int(doc["rng"]))
            s.phase = str(doc["phase"])
            s.actor = int(doc["actor"])
            s.action = str(doc["action"])
            s.target = int(doc["target"])
            s.claim = str(doc["claim"])
            s.challenger = int(doc["challenger"])
            s.blocker = int(doc["blocker"])
            s.block_claim = str(doc["block_claim"])
            s.block_challenger = int(doc["block_challenger"])
            s.awaiting = [int(x) for x in doc["awaiting"]]
            s.passed = [int(x) for x in doc["passed"]]
            s.losses = [int(x) for x in doc["losses"]]
            s.then = str(doc["then"])
            s.reveal_seat = int(doc["reveal_seat"])
            s.reveal_card = str(doc["reveal_card"])
            s.keep = int(doc["keep"])
            s.ex_hand = [str(c) for c in doc["ex_hand"]]
            s.shown = str(doc["shown"])
            s.known = [(int(p), int(t), str(c)) for p, t, c in doc["known"]]
            s.log = [tuple(e) for e in doc["log"]]
            s.winner = int(doc["winner"])
            honest = doc.get("honesty")
            if honest is not None and (type(honest) is not list or any(type(b) is not bool for b in honest)):
                raise ValueError(f"honesty must be a list of booleans, got {honest!r}")
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"malformed Capitol state: {exc}") from exc
        s._lseat = -1
        s._legal = []
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
        if not 2 <= n <= 6 or any(len(x) != n for x in (self.money, self.hidden, self.revealed, self.alive)):
            raise ValueError("inconsistent Capitol state: seat lists")
        if sum(self.money) + self.treasury != data.TREASURY_TOTAL or min(self.money) < 0 or self.treasury < 0:
            raise ValueError("inconsistent Capitol state: money is not conserved")
        cards = list(self.deck)
        for h in self.hidden:
            cards += h
        for r in self.revealed:
            cards += r
        if sorted(cards) != sorted(data.DECK):
            raise ValueError("inconsistent Capitol state: the 18 cards are not all there")
        if self.phase not in PHASES or self.then not in THENS:
            raise ValueError(f"inconsistent Capitol state: phase {self.phase!r}")
        if any(not 0 <= s < n for s in self.awaiting) or not -1 <= self.actor < n:
            raise ValueError("inconsistent Capitol state: seats out of range")
        if any(bool(self.hidden[s]) != self.alive[s] for s in range(n)):
            raise ValueError("inconsistent Capitol state: alive players are those with face-down cards")


def honesty_list(bits: int) -> list[bool]:
    """The record's bits as one bool per claim, in order."""
    return [c == "1" for c in bin(bits)[3:]]


def honesty_int(honest: list[bool]) -> int:
    bits = NO_CLAIMS
    for b in honest:
        bits = bits << 1 | b
    return bits


def _claim_record(entries: Iterable[tuple[str, Any]]) -> int:
    """What the public log says of the claims, as a record: a claim is a block or an action that
    names a role (``data.CLAIM``); a ``bluff`` entry follows the challenge that caught the latest
    claim. A bluff nobody challenged looks honest."""
    bits = NO_CLAIMS
    claims = data.CLAIM
    for kind, action in entries:
        if kind == "block" or (kind == "action" and action in claims):
            bits = bits << 1 | 1
        elif kind == "bluff":
            if bits == NO_CLAIMS:
                raise ValueError("malformed Capitol log: a bluff before any claim")
            bits ^= 1  # the latest claim, caught
        elif kind == "challenge" and bits == NO_CLAIMS:
            raise ValueError("malformed Capitol log: a challenge before any claim")
    return bits


def public_honesty_bits(log: list[dict[str, Any]]) -> int:
    """The claim record of a rendered log (a view's): determinize runs it for every world it draws."""
    return _claim_record((e["type"], e.get("action")) for e in log)


def public_honesty(log: list[LogEntry]) -> list[bool]:
    """One bool per claim of the state's log: False for a bluff a challenge caught, else True."""

    def kind_and_action(e: LogEntry) -> tuple[str, Any]:
        if e[0] == "_raw":
            return e[1]["type"], e[1].get("action")
        return e[0], e[2] if e[0] == "action" else None

    return honesty_list(_claim_record(kind_and_action(e) for e in log))


@functools.cache
def _table_keys() -> tuple[list[Key], dict[Key, int]]:
    """The game's action table as keys, and each key's index (built once, on first use)."""
    keys: list[Key] = []
    for action in CapitolState.game.action_table.actions:
        key = _key(dict(action))
        assert key is not None
        keys.append(key)
    return keys, {k: i for i, k in enumerate(keys)}


def _distinct(hand: list[str]) -> list[str]:
    return list(dict.fromkeys(hand))


_MISSING: Any = object()


def _key(action: Any) -> Key | None:
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
