"""The Conspiranoicos heuristic bot: cards valued by the six scoring criteria, rows searched exactly.

It reads the card catalogue from its view (so it plays any deck file) and decides:

* **Its row** (Sort Evidence, ``place``): every order of its cards (at most 6! = 720) is scored on the
  three order-dependent criteria (sequence, symbol run, Pyramid triple) with the engine's own scoring
  functions; pairs, majority and the Final Challenge do not depend on the order. The opponent's cards
  are public by then, so the bot also lists every order of theirs, keeps the undominated ones, and
  picks the row that wins against the most of them (points first, then the rulebook's tie-breaks).
* **Abduction and Gnome Revelation**: each slot (or a pass) is tried and the resulting T, S and hands
  are scored with every order free (as below), the rows being still to build.
* **Collect Evidence** (``play``, ``send``, ``keep``): a position is worth the point difference the two
  scoring zones would make if the game were scored now with every order free (the longest chain of
  consecutive values, the most cards sharing a symbol, the disjoint T triples that can be formed, the
  pairs and the majority), averaged over the Pyramid symbols not yet known. The winner of a round
  picks the (card, destination) whose worst reply is best; the loser keeps the best card left. To
  play, the bot samples worlds consistent with its view (``game.determinize``) and plays the card whose
  round — won, lost or tied — leaves it best placed on average.

``noise`` (0–1) is the share of decisions taken at random (the ``easy`` level).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast
from weakref import WeakKeyDictionary

from conflictology.bots import Bot, BotFactory
from conflictology.bots.ismcts import FlatSearchBot, ISMCTSBot, SearchPolicy
from conflictology.engine import Action, Game, GameState, View
from conflictology.games.conspiranoicos import ConspiranoicosState, scoring
from conflictology.games.conspiranoicos.pyramid import pyramid_symbols
from conflictology.games.conspiranoicos.state import COLLECT
from conflictology.games.conspiranoicos.views import ConspiranoicosView, PendingView, PlayerView, read_view

FACTIONS = ("G", "I", "A", "R")
EYE = "all_seeing_eye"
_HIGH = {"highest_value": True, "lowest_value": False, "most_symbols": True, "fewest_symbols": False}


Measures3 = tuple[int, int, int]  # (sequence, run, triple): what the order of a row changes
Measures5 = tuple[int, int, int, int, int]  # and (pairs, majority): see free_measures
# cards, T, S, gained, any order
FrontKey = tuple[tuple[str, ...], tuple[str, ...], str, tuple[str, ...], bool]
MeasureKey = tuple[tuple[str, ...], tuple[str, ...], str]  # a zone's cards, T, S
MeasuredKey = tuple[str, tuple[str, ...], tuple[str, ...], str, tuple[str, ...]]  # deck, cards, T, S, gained
# The cut-off's memo of free_measures is emptied when it holds this many: an entry is about 350 bytes
# (7 MB in all, in every process that searches), and its hits come from the playouts of the same few
# decisions (a full search's 2,000 playouts add at most 4,000).
MEASURED_KEPT = 20_000


@dataclass(frozen=True)
class CardInfo:
    id: str
    value: int
    front: tuple[str, ...]
    back: str
    challenge: str
    special: str | None


class Catalogue:
    """The deck's cards, from a view's ``cards`` list."""

    def __init__(self, view: ConspiranoicosView) -> None:
        self.cards: dict[str, CardInfo] = {
            c["id"]: CardInfo(
                c["id"], int(c["value"]), tuple(c["front"]), c["back"], c["challenge"], c["special"]
            )
            for c in view["cards"]
        }

    def __getitem__(self, cid: str) -> CardInfo:
        return self.cards[cid]

    def syms(self, cid: str, s: str | None, gained: Sequence[str]) -> tuple[str, ...]:
        """What a card shows in a row: its front; the Eye shows S unless gained by a swap."""
        c = self.cards[cid]
        if c.special is None:
            return c.front
        if c.special == EYE and cid not in gained and s is not None:
            return (s,)
        return ()

    def winner(self, p0: str, p1: str, ch: str, final: bool) -> int:
        """Who wins a round (rulings "A round", step 2); -1 for a random placement."""
        a, b, c = self.cards[p0], self.cards[p1], self.cards[ch]
        if not final:
            code = c.challenge
            high = _HIGH.get(code)
            if high is not None:
                x, y = (a.value, b.value) if code.endswith("value") else (len(a.front), len(b.front))
                if x != y:
                    return 0 if (x > y) == high else 1
            else:
                m0, m1 = _meets(code, a), _meets(code, b)
                if m0 != m1:
                    return 0 if m0 else 1
        d0, d1 = abs(a.value - c.value), abs(b.value - c.value)
        if d0 != d1:
            return 0 if d0 < d1 else 1
        return -1


def _meets(code: str, c: CardInfo) -> bool:
    if code == "even_value":
        return c.value % 2 == 0
    if code == "odd_value":
        return c.value % 2 == 1
    if code == "shows_own_back":
        return c.back in c.front
    return code[-1] in c.front


def _me(view: ConspiranoicosView) -> int:
    """The seat whose view it is (a bot decides from a player's own view, never a spectator's)."""
    seat = view["you"]
    if seat is None:
        raise ValueError("a bot decides from a player's own view, not a spectator's")
    return seat


def _evidence(player: PlayerView) -> list[str]:
    """A player's evidence, listed from Sort Evidence on (hand and row, in deck order)."""
    evidence = player["evidence"]
    if evidence is None:
        raise ValueError(f"seat {player['seat']}'s evidence is listed only in Sort Evidence")
    return list(evidence)


