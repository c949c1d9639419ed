"""The reference runner of the rules corpus (``corpus/*.jsonl``, format in docs/corpus.md).

A scenario deals a game (players, options, an explicit deck, a seed), plays its steps as
(seat, action) and checks, at its checkpoints, what must follow: who is awaited, a seat's legal
actions, fields of a seat's view (what it may see, what stays hidden), the events of the public log
since the previous checkpoint, the end and the winners. It uses the engine's public contract only
(``games.get``, ``new_game``, ``waiting_for``, ``legal_actions``, ``apply``, ``view``, ``is_over``,
``winners``, and for the clocks ``decision_kind`` and ``timeout_action``), as another
implementation's runner would use its own.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conflictology import games
from conflictology.engine import GameState, IllegalAction, action_key

FORMAT = 1
# The rules each game's scenarios are written against: docs/rules/<game>.md. The number goes up when
# a ruling changes what a scenario expects; a runner refuses a version it does not play.
RULES = {"capitol": 2, "conspiranoicos": 1}
CHECKS = frozenset({
    "waiting_for", "legal", "legal_includes", "legal_excludes", "legal_types", "view", "events", "over",
    "winners", "clock", "timeout",
})
CORPUS = Path(__file__).resolve().parents[3] / "corpus"


class ScenarioError(Exception):
    """A scenario that fails: the message names the step and what differed."""


@dataclass(frozen=True)
class Scenario:
    doc: dict[str, Any]
    source: str  # file:line

    @property
    def id(self) -> str:
        return str(self.doc.get("id", "?"))


@dataclass
class Outcome:
    scenario: Scenario
    steps: int = 0
    checks: int = 0
    error: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.error is None


def load(paths: Iterable[Path]) -> list[Scenario]:
    """Every scenario of the given files (a directory: its ``*.jsonl`` files, in name order)."""
    out: list[Scenario] = []
    for path in paths:
        files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
        for file in files:
            for number, line in enumerate(file.read_text("utf-8").splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    doc = json.loads(line)
                except ValueError as exc:
                    raise ScenarioError(f"{file}:{number}: not JSON: {exc}") from exc
                if not isinstance(doc, dict):
                    raise ScenarioError(f"{file}:{number}: a scenario is a JSON object")
                out.append(Scenario(doc, f"{file.name}:{number}"))
    return out


def run_all(scenarios: Sequence[Scenario]) -> list[Outcome]:
    ids = [s.id for s in scenarios]
    outcomes = []
    for scenario in scenarios:
        outcome = run(scenario)
        if ids.count(scenario.id) > 1 and outcome.passed:
            outcome.error = f"the id {scenario.id!r} is used by {ids.count(scenario.id)} scenarios"
        outcomes.append(outcome)
    return outcomes


def run(scenario: Scenario) -> Outcome:
    outcome = Outcome(scenario)
    try:
        _run(scenario.doc, outcome)
    except ScenarioError as exc:
        outcome.error = str(exc)
    return outcome


def _run(doc: Mapping[str, Any], outcome: Outcome) -> None:
    if doc.get("format") != FORMAT:
        raise ScenarioError(f"format {doc.get('format')!r} is not {FORMAT}")
    name = doc.get("game")
    if name not in RULES:
        raise ScenarioError(f"unknown game {name!r}; known: {', '.join(RULES)}")
    if doc.get("rules") != RULES[name]:
        raise ScenarioError(f"{name} rules version {doc.get('rules')!r}: this runner plays {RULES[name]}")
    game = games.get(name)
    try:
        players, seed = int(doc["players"]), int(doc.get("seed", 0))
        state = game.new_game(players, seed=seed, options=doc.get("options"), deck=doc.get("deck"))
    except (KeyError, TypeError, ValueError) as exc:
        raise ScenarioError(f"setup: the game cannot be dealt: {exc}") from exc
    log_seen = 0
    steps = doc.get("steps")
    if not isinstance(steps, list) or not steps:
        raise ScenarioError("steps: a non-empty list is needed")
    for number, step in enumerate(steps, 1):
        where = f"step {number}"
        if not isinstance(step, dict):
            raise ScenarioError(f"{where}: a step is an object, got {step!r}")
        if "expect" in step:
            log_seen = check(state, step["expect"], where, log_seen)
            outcome.checks += 1
            continue
        seat, action = step.get("seat"), step.get("action")
        if step.get("timeout") is True and isinstance(seat, int) and action is None:
            # The seat's clock runs out: the rules play for it (Capitol Ruling 19).
            try:
                action = state.timeout_action(seat)
            except IllegalAction as exc:
                raise ScenarioError(f"step {number} (seat {seat}: timeout): {exc}") from exc
        if step.get("only") is True and isinstance(seat, int) and action is None:
            # The seat has one legal action, whatever it is (a card only the generator placed).
            choices = state.legal_actions(seat)
            if len(choices) != 1:
                shown = ", ".join(action_key(a) for a in choices) or "none"
                raise ScenarioError(f"step {number} (seat {seat}: only): {len(choices)} actions: {shown}")
            action = choices[0]
        if not isinstance(seat, int) or not isinstance(action, dict):
            raise ScenarioError(f"{where}: a step needs a seat (an integer) and an action (an object)")
        where = f"step {number} (seat {seat}: {action_key(action)})"
        if step.get("refused"):
            before = state.to_json()
            try:
                state.apply(seat, action)
            except IllegalAction:
                if state.to_json() != before:
                    raise ScenarioError(f"{where}: refused, but the state changed") from None
                outcome.checks += 1
                continue
            raise ScenarioError(f"{where}: expected to be refused, it was applied")
        try:
            state.apply(seat, action)
        except IllegalAction as exc:
            legal = ", ".join(action_key(a) for a in state.legal_actions(seat)) or "none"
            raise ScenarioError(
                f"{where}: refused ({exc}); awaited: {state.waiting_for()}; seat {seat} may: {legal}"
            ) from exc
        outcome.steps += 1


def check(state: GameState, expect: Mapping[str, Any], where: str, log_seen: int) -> int:
    """Check one checkpoint; returns how much of the public log has been checked (``events`` are the
    entries since the last checkpoint that checked events, or since the start)."""
    unknown = sorted(set(expect) - CHECKS)
    if unknown:
        known = ", ".join(sorted(CHECKS))
        raise ScenarioError(f"{where}: unknown check(s) {', '.join(unknown)}; known: {known}")
    if "waiting_for" in expect and state.waiting_for() != expect["waiting_for"]:
        raise ScenarioError(f"{where}: waiting for {state.waiting_for()}, expected {expect['waiting_for']}")
    for key in ("legal", "legal_includes", "legal_excludes", "legal_types"):
        for seat_text, wanted in expect.get(key, {}).items():
            check_legal(state, key, int(seat_text), wanted, where)
    for who, fields in expect.get("view", {}).items():
        seat = None if who == "spectator" else int(who)
        view = state.view(seat)
        for path, wanted in fields.items():
            got = lookup(view, path)
            if got != wanted:
                raise ScenarioError(
                    f"{where}: in {who}'s view, {path} is {json.dumps(got)}, expected {json.dumps(wanted)}"
                )
    if "events" in expect:
        log = state.view(None)["log"]
        check_events(log[log_seen:], expect["events"], where)
        log_seen = len(log)
    for seat_text, wanted in expect.get("clock", {}).items():
        got_kind = state.decision_kind(int(seat_text))
        if got_kind != wanted:
            raise ScenarioError(
                f"{where}: seat {seat_text}'s decision runs on the {got_kind} clock, expected {wanted}"
            )
    for seat_text, wanted in expect.get("timeout", {}).items():
        check_timeout(state, int(seat_text), wanted, where)
    if "over" in expect and state.is_over() != expect["over"]:
        raise ScenarioError(f"{where}: the game is {'over' if state.is_over() else 'not over'}")
    if "winners" in expect and state.winners() != expect["winners"]:
        raise ScenarioError(f"{where}: winners {state.winners()}, expected {expect['winners']}")
    return log_seen


def check_timeout(state: GameState, seat: int, wanted: Any, where: str) -> None:
    """What the rules play for ``seat`` when its clock runs out: this action, or one of these (a list:
    a choice the rules draw at random)."""
    try:
        got = action_key(state.timeout_action(seat))
    except IllegalAction as exc:
        raise ScenarioError(f"{where}: seat {seat} has no timeout action ({exc})") from exc
    allowed = [action_key(a) for a in (wanted if isinstance(wanted, list) else [wanted])]
    if got not in allowed:
        raise ScenarioError(
            f"{where}: seat {seat}'s clock running out plays {got}, expected {' or '.join(allowed)}"
        )


def check_legal(state: GameState, key: str, seat: int, wanted: list[Any], where: str) -> None:
    legal = state.legal_actions(seat)
    if key == "legal_types":
        got_types = sorted({str(a["type"]) for a in legal})
        if got_types != sorted(wanted):
            raise ScenarioError(
                f"{where}: seat {seat} may play action types {got_types}, expected {sorted(wanted)}"
            )
        return
    have = {action_key(a) for a in legal}
    asked = {action_key(a) for a in wanted}
    if key == "legal" and have != asked:
        missing, extra = sorted(asked - have), sorted(have - asked)
        raise ScenarioError(f"{where}: seat {seat}'s legal actions: missing {missing}, not expected {extra}")
    if key == "legal_includes" and not asked <= have:
        raise ScenarioError(f"{where}: seat {seat} may not play {sorted(asked - have)}")
    if key == "legal_excludes" and asked & have:
        raise ScenarioError(f"{where}: seat {seat} may play {sorted(asked & have)}, which must be illegal")


def check_events(new: list[dict[str, Any]], wanted: list[dict[str, Any]], where: str) -> None:
    """The new public log entries must be exactly ``wanted``, in order, each matching the fields given."""
    for i, pattern in enumerate(wanted):
        if i >= len(new):
            raise ScenarioError(
                f"{where}: event {i + 1} {json.dumps(pattern)} is missing (only {len(new)} new)"
            )
        entry = new[i]
        differ = {k: entry.get(k) for k, v in pattern.items() if entry.get(k) != v}
        if differ:
            raise ScenarioError(
                f"{where}: event {i + 1} is {json.dumps(plain(entry))}, expected {json.dumps(pattern)}"
            )
    if len(new) > len(wanted):
        extra = [plain(e) for e in new[len(wanted):]]
        raise ScenarioError(
            f"{where}: unexpected event(s) after the {len(wanted)} expected: {json.dumps(extra)}"
        )


def plain(entry: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k != "text"}


def lookup(doc: Any, path: str) -> Any:
    """``players.1.money`` in a view; a final ``#`` gives a list's length (``players.0.hidden#``).
    A path that leads nowhere gives ``null``."""
    count = path.endswith("#")
    node = doc
    for part in (path[:-1] if count else path).split("."):
        if isinstance(node, dict):
            node = node.get(part)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    if count:
        return len(node) if isinstance(node, list) else None
    return node
