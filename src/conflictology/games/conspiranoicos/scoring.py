"""Scoring Phase: the six criteria, read in each player's favour, and the tie-breaks.

A row is given as, per card, its value and the symbols it may show (``syms``): a faction card its
front symbols, the All-Seeing Eye (not gained by a swap) the symbol S, every other special nothing.
A two-symbol card may be read (x, y), (y, x), x alone or y alone, chosen per criterion (rulebook
"Scoring Phase": "both may be used in the order preferred, or one may be ignored"); each function
below returns the best value over every reading, which the tests check against brute force.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

Syms = Sequence[tuple[str, ...]]

CRITERIA: tuple[tuple[str, str], ...] = (
    ("final", "Final Challenge"),
    ("sequence", "Sequence"),
    ("run", "Symbol run"),
    ("triple", "Pyramid triple"),
    ("pairs", "Pairs"),
    ("majority", "Majority"),
)
MAX_POINTS = 14  # 1 + 2 + 2 + 3 + 3 + 3


def sequence(values: Sequence[int], any_order: bool = False) -> tuple[int, list[int]]:
    """The longest sequence and the row positions it uses.

    In row order (the default): adjacent cards whose values rise, or fall, by exactly 1 each step; a
    card equal to the previous value is skipped, neither counted nor breaking it ("ignoring repeated
    values"). With ``any_order`` (an option) the row's values need only be consecutive as a set.
    """
    if not values:
        return 0, []
    if any_order:
        present = sorted(set(values))
        best: list[int] = []
        run: list[int] = []
        for v in present:
            run = [*run, v] if run and v == run[-1] + 1 else [v]
            if len(run) > len(best):
                best = run
        positions = [values.index(v) for v in best]
        return len(best), positions
    best_pos: list[int] = [0]
    for step in (1, -1):
        cur = [0]
        last = values[0]
        for i in range(1, len(values)):
            v = values[i]
            if v == last:
                continue  # a repeated value is skipped, not counted, and does not break it
            if v == last + step:
                cur.append(i)
            else:
                cur = [i]
            last = v
            if len(cur) > len(best_pos):
                best_pos = list(cur)
    return len(best_pos), best_pos


def run(syms: Syms) -> tuple[int, str | None, list[int]]:
    """The longest stretch of adjacent cards that all carry one symbol: (length, symbol, positions).

    A two-symbol card carries both (read (x, y)), which is always the best reading for a run.
    """
    best, best_sym, best_start = 0, None, 0
    for s in ("G", "I", "A", "R"):
        cur = 0
        for i, card in enumerate(syms):
            if s in card:
                cur += 1
                if cur > best:
                    best, best_sym, best_start = cur, s, i - cur + 1
            else:
                cur = 0
    return best, best_sym, list(range(best_start, best_start + best))


def readings(card: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Every way a card may be read: (x, y), (y, x), x alone, y alone; a card without symbols breaks."""
    if len(card) == 2:
        x, y = card
        return [(x, y), (y, x), (x,), (y,)]
    return [card]


def triple(syms: Syms, t: Sequence[str]) -> int:
    """Most non-overlapping occurrences of T as three consecutive symbols of the row's reading.

    Dynamic programming over the cards: the state is how many symbols of T the occurrence being
    built has matched so far (0–2), and every reading of every card, and every choice to extend,
    restart or drop an occurrence, is tried; a card with no symbol ends any occurrence.
    """
    t0, t1, t2 = t
    target = (t0, t1, t2)
    neg = -1
    best = [0, neg, neg]  # best count with j symbols of T matched at the end of the reading so far
    for card in syms:
        if not card:
            top = max(best)
            best = [top, neg, neg]
            continue
        nxt = [neg, neg, neg]
        for reading in readings(card):
            cur = best
            for s in reading:
                step = [neg, neg, neg]
                for j in range(3):
                    c = cur[j]
                    if c < 0:
                        continue
                    if c > step[0]:
                        step[0] = c  # drop whatever was being built
                    if s == t0 and c > step[1]:
                        step[1] = c  # start a new occurrence here
                    if j and s == target[j]:
                        if j == 2:
                            if c + 1 > step[0]:
                                step[0] = c + 1  # complete one
                        elif c > step[j + 1]:
                            step[j + 1] = c
                cur = step
            for j in range(3):
                if cur[j] > nxt[j]:
                    nxt[j] = cur[j]
        best = nxt
    return max(best)


def pairs(syms: Syms, t: Sequence[str]) -> tuple[int, dict[str, int]]:
    """For each distinct symbol of T, the cards carrying it halved (rounded down), summed."""
    counts = {s: sum(1 for card in syms if s in card) for s in dict.fromkeys(t)}
    return sum(n // 2 for n in counts.values()), counts


def majority(syms: Syms, s: str) -> int:
    """How many cards carry S."""
    return sum(1 for card in syms if s in card)


@dataclass
class Score:
    """Both players' points per criterion, the measures behind them, and the outcome."""

    points: dict[str, list[int]]
    measures: dict[str, list[Any]]
    totals: list[int]
    winners: list[int]
    decided_by: str
    t: list[str]
    s: str
    explanations: dict[str, list[str]] = field(default_factory=dict)

    def detail(self) -> dict[str, Any]:
        return {
            "T": self.t,
            "S": self.s,
            "criteria": [
                {
                    "criterion": key,
                    "title": title,
                    "points": self.points[key],
                    "measure": self.measures[key],
                    "why": self.explanations.get(key, []),
                }
                for key, title in CRITERIA
            ],
            "totals": self.totals,
            "decided_by": self.decided_by,
        }


def _leader(a: int, b: int) -> int:
    return 0 if a > b else 1 if b > a else -1


def score(
    rows: Sequence[Sequence[str]],
    values: Sequence[Sequence[int]],
    syms: Sequence[Syms],
    t: Sequence[str],
    s: str,
    final_winner: int,
    eye_holder: int,
    any_order: bool = False,
    ties_score_both: bool = False,
) -> Score:
    """Score two rows (card ids, values, readable symbols) against T and S.

    Rulings "Scoring": where a criterion gives points "to whoever has" it, every player who has it
    scores; "the longest / most" goes to a strict leader only (sequences and runs among players at
    length ≥ 3), unless ``ties_score_both`` (an option) lets an equal head-to-head score for both.
    """
    points: dict[str, list[int]] = {key: [0, 0] for key, _ in CRITERIA}
    measures: dict[str, list[Any]] = {}
    why: dict[str, list[str]] = {key: ["", ""] for key, _ in CRITERIA}

    def head_to_head(key: str, m: list[int], minimum: int, award: int) -> None:
        lead = _leader(m[0], m[1])
        if lead >= 0 and m[lead] >= minimum:
            points[key][lead] += award
        elif lead < 0 and ties_score_both and m[0] >= minimum:
            points[key][0] += award
            points[key][1] += award

    # 1. Final Challenge won: 1.
    measures["final"] = [final_winner == 0, final_winner == 1]
    if final_winner >= 0:
        points["final"][final_winner] = 1
        why["final"][final_winner] = "won the Final Challenge"

    # 2. Sequence: >= 3 scores 1; the strictly longest (among those >= 3) +1.
    seq = [sequence(values[p], any_order) for p in (0, 1)]
    m = [seq[0][0], seq[1][0]]
    measures["sequence"] = m
    for p in (0, 1):
        if m[p] >= 3:
            points["sequence"][p] += 1
        if m[p]:
            why["sequence"][p] = (
                "sequence "
                + "-".join(str(values[p][i]) for i in seq[p][1])
                + (f" ({m[p]} cards: " + " ".join(rows[p][i] for i in seq[p][1]) + ")")
            )
    head_to_head("sequence", m, 3, 1)

    # 3. Symbol run: >= 3 scores 1; the strictly longest +1.
    runs = [run(syms[p]) for p in (0, 1)]
    m = [runs[0][0], runs[1][0]]
    measures["run"] = m
    for p in (0, 1):
        if m[p] >= 3:
            points["run"][p] += 1
        if m[p]:
            why["run"][p] = f"run of {m[p]} {runs[p][1]}: " + " ".join(rows[p][i] for i in runs[p][2])
    head_to_head("run", m, 3, 1)

    # 4. Pyramid triple: T in order, at least once: 2; strictly more occurrences: +1.
    m = [triple(syms[p], t) for p in (0, 1)]
    measures["triple"] = m
    for p in (0, 1):
        if m[p] >= 1:
            points["triple"][p] += 2
        why["triple"][p] = f"{'-'.join(t)} found {m[p]} time(s)"
    head_to_head("triple", m, 1, 1)

    # 5. Pairs of T's symbols: strictly more (>= 1): 2; ahead by >= 2: +1.
    pr = [pairs(syms[p], t) for p in (0, 1)]
    m = [pr[0][0], pr[1][0]]
    measures["pairs"] = m
    for p in (0, 1):
        why["pairs"][p] = f"{m[p]} pair(s): " + ", ".join(f"{k}×{n}" for k, n in pr[p][1].items())
    head_to_head("pairs", m, 1, 2)
    lead = _leader(m[0], m[1])
    if lead >= 0 and m[lead] - m[1 - lead] >= 2:
        points["pairs"][lead] += 1

    # 6. Majority of S: strictly more: 2; ahead by >= 2: +1.
    m = [majority(syms[p], s) for p in (0, 1)]
    measures["majority"] = m
    for p in (0, 1):
        why["majority"][p] = f"{m[p]} card(s) carrying {s}"
    head_to_head("majority", m, 1, 2)
    lead = _leader(m[0], m[1])
    if lead >= 0 and m[lead] - m[1 - lead] >= 2:
        points["majority"][lead] += 1

    totals = [sum(points[key][p] for key, _ in CRITERIA) for p in (0, 1)]
    # Rulebook "Scoring Phase": most points; tie -> the Final Challenge winner; then the holder of
    # the All-Seeing Eye (in their row, gained or not: rulings "Sort Evidence"); else shared.
    lead = _leader(totals[0], totals[1])
    if lead >= 0:
        winners, decided_by = [lead], "points"
    elif final_winner >= 0:
        winners, decided_by = [final_winner], "final_challenge"
    elif eye_holder >= 0:
        winners, decided_by = [eye_holder], "all_seeing_eye"
    else:
        winners, decided_by = [0, 1], "shared"
    return Score(points, measures, totals, winners, decided_by, list(t), s, why)