def _cards(held: list[str] | int, what: str) -> list[str]:
    """Card ids a view lists (a hand or a row the viewer may see), never a count of hidden cards."""
    if isinstance(held, int):
        raise ValueError(f"{what} is hidden from this view (only its size, {held}, is shown)")
    return list(held)


def _pending(view: ConspiranoicosView) -> PendingView:
    pending = view["pending"]
    if pending is None:
        raise ValueError("no decision is pending: the game is over")
    return pending


# -- measures with the order free (Collect Evidence) ---------------------------------------------------
def free_measures(
    cat: Catalogue, cards: Sequence[str], t: Sequence[str], s: str, gained: Sequence[str]
) -> tuple[int, int, int, int, int]:
    """(sequence, run, triple, pairs, majority) the best order of ``cards`` could reach, each alone."""
    syms = [cat.syms(c, s, gained) for c in cards]
    values = sorted({cat[c].value for c in cards})
    seq = best = 0
    prev = None
    for v in values:
        seq = seq + 1 if prev is not None and v == prev + 1 else 1
        best = max(best, seq)
        prev = v
    run = max((sum(1 for x in syms if f in x) for f in FACTIONS), default=0)
    tri = _free_triples([x for x in syms if x], tuple(t))
    pairs = scoring.pairs(syms, t)[0]
    maj = scoring.majority(syms, s)
    return best, run, tri, pairs, maj


def _free_triples(syms: list[tuple[str, ...]], t: tuple[str, ...]) -> int:
    """Disjoint occurrences of T that the cards can form (a two-symbol card may give two in a row)."""
    if len(syms) < 2:
        return 0
    best = 0
    n = len(syms)
    # Try every way to build one occurrence from 2 or 3 cards, then recurse on the rest.
    for i in range(n):
        a = syms[i]
        for j in range(n):
            if j == i:
                continue
            b = syms[j]
            # a covers t0 t1 (a two-symbol card), b covers t2
            if len(a) == 2 and set(a) == {t[0], t[1]} and t[2] in b:
                rest = [x for k, x in enumerate(syms) if k not in (i, j)]
                best = max(best, 1 + _free_triples(rest, t))
            # a covers t0, b covers t1 t2
            if len(b) == 2 and t[0] in a and set(b) == {t[1], t[2]}:
                rest = [x for k, x in enumerate(syms) if k not in (i, j)]
                best = max(best, 1 + _free_triples(rest, t))
            if t[0] in a and t[1] in b:
                for k in range(n):
                    if k not in (i, j) and t[2] in syms[k]:
                        rest = [x for m, x in enumerate(syms) if m not in (i, j, k)]
                        best = max(best, 1 + _free_triples(rest, t))
                        break
        if best:
            return best  # one occurrence built with the first usable card is enough to count
    return best


