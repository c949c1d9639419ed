"""What one seat may see of a Capitol state, and the public log in structured, readable form.

A view carries every public fact needed to rebuild the state (``Game.determinize``): the pending
phase with who already passed, the queued losses and what follows them. Secrets stay with their
owner: the cards an exchange is choosing from go to that player only, the card shown to the Police
player goes to that player and to the one who showed it.

A view: ``game``, ``you``, ``turn`` (the acting seat), ``phase`` (see ``data.Phase``), ``awaiting``
(``waiting_for``), ``treasury``, ``deck`` (cards in it), ``players`` (``seat``, ``money``, ``hidden``:
your roles or another's count, ``revealed``, ``alive``), ``options``, ``pending``, ``log``, ``known``
(for a seat: ``[{"seat", "card"}]``, what it saw as Police and still knows) and, once the game is over,
``winners`` and ``summary``; ``two_prompts`` (true) in a game saved before ruling 6a, which plays on
with the two prompts it started with (the target answers the challenge window, then the block window).

``summary`` (every view, spectators too, only once the game is over; before the end nothing of it is
in any view) marks the bluffs: ``claims``, one per role claimed during the game, in order, each
``{"seat", "role", "honest", "challenged", "challenger", "caught"}`` plus, for an action's claim,
``"action"`` (the turn action) and ``"target"`` (a seat or None), or, for a block's claim,
``"block"`` (the action blocked) and ``"actor"`` (the seat blocked). ``honest``: the claimant held the
role at the moment of the claim; ``challenged``/``challenger``: who challenged it (None: nobody);
``caught``: challenged and a bluff. ``bluffs`` and ``caught``: per seat (index = seat), how many of its
claims were bluffs and how many of those were caught.

``pending`` is ``None`` while the actor chooses and after the end; otherwise ``phase``, ``actor``,
``action``, ``target``, ``claim`` (the role the action claims), ``challenger``, ``blocker``,
``block_claim``, ``block_challenger``, ``awaiting``, ``passed`` (who passed in the current window),
``losses`` (seats still to lose an influence, the first one now), ``then`` (what follows the losses:
``end_turn``, ``continue``, ``resolve``), for the target alone ``block_answer`` (ruling 6a: its
sealed answer on blocking, ``pass`` or the role it will block with, until the action stands),
``reveal`` (``{"seat", "card"}``: a card revealed to win a
challenge, replaced once the losses are taken); in an exchange ``keep`` (and for the actor ``hand`` and
``drawn``); in an investigation ``shown`` for the Police player and the target.

Log entries have a ``type`` (``start``, ``action``, ``challenge``, ``reveal``, ``replace``, ``bluff``,
``block``, ``blocked``, ``return``, ``lose``, ``eliminated``, ``gain``, ``steal``, ``no_effect``,
``draw``, ``exchange``, ``show``, ``let_keep``, ``force_redraw``, ``win``, ``stalemate``: the end by
the stalemate rule, with ``reason``, ``count`` and ``winners``), fields (seats as ints,
roles, amounts in $M) and ``text`` in English.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from conflictology.engine import View
from conflictology.games.capitol.data import (
    ACTION_NAME,
    BANKER_TAKE,
    CLAIM,
    COST,
    EXCHANGE,
    INVESTIGATE,
    OVER,
    ROLE_NAME,
    TURN,
)
from conflictology.games.capitol.fields import CapitolFields, LogEntry
from conflictology.games.capitol.honesty import honesty_list


def render_view(state: CapitolFields, seat: int | None, with_log: bool = True, log_start: int = 0) -> View:
    """``seat``'s view; its ``log`` from entry ``log_start`` on (``view_since``), none without
    ``with_log``."""
    n = state.n
    players = []
    for i in range(n):
        hand = state.hidden[i]
        players.append({
            "seat": i,
            "money": state.money[i],
            "hidden": list(hand) if i == seat else len(hand),
            "revealed": list(state.revealed[i]),
            "alive": state.alive[i],
        })
    phase = state.phase
    view: View = {
        "game": "capitol",
        "you": seat,
        "turn": state.actor,
        "phase": phase,
        "awaiting": list(state.awaiting),
        "treasury": state.treasury,
        "deck": len(state.deck),
        "players": players,
        "options": {**state.options, "steal_blockers": list(state.options["steal_blockers"])},
        "pending": pending_of(state, seat),
    }
    if not state.one_prompt:
        view["two_prompts"] = True  # a game saved before ruling 6a plays on as it started
    # Without: a replay's step (replay.step_view), whose log is sent once, not at every step.
    # The summary reads the whole log (only once the game is over); otherwise only the tail asked
    # for is rendered: every seat's view is rendered at every change.
    whole = phase is OVER or (with_log and log_start <= 0)
    log = [render_entry(e) for e in state.log] if whole else []
    if with_log:
        if whole:
            view["log"] = log[log_start:] if log_start > 0 else log
        else:
            view["log"] = [render_entry(e) for e in state.log[log_start:]]
    if seat is not None:
        # What this seat learnt as the Police player and still knows (until that hand changes).
        view["known"] = [{"seat": t, "card": c} for p, t, c in state.known if p == seat]
    if phase is OVER:
        view["winners"] = list(state.tied) if state.tied else [state.winner]
        # The claims record is private while the game goes on; at the end everyone sees it.
        view["summary"] = summary(log, state.honesty, n)
    return view


def summary(log: list[dict[str, Any]], honesty: int, n: int) -> dict[str, Any]:
    """The end-of-game summary (see the module docstring) from the rendered log, which says who claimed
    what and who challenged it, and the state's private honesty bits, one per claim in log order."""
    claims: list[dict[str, Any]] = []
    action = ""
    for e in log:
        kind = e["type"]
        if kind == "action":
            action = e["action"]
            role = CLAIM.get(action)
            if role is not None:
                claims.append({"seat": e["seat"], "role": role, "action": action, "target": e.get("target")})
        elif kind == "block":
            claims.append({"seat": e["seat"], "role": e["card"], "block": action, "actor": e["actor"]})
        elif kind == "challenge":
            claims[-1]["challenger"] = e["seat"]  # a challenge is always of the latest claim
    bluffs = [0] * n
    caught = [0] * n
    for claim, honest in zip(claims, honesty_list(honesty), strict=True):
        challenger = claim.pop("challenger", None)
        claim["honest"] = honest
        claim["challenged"] = challenger is not None
        claim["challenger"] = challenger
        claim["caught"] = challenger is not None and not honest
        if not honest:
            bluffs[claim["seat"]] += 1
            caught[claim["seat"]] += claim["caught"]
    return {"claims": claims, "bluffs": bluffs, "caught": caught}


