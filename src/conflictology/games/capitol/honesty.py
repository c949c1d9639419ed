"""The private record of the claims, behind the end-of-game summary and a finished game's replay.

Who claimed what, and who challenged it, is already in the public log; the one secret is whether each
claimant held the role at the moment of the claim. So the record is one bit per claim (an action's
role, a block's role), in log order, after a leading 1: an int, so recording costs a shift and
``clone`` copies nothing. No view shows it before the end (views.py builds the summary from the log
and these bits).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from conflictology.games.capitol import data
from conflictology.games.capitol.fields import LogEntry

NO_CLAIMS = 1  # ``honesty`` before the first claim: the leading 1 alone


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