def points(
    mine: Sequence[int], theirs: Sequence[int], final_mine: bool, final_theirs: bool
) -> tuple[int, int]:
    """Both totals from (sequence, run, triple, pairs, majority) measures (rulings "Scoring")."""
    p = [int(final_mine), int(final_theirs)]
    m = (mine, theirs)
    for crit, (base, minimum, bonus) in enumerate(((1, 3, 1), (1, 3, 1), (2, 1, 1))):
        a, b = m[0][crit], m[1][crit]
        for side, x in enumerate((a, b)):
            if x >= minimum:
                p[side] += base
        if a != b and max(a, b) >= minimum:
            p[0 if a > b else 1] += bonus
    for crit in (3, 4):  # pairs and majority: strictly more 2, ahead by 2 or more +1
        a, b = m[0][crit], m[1][crit]
        if a != b and max(a, b) >= 1:
            lead = 0 if a > b else 1
            p[lead] += 2 + (1 if abs(a - b) >= 2 else 0)
    return p[0], p[1]


def outcome(mine: int, theirs: int, final_winner: int, me: int, eye_holder: int) -> float:
    """1 for a win, 0.5 for a shared victory, 0 for a loss (points, Final Challenge, then the Eye)."""
    if mine != theirs:
        return 1.0 if mine > theirs else 0.0
    for decider in (final_winner, eye_holder):
        if decider is not None and decider >= 0:
            return 1.0 if decider == me else 0.0
    return 0.5


# -- exact row search (Sort Evidence) ------------------------------------------------------------------
def row_measures(
    cat: Catalogue, order: Sequence[str], t: Sequence[str], s: str, gained: Sequence[str], any_order: bool
) -> tuple[int, int, int]:
    syms = [cat.syms(c, s, gained) for c in order]
    values = [cat[c].value for c in order]
    return (
        scoring.sequence(values, any_order)[0],
        scoring.run(syms)[0],
        scoring.triple(syms, t),
    )


def order_vectors(
    cat: Catalogue,
    prefix: Sequence[str],
    rest: Sequence[str],
    t: Sequence[str],
    s: str,
    gained: Sequence[str],
    any_order: bool,
) -> dict[tuple[int, int, int], tuple[str, ...]]:
    """Every distinct (sequence, run, triple) reachable by ordering ``rest`` after ``prefix``, with
    the first order (in a stable enumeration) that reaches it."""
    out: dict[tuple[int, int, int], tuple[str, ...]] = {}
    for perm in itertools.permutations(sorted(rest)):
        order = (*prefix, *perm)
        key = row_measures(cat, order, t, s, gained, any_order)
        if key not in out:
            out[key] = order
    return out