def _seat(x: int) -> int | None:
    return None if x < 0 else x


def pending_of(state: CapitolFields, seat: int | None) -> dict[str, Any] | None:
    """The ``pending`` of ``seat``'s view (a search's rollouts read it without the rest of the view)."""
    phase = state.phase
    if phase is TURN or phase is OVER:
        return None
    pending: dict[str, Any] = {
        "phase": phase,
        "actor": state.actor,
        "action": state.action,
        "target": _seat(state.target),
        "claim": state.claim or None,
        "challenger": _seat(state.challenger),
        "blocker": _seat(state.blocker),
        "block_claim": state.block_claim or None,
        "block_challenger": _seat(state.block_challenger),
        "awaiting": list(state.awaiting),
        "passed": list(state.passed),
        "losses": list(state.losses),
        "then": state.then or None,
        # A card revealed to win a challenge: still in that hand until the losses are taken.
        "reveal": {"seat": state.reveal_seat, "card": state.reveal_card} if state.reveal_seat >= 0 else None,
    }
    if state.block_answer and seat == state.target:
        # Ruling 6a: the target's sealed answer, in its own view only until the block takes effect.
        pending["block_answer"] = state.block_answer
    if phase is EXCHANGE:
        pending["keep"] = state.keep
        if seat == state.actor:
            drawn = list(state.hidden[seat])
            for card in state.ex_hand:
                drawn.remove(card)
            pending["hand"] = list(state.ex_hand)
            pending["drawn"] = drawn
    elif phase is INVESTIGATE and seat is not None and seat in (state.actor, state.target):
        pending["shown"] = state.shown
    return pending


def _s(seat: int) -> str:
    return f"Seat {seat}"


def _role(role: str) -> str:
    return ROLE_NAME.get(role, role)


def entry_fields(entry: LogEntry) -> dict[str, Any]:
    """One log entry's fields as :func:`render_entry` gives them, not copied: for readers that
    never change them (a search reads every entry of every rollout)."""
    # Entries repeat across views and games (they are small tuples): render each once.
    return entry[1] if entry[0] == "_raw" else _render(entry)


def render_entry(entry: LogEntry) -> dict[str, Any]:
    """One log entry as a dict: its type, structured fields (seats as ints) and an English text."""
    return dict(entry_fields(entry))  # a copy: the rendering is shared