def undominated(vectors: Sequence[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    return [
        v for v in vectors
        if not any(w != v and all(wi >= vi for wi, vi in zip(w, v, strict=True)) for w in vectors)
    ]


class ConspiranoicosHeuristic(Bot):
    """See the module docstring."""

    name = "heuristic"

    def __init__(self, game: Game, seat: int, seed: int | None = None, **params: Any) -> None:
        self.noise = float(params.pop("noise", 0.0))
        self.worlds = int(params.pop("worlds", 12))
        super().__init__(game, seat, seed, **params)
        self._front_cache: dict[FrontKey, list[Measures3]] = {}
        self._measure_cache: dict[MeasureKey, Measures5] = {}

    def act(self, view: View, legal: list[Action]) -> Action:
        if len(legal) == 1:
            return legal[0]
        if self.noise and self.rng.random() < self.noise:
            return self.rng.choice(legal)
        kind = legal[0]["type"] if legal[0]["type"] != "pass" else legal[-1]["type"]
        seen = read_view(view)
        cat = Catalogue(seen)
        if len(self._measure_cache) > 50_000:
            self._measure_cache.clear()
        if kind == "place":
            return self.place(cat, seen, legal)
        if kind in ("abduct", "reveal_gnome"):
            return self.swap(cat, seen, legal)
        if kind == "send":
            return self.send(cat, seen, legal)
        if kind == "keep":
            return self.keep(cat, seen, legal)
        if kind == "play":
            return self.play(cat, seen, legal, view)
        return legal[0]

    # -- Sort Evidence ------------------------------------------------------------------------------
    def _sort_facts(self, view: ConspiranoicosView) -> tuple[list[str], str, list[str], bool, bool]:
        sym = view["pyramid_symbols"]
        if sym is None:
            raise ValueError("the Pyramid's symbols are shown only from Sort Evidence on")
        opts = view["options"]
        return (
            list(sym["T"]),
            sym["S"],
            list(view["gained"]),
            opts["sequence_any_order"],
            opts["head_to_head_ties_score_both"],
        )

    def _opponent_front(
        self,
        cat: Catalogue,
        cards: Sequence[str],
        t: Sequence[str],
        s: str,
        gained: Sequence[str],
        any_order: bool,
    ) -> list[Measures3]:
        key = (tuple(sorted(cards)), tuple(t), s, tuple(sorted(gained)), any_order)
        front = self._front_cache.get(key)
        if front is None:
            vectors = order_vectors(cat, (), cards, t, s, gained, any_order)
            front = self._front_cache[key] = undominated(list(vectors))
        return front

    def best_row(
        self,
        cat: Catalogue,
        view: ConspiranoicosView,
        prefix: Sequence[str],
        rest: Sequence[str],
        their_cards: Sequence[str],
        t: Sequence[str] | None = None,
        s: str | None = None,
    ) -> tuple[tuple[str, ...], float]:
        """The order of ``rest`` after ``prefix`` that wins against the most undominated opponent rows."""
        t0, s0, gained, any_order, ties_both = self._sort_facts(view)
        t = t0 if t is None else t
        s = s0 if s is None else s
        me = _me(view)
        mine_cards = [*prefix, *rest]
        fixed_me = self._fixed(cat, mine_cards, t, s, gained)
        fixed_them = self._fixed(cat, their_cards, t, s, gained)
        final_winner = view["final_winner"]
        fw = -1 if final_winner is None else final_winner
        eye_holder = -1
        for seat, cards in ((me, mine_cards), (1 - me, their_cards)):
            if any(cat[c].special == EYE for c in cards):
                eye_holder = seat
        front = self._opponent_front(cat, their_cards, t, s, gained, any_order)
        best_key: tuple[float, int, int] | None = None
        best_order: tuple[str, ...] = tuple(mine_cards)
        for vec, order in sorted(order_vectors(cat, prefix, rest, t, s, gained, any_order).items()):
            mine = (*vec, *fixed_me)
            total = 0.0
            margin = 0
            for ov in front:
                a, b = points(mine, (*ov, *fixed_them), fw == me, fw == 1 - me)
                if ties_both:
                    a, b = _ties_both(mine, (*ov, *fixed_them), a, b)
                total += outcome(a, b, fw, me, eye_holder)
                margin += a - b
            key = (total / len(front), margin, sum(vec))
            if best_key is None or key > best_key:
                best_key, best_order = key, order
        return best_order, (best_key[0] if best_key else 0.0)

    def _fixed(
        self, cat: Catalogue, cards: Sequence[str], t: Sequence[str], s: str, gained: Sequence[str]
    ) -> tuple[int, int]:
        syms = [cat.syms(c, s, gained) for c in cards]
        return scoring.pairs(syms, t)[0], scoring.majority(syms, s)

    def place(self, cat: Catalogue, view: ConspiranoicosView, legal: list[Action]) -> Action:
        me = _me(view)
        mine = view["players"][me]
        theirs = view["players"][1 - me]
        prefix = _cards(mine["row"], "one's own row")
        rest = [a["card"] for a in legal]
        order, _ = self.best_row(cat, view, prefix, rest, _evidence(theirs))
        nxt = order[len(prefix)]
        return next(a for a in legal if a["card"] == nxt)

    def swap(self, cat: Catalogue, view: ConspiranoicosView, legal: list[Action]) -> Action:
        """Try each slot (and the pass) and keep the one whose hands score best with free orders."""
        me = _me(view)
        pyramid = view["pyramid"]
        t, s, gained, _, _ = self._sort_facts(view)
        mine = _evidence(view["players"][me])  # the holder's: its hand, the special card in it
        theirs = _evidence(view["players"][1 - me])
        special = "abduction" if legal[0]["type"] == "abduct" or legal[-1]["type"] == "abduct" else "gnome"
        best: tuple[float, int, int] | None = None
        choice = legal[0]
        for a in legal:
            t2, s2, hand, g2 = list(t), s, list(mine), list(gained)
            if a["type"] != "pass":
                k = int(a["slot"]) - 1
                slot = pyramid[k]
                if slot is None:
                    raise ValueError(f"Pyramid slot {k + 1} is empty in Sort Evidence")
                taken = slot["seen"]  # what both players saw go in (and ``card`` once face up)
                own = next(c for c in hand if _special_of(cat, c).startswith(special[:5]))
                hand.remove(own)
                hand.append(taken)
                g2.append(taken)
                if special == "abduction":
                    t2[k] = cat[own].back  # Abduction goes back face down: its back counts in T
                elif k == 5:
                    s2 = "G"  # a Gnome Revelation on top makes S a Gnome
            # The rows are not built yet: score both hands with every order free (fast; the exact
            # row search would cost two 720-order searches per option).
            final_winner = view["final_winner"]
            fw = -1 if final_winner is None else final_winner
            m_me = free_measures(cat, hand, t2, s2, g2)
            m_them = free_measures(cat, theirs, t2, s2, g2)
            pa, pb = points(m_me, m_them, fw == me, fw == 1 - me)
            holders = ((me, hand), (1 - me, theirs))
            eye = next((p for p, cs in holders if any(cat[c].special == EYE for c in cs)), -1)
            value = outcome(pa, pb, fw, me, eye)
            key = (value, pa - pb, 1 if a["type"] == "pass" else 0)
            if best is None or key > best:
                best, choice = key, a
        return choice

    # -- Collect Evidence ---------------------------------------------------------------------------
    def _samples(self, view: ConspiranoicosView) -> list[tuple[list[str], str]]:
        """(T, S) fillings for the Pyramid symbols not known yet, drawn at random (fixed per decision);
        :meth:`_value` overrides them with the symbols the Pyramid already shows."""
        return [
            ([self.rng.choice(FACTIONS) for _ in range(3)], self.rng.choice(FACTIONS)) for _ in range(8)
        ]

    def _value(
        self,
        cat: Catalogue,
        view: ConspiranoicosView,
        zones: tuple[list[str], list[str]],
        pyramid: list[str],
        samples: list[tuple[list[str], str]],
    ) -> float:
        """The point difference (me − them) the zones would score with free orders, on average."""
        me = _me(view)
        t_known = [cat[c].back for c in pyramid[:3]]
        s_known = None
        if len(pyramid) >= 6:
            top = cat[pyramid[5]]
            s_known = top.front[0] if len(top.front) == 1 else top.back
        total = 0.0
        cache = self._measure_cache
        for t, s in samples:
            tt = tuple(t_known + t[len(t_known):])
            ss = s_known or s
            measured: list[Measures5] = []
            for zone in (zones[me], zones[1 - me]):
                key = (tuple(sorted(zone)), tt, ss)
                m = cache.get(key)
                if m is None:
                    m = cache[key] = free_measures(cat, zone, tt, ss, ())
                measured.append(m)
            mine, theirs = measured
            a, b = points(mine, theirs, False, False)
            total += a - b
        return total / len(samples)

    def _round_value(
        self,
        cat: Catalogue,
        view: ConspiranoicosView,
        winner: int,
        cards: Sequence[str],
        zones: tuple[list[str], list[str]],
        pyramid: list[str],
        samples: list[tuple[list[str], str]],
    ) -> float:
        """The value (for this bot) of a round whose three ``cards`` the winner now shares out."""
        me = _me(view)
        if winner < 0:  # a random placement: the average of the six
            vals = [
                self._placed(cat, view, zones, pyramid, perm[0], perm[1], perm[2], samples)
                for perm in itertools.permutations(cards)
            ]
            return sum(vals) / len(vals)
        sign = 1.0 if winner == me else -1.0
        best = -1e9
        for x in cards:
            for to in ("zone", "pyramid"):
                rest = [c for c in cards if c != x]
                worst = 1e9
                for y in rest:
                    last = next(c for c in rest if c != y)
                    if to == "zone":
                        pz, z_w, z_l = last, x, y
                    else:
                        pz, z_w, z_l = x, last, y
                    zw = (z_w, z_l) if winner == 0 else (z_l, z_w)
                    v = sign * self._placed(cat, view, zones, pyramid, pz, zw[0], zw[1], samples)
                    worst = min(worst, -v)  # the loser keeps what is best for them
                best = max(best, -worst)
        return sign * best

    def _placed(
        self,
        cat: Catalogue,
        view: ConspiranoicosView,
        zones: tuple[list[str], list[str]],
        pyramid: list[str],
        to_pyramid: str,
        to_zone0: str,
        to_zone1: str,
        samples: list[tuple[list[str], str]],
    ) -> float:
        z = ([*zones[0], to_zone0], [*zones[1], to_zone1])
        return self._value(cat, view, z, [*pyramid, to_pyramid], samples)

    def _board(self, view: ConspiranoicosView) -> tuple[tuple[list[str], list[str]], list[str]]:
        zones = (list(view["players"][0]["zone"]), list(view["players"][1]["zone"]))
        pyramid = [p["seen"] for p in view["pyramid"] if p]
        return zones, pyramid

    def send(self, cat: Catalogue, view: ConspiranoicosView, legal: list[Action]) -> Action:
        me = _me(view)
        zones, pyramid = self._board(view)
        samples = self._samples(view)
        cards = list(_pending(view)["cards"])
        best: tuple[float, int] | None = None
        choice = legal[0]
        for i, a in enumerate(legal):
            x, to = a["card"], a["to"]
            rest = [c for c in cards if c != x]
            worst = 1e9
            for y in rest:
                last = next(c for c in rest if c != y)
                if to == "zone":
                    pz, mine, theirs = last, x, y
                else:
                    pz, mine, theirs = x, last, y
                z0, z1 = (mine, theirs) if me == 0 else (theirs, mine)
                worst = min(worst, self._placed(cat, view, zones, pyramid, pz, z0, z1, samples))
            key = (worst, -i)
            if best is None or key > best:
                best, choice = key, a
        return choice

    def keep(self, cat: Catalogue, view: ConspiranoicosView, legal: list[Action]) -> Action:
        me = _me(view)
        zones, pyramid = self._board(view)
        samples = self._samples(view)
        cards = [a["card"] for a in legal]
        sent_to = view["table"]["sent_to"]

        def value(y: str) -> float:
            # The winner's card is placed already; the last card goes where the winner's did not.
            last = next(c for c in cards if c != y)
            zz = [list(zones[0]), list(zones[1])]
            zz[me].append(y)
            if sent_to == "zone":
                return self._value(cat, view, (zz[0], zz[1]), [*pyramid, last], samples)
            zz[1 - me].append(last)
            return self._value(cat, view, (zz[0], zz[1]), pyramid, samples)

        return max(legal, key=lambda a: (value(a["card"]), a["card"]))

    def play(self, cat: Catalogue, view: ConspiranoicosView, legal: list[Action], raw: View) -> Action:
        """``raw``: the view as given (``view`` typed), from which the worlds are drawn."""
        me = _me(view)
        zones, pyramid = self._board(view)
        samples = self._samples(view)
        final = _pending(view)["final_challenge"]
        options = [a["card"] for a in legal]
        score = dict.fromkeys(options, 0.0)
        memo: dict[tuple[str, str, str], float] = {}
        for _ in range(self.worlds):
            world = _world(self.game.determinize(raw, self.rng))
            # The sampled opponent's hand (a world, not the real game), as that opponent sees it.
            wv = read_view(world.view(1 - me))
            their_play = wv["table"]["plays"][1 - me]
            theirs = [their_play] if their_play else _cards(wv["players"][1 - me]["hand"], "a hand")
            ch = view["challenge"]
            if final or ch is None:
                ch = _final_of(world)
            for mine in options:
                total = 0.0
                for other in theirs:
                    plays = (mine, other) if me == 0 else (other, mine)
                    key = (*plays, ch)
                    value = memo.get(key)
                    if value is None:
                        w = cat.winner(plays[0], plays[1], ch, final)
                        value = memo[key] = self._round_value(
                            cat, view, w, [plays[0], plays[1], ch], zones, pyramid, samples
                        )
                    total += value
                score[mine] += total / len(theirs)
        best = max(options, key=lambda c: (score[c], c))
        return next(a for a in legal if a["card"] == best)


def _world(state: GameState) -> ConspiranoicosState:
    if not isinstance(state, ConspiranoicosState):
        raise TypeError(f"a Conspiranoicos bot was handed a {type(state).__name__}")
    return state


def _final_of(world: ConspiranoicosState) -> str:
    """The Final Challenge card of a sampled world (a world knows it, face down or not)."""
    if world.final < 0:
        raise ValueError("a sampled world without its Final Challenge")
    return world.deck.ids[world.final]


def _special_of(cat: Catalogue, cid: str) -> str:
    """A card's special kind, "" for a faction card."""
    special = cat[cid].special
    return "" if special is None else special


def _ties_both(mine: Sequence[int], theirs: Sequence[int], a: int, b: int) -> tuple[int, int]:
    """With the ``head_to_head_ties_score_both`` option an equal head-to-head award scores for both."""
    for crit, minimum, bonus in ((0, 3, 1), (1, 3, 1), (2, 1, 1), (3, 1, 2), (4, 1, 2)):
        if mine[crit] == theirs[crit] and mine[crit] >= minimum:
            a += bonus
            b += bonus
    return a, b


def factory(**defaults: Any) -> BotFactory:
    def make(game: Game, seat: int, seed: int | None = None, **params: Any) -> Bot:
        return ConspiranoicosHeuristic(game, seat, seed, **{**defaults, **params})

    return make


SORT_DECISIONS = ("place", "abduct", "reveal_gnome")


class ConspiranoicosSearch(SearchPolicy):
    """ISMCTS hooks: the search covers Collect Evidence; Sort Evidence is answered by the exact row
    search of the heuristic, and a playout stops when Collect Evidence ends, scored by the free-order
    measures of both hands (see :func:`free_measures`). A quick search (a busy server's short
    clock) keeps the heuristic's Collect Evidence choice unless its statistics clearly beat it."""

    #: a quick search (200 iterations: the 30 ms clock's) keeps the heuristic's card (``play``),
    #: send or keep unless the most visited action's mean beats it by this many standard errors of
    #: the two means, with no margin. Fitted to the full search's decisions (2,000 iterations, two
    #: runs pooled) at 244 Collect Evidence positions (``scripts/distill_conspiranoicos.py``;
    #: docs/bots.md, "Hard at scale"). The full search weighs no prior: it beats the heuristic alone.
    quick_z = 1.5

    def __init__(self) -> None:
        # Each search bot's own heuristic (Sort Evidence; a quick search's prior), made when first
        # needed.
        self._helpers: WeakKeyDictionary[ISMCTSBot, ConspiranoicosHeuristic] = WeakKeyDictionary()
        # (deck, evidence, T, S, gained) -> free_measures, shared by every search of the process
        self._measured: dict[MeasuredKey, Measures5] = {}

    def _helper(self, bot: ISMCTSBot) -> ConspiranoicosHeuristic:
        helper = self._helpers.get(bot)
        if helper is None:
            helper = ConspiranoicosHeuristic(bot.game, bot.seat, seed=bot.rng.next64())
            self._helpers[bot] = helper
        return helper

    def decide(self, bot: ISMCTSBot, view: View, legal: list[Action]) -> Action | None:
        if not any(a["type"] in SORT_DECISIONS for a in legal):
            return None
        return self._helper(bot).act(view, legal)

    def prior(self, bot: ISMCTSBot, view: View, legal: list[Action]) -> Action | None:
        """The heuristic's choice, for a quick search only (asked under :meth:`quick_rule`)."""
        if not bot.quick or isinstance(bot, FlatSearchBot):
            return None  # the full search beats the heuristic alone; ``pimc`` is left as it was
        return self._helper(bot).act(view, legal)

    def quick_rule(self, bot: ISMCTSBot, view: View) -> tuple[float, float] | None:
        if isinstance(bot, FlatSearchBot):
            return None  # fitted on the tree search's statistics, not on the flat search's worlds
        return 0.0, self.quick_z

    def cutoff(self, state: GameState) -> bool:
        return _world(state).phase not in COLLECT

    def evaluate(self, state: GameState) -> list[float]:
        if state.is_over():
            return super().evaluate(state)
        # Only at the cut-off (Sort Evidence begun): the symbols and every evidence are public. Read
        # from the world's fields, as its spectator view would show them (building that view took a
        # third of an iteration: docs/bots.md, "Hard at scale").
        st = _world(state)
        if st.phase in COLLECT:
            raise ValueError("evaluate is asked at the cut-off, once Collect Evidence is over")
        deck = st.deck
        ids = deck.ids
        cat = _catalogue_of(st)
        t, s = pyramid_symbols(st)
        gained = [ids[c] for c in st.gained]
        hands = [[ids[c] for c in sorted(st.hands[p] + st.rows[p])] for p in (0, 1)]
        m0 = self._measures(deck.name, cat, hands[0], t, s, gained)
        m1 = self._measures(deck.name, cat, hands[1], t, s, gained)
        fw = st.final_winner
        a, b = points(m0, m1, fw == 0, fw == 1)
        eye = next((p for p in (0, 1) if any(cat[c].special == EYE for c in hands[p])), -1)
        r0 = outcome(a, b, fw, 0, eye)
        return [r0, 1.0 - r0]

    def _measures(
        self, deck: str, cat: Catalogue, cards: list[str], t: list[str], s: str, gained: list[str]
    ) -> Measures5:
        """:func:`free_measures`, remembered: a search's playouts end in the same hands again and again."""
        key = (deck, tuple(cards), tuple(t), s, tuple(gained))
        m = self._measured.get(key)
        if m is None:
            if len(self._measured) >= MEASURED_KEPT:
                self._measured.clear()
            m = self._measured[key] = free_measures(cat, cards, t, s, gained)
        return m


_catalogues: dict[str, Catalogue] = {}


def _catalogue_of(st: ConspiranoicosState) -> Catalogue:
    """The catalogue of a world's deck, as its views list it (remembered by the deck's name)."""
    key = st.deck.name
    cat = _catalogues.get(key)
    if cat is None or len(_catalogues) > 16:
        view = cast(ConspiranoicosView, {"cards": st.deck.catalogue()})
        cat = _catalogues[key] = Catalogue(view)
    return cat