@lru_cache(maxsize=8192)
def _render(entry: LogEntry) -> dict[str, Any]:
    kind = entry[0]
    if kind == "start":
        return {"type": "start", "seat": entry[1], "text": f"{_s(entry[1])} plays first."}
    if kind == "action":
        _, seat, action, target = entry
        out: dict[str, Any] = {"type": "action", "seat": seat, "action": action}
        if target >= 0:
            out["target"] = target
        out["text"] = _action_text(seat, action, target)
        return out
    if kind == "challenge":
        _, seat, challenged, claim = entry
        return {
            "type": "challenge", "seat": seat, "challenged": challenged, "claim": claim,
            "text": f"{_s(seat)} challenges {_s(challenged)}'s claim of {_role(claim)}.",
        }
    if kind == "reveal":
        _, seat, card = entry
        return {
            "type": "reveal", "seat": seat, "card": card,
            "text": f"{_s(seat)} reveals {_role(card)}: the challenge fails.",
        }
    if kind == "replace":
        _, seat, card = entry
        return {
            "type": "replace", "seat": seat, "card": card,
            "text": f"{_s(seat)} shuffles the revealed {_role(card)} into the deck and draws a new card.",
        }
    if kind == "bluff":
        _, seat, claim = entry
        return {
            "type": "bluff", "seat": seat, "claim": claim,
            "text": f"{_s(seat)} does not have {_role(claim)}: the bluff is caught.",
        }
    if kind == "block":
        _, seat, card, actor = entry
        return {
            "type": "block", "seat": seat, "card": card, "actor": actor,
            "text": f"{_s(seat)} blocks {_s(actor)}, claiming {_role(card)}.",
        }
    if kind == "blocked":
        _, actor, blocker = entry
        return {
            "type": "blocked", "seat": actor, "blocker": blocker,
            "text": f"The block by {_s(blocker)} stands: {_s(actor)}'s action is not executed.",
        }
    if kind == "return":
        return {
            "type": "return", "seat": entry[1],
            "text": f"{_s(entry[1])} puts a card back into the deck, shuffles and draws a new one.",
        }
    if kind == "lose":
        _, seat, card = entry
        return {
            "type": "lose", "seat": seat, "card": card,
            "text": f"{_s(seat)} loses an influence: {_role(card)} is turned face up.",
        }
    if kind == "out":
        _, seat, money = entry
        return {
            "type": "eliminated", "seat": seat, "amount": money,
            "text": f"{_s(seat)} has no influence left and is out; ${money}M return to the Treasury.",
        }
    if kind == "win":
        return {"type": "win", "seat": entry[1], "text": f"{_s(entry[1])} wins."}
    if kind == "stalemate":
        return _stalemate_entry(entry)
    if kind == "gain":
        _, seat, amount = entry
        return {
            "type": "gain", "seat": seat, "amount": amount,
            "text": f"{_s(seat)} takes ${amount}M from the Treasury.",
        }
    if kind == "steal":
        _, seat, target, amount = entry
        return {
            "type": "steal", "seat": seat, "target": target, "amount": amount,
            "text": f"{_s(seat)} steals ${amount}M from {_s(target)}.",
        }
    if kind == "no_effect":
        return {
            "type": "no_effect", "seat": entry[1],
            "text": f"{_s(entry[1])} is already out: the action does nothing more.",
        }
    if kind == "draw":
        _, seat, count = entry
        cards = "a card" if count == 1 else f"{count} cards"
        return {
            "type": "draw", "seat": seat, "count": count,
            "text": f"{_s(seat)} draws {cards} from the deck.",
        }
    if kind == "exchange":
        _, seat, count = entry
        cards = "a card" if count == 1 else f"{count} cards"
        return {
            "type": "exchange", "seat": seat, "count": count,
            "text": f"{_s(seat)} returns {cards} to the deck and shuffles it.",
        }
    if kind == "show":
        _, seat, police = entry
        return {
            "type": "show", "seat": seat, "police": police,
            "text": f"{_s(seat)} shows a card to {_s(police)}.",
        }
    if kind == "let_keep":
        _, police, target = entry
        return {
            "type": "let_keep", "seat": police, "target": target,
            "text": f"{_s(police)} lets {_s(target)} keep the card.",
        }
    if kind == "force_redraw":
        _, police, target = entry
        return {
            "type": "force_redraw", "seat": police, "target": target,
            "text": f"{_s(police)} makes {_s(target)} shuffle the card into the deck and draw a new one.",
        }
    raise ValueError(f"unknown log entry {entry!r}")


def _stalemate_entry(entry: LogEntry) -> dict[str, Any]:
    """The end by the stalemate rule: ``reason`` ``quiet`` (``count`` turns in a row with no influence
    lost) or ``cap`` (``count`` decisions, the hard cap), and the ``winners``."""
    _, reason, count, *winners = entry
    if reason == "quiet":
        why = f"{count} turns in a row with no influence lost"
    else:
        why = f"the limit of {count} decisions"
    names = " and ".join(_s(w) for w in winners)
    verb = "win" if len(winners) > 1 else "wins"
    return {
        "type": "stalemate", "reason": reason, "count": count, "winners": list(winners),
        "text": f"The game ends after {why}: {names} {verb} (most influence, then most money).",
    }


def _action_text(seat: int, action: str, target: int) -> str:
    who = _s(seat)
    if action == "income":
        return f"{who} takes Income."
    if action == "foreign_aid":
        return f"{who} asks for Foreign Aid."
    if action == "scandal":
        return f"{who} pays ${COST['scandal']}M to launch a Scandal against {_s(target)}."
    if action == "banker":
        return f"{who} claims Banker to take ${BANKER_TAKE}M from the Treasury."
    if action == "mafia":
        return f"{who} claims Mafia to steal from {_s(target)}."
    if action == "hacker":
        return f"{who} claims Hacker and pays ${COST['hacker']}M to hack {_s(target)}."
    if action == "reporter":
        return f"{who} claims Reporter to exchange cards with the deck."
    if action == "police_investigate":
        return f"{who} claims Police to investigate {_s(target)}."
    if action == "police_swap":
        return f"{who} claims Police to swap a card with the deck."
    return f"{who} plays {ACTION_NAME.get(action, action)}."
