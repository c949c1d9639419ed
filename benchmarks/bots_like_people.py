"""How the Capitol bots play beside people: bluffs, challenges, blocks, the action mix (issue 28).

    python benchmarks/bots_like_people.py                      # every bot, 4 and 2 players (minutes)
    python benchmarks/bots_like_people.py --bots normal,hard --games 400 --hard-games 40
    python benchmarks/bots_like_people.py --json
    python benchmarks/bots_like_people.py --bots hard:iterations=200:seconds=9 --players 4 --hard-games 300 \
        --progress run.json --census     # a search's budget in worlds; the counts saved after each game
    python benchmarks/bots_like_people.py --tables run.json --census       # the tables of a saved run

Each bot named in ``--bots`` sits at tables of ``--field`` bots (``normal`` by default: one measured
seat and the rest ``normal``, the seats rotated from game to game as ``conflictology simulate`` does;
``normal`` itself is measured at every seat of its all-``normal`` tables). Games are played with the
engine directly, seeded, and counted from what the engine knows:

* **claims**: each role claimed (a turn action's, a block's) and whether the claimant held it at that
  moment: the game's own end-of-game record (``views.summary``: the log and the state's private
  honesty bits, the record the table shows everyone at the end). A bluff is a claim without the card.
* **challenges**: a *chance* is a decision whose legal actions include a challenge (a claim's or a
  block's window, the target's one prompt); a challenge is *right* when it caught a bluff.
* **blocks**: the blocks made and the share genuine (the blocker held the role); the Judge's blocks of
  a Hacker apart (Coup's Contessa against an assassination), and how many of the Hackers aimed at the
  seat it blocked.
* **the census** (``--census``): the chances to challenge by kind (``census_key``: the window, the
  role claimed, the cards on each side, the players alive), with the share a bluff, the share taken
  and right; for a search bot (``hard``), which of its challenges its prior (the heuristic's choice)
  made, which the search added and which it dropped.
* **the action mix**: each turn's action (Income, Foreign Aid, Scandal and the five claims);
  **turns**: a game's turns (its ``action`` log entries).

"Winners" counts only the seats that won their game (a shared win included), as the human figures are
the winners'. Intervals are 95 % Wilson intervals over the counted decisions, taken as independent
(they cluster within games, so the true intervals are a little wider); the win share's is over games.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from conflictology import bots, games
from conflictology.arena import wilson
from conflictology.engine import Action, GameState, Rng
from conflictology.games.capitol.data import BLOCK_CHALLENGE, CHALLENGE, CLAIM, TURN
from conflictology.games.capitol.views import summary
from conflictology.simulate import MAX_DECISIONS

GAME = "capitol"
DEFAULT_BOTS = (
    "easy,normal,hard,heuristic-honest,heuristic-bluffer,heuristic-sceptic,heuristic-aggressive,outside-treason"
)
# The turn actions in the order of the rules' table (docs/rules/capitol.md).
ACTIONS = (
    "income", "foreign_aid", "scandal", "banker", "mafia", "hacker", "reporter",
    "police_investigate", "police_swap",
)
SHORT = {
    "income": "Inc", "foreign_aid": "FA", "scandal": "Scan", "banker": "Bank", "mafia": "Maf",
    "hacker": "Hack", "reporter": "Rep", "police_investigate": "PolI", "police_swap": "PolS",
}


@dataclass
class Counts:
    """What one bot did, summed over the seats it held (or over the seats that won)."""

    seats: int = 0  # seat-games counted
    wins: int = 0  # of them, won outright
    shared: int = 0  # of them, a shared win (the stalemate rule's tie)
    turns: int = 0  # the games' turns, summed over the seat-games
    turns_sq: int = 0
    claims: int = 0
    bluffs: int = 0
    action_claims: int = 0
    action_bluffs: int = 0
    chances: int = 0  # decisions with a challenge among the legal actions
    challenges: int = 0
    right: int = 0  # challenges that caught a bluff
    blocks: int = 0
    genuine: int = 0
    judge_blocks: int = 0  # Judge blocks of a Hacker
    judge_genuine: int = 0
    hacked: int = 0  # Hackers aimed at the seat
    actions: Counter[str] = field(default_factory=Counter)
    # The chances to challenge by kind (``census_key``): offered, taken, and taken rightly.
    census: Counter[str] = field(default_factory=Counter)
    # The turn actions' claims by role, held or bluffed, and for a search bot whether its prior (the
    # heuristic's choice) made the claim or the search did (``Recorder.turn``).
    claim_census: Counter[str] = field(default_factory=Counter)

    def add(self, other: Counts) -> None:
        for name, value in vars(other).items():
            if isinstance(value, Counter):
                getattr(self, name).update(value)
            else:
                setattr(self, name, getattr(self, name) + value)


def count_game(
    state: GameState,
    chances: Sequence[int],
    census: Sequence[Counter[str]] | None = None,
    claim_census: Sequence[Counter[str]] | None = None,
) -> list[Counts]:
    """Each seat's counts in a finished (or stopped) Capitol game. ``chances[s]``: the decisions of
    seat ``s`` that offered a challenge (``Recorder`` counts them as the game is played), ``census[s]``
    the same chances by kind."""
    n = state.num_players
    spectator = state.view(None)
    log = spectator["log"]
    # The game's own record of the claims: the rendered log and the private honesty bits.
    record = summary(log, state.honesty, n)  # type: ignore[attr-defined]
    per = [Counts(seats=1) for _ in range(n)]
    winners = state.winners()
    turns = sum(1 for e in log if e["type"] == "action")
    for seat, c in enumerate(per):
        c.chances = chances[seat]
        if census is not None:
            c.census = Counter(census[seat])
        if claim_census is not None:
            c.claim_census = Counter(claim_census[seat])
        c.turns = turns
        c.turns_sq = turns * turns
        if seat in winners:
            if len(winners) == 1:
                c.wins = 1
            else:
                c.shared = 1
    for e in log:
        if e["type"] == "action":
            per[e["seat"]].actions[e["action"]] += 1
    for claim in record["claims"]:
        c = per[claim["seat"]]
        c.claims += 1
        c.bluffs += not claim["honest"]
        if "action" in claim:
            c.action_claims += 1
            c.action_bluffs += not claim["honest"]
            if claim["action"] == "hacker" and claim["target"] is not None:
                per[claim["target"]].hacked += 1
        else:
            c.blocks += 1
            c.genuine += claim["honest"]
            if claim["block"] == "hacker":
                c.judge_blocks += 1
                c.judge_genuine += claim["honest"]
        if claim["challenged"]:
            ch = per[claim["challenger"]]
            ch.challenges += 1
            ch.right += claim["caught"]
    return per


def census_key(state: GameState, seat: int) -> tuple[str, str] | None:
    """A chance to challenge by kind, read from the state as ``seat`` decides: the window (``aimed``:
    a claim whose action is aimed at it, the target's one prompt; ``bystander``: a claim aimed at
    another seat or at nobody, a Banker's or a Reporter's, face to face too; ``own block``: a block of
    its own action; ``block bystander``: a block of another's), the role claimed, its cards against
    the claimant's (``2v1``), the players alive (``4p``), and, apart, whether the claimant holds the
    role (``held`` or ``bluff``: a challenge would be right). None when ``seat`` has no challenge."""
    s: Any = state
    if s.phase is CHALLENGE:
        claimant, role = s.actor, s.claim
        window = "aimed" if seat == s.target else "bystander"
    elif s.phase is BLOCK_CHALLENGE:
        claimant, role = s.blocker, s.block_claim
        window = "own block" if seat == s.actor else "block bystander"
    else:
        return None
    alive = sum(1 for h in s.hidden if h)
    key = f"{window}|{role}|{len(s.hidden[seat])}v{len(s.hidden[claimant])}|{alive}p"
    return key, ("held" if role in s.hidden[claimant] else "bluff")


class Recorder:
    """Counts, decision by decision, each seat's chances to challenge (and, with ``state``, by kind:
    ``census_key``; each kind counted ``offered``, ``taken`` and ``taken right``)."""

    def __init__(self, players: int) -> None:
        self.chances = [0] * players
        self.census: list[Counter[str]] = [Counter() for _ in range(players)]
        self.claim_census: list[Counter[str]] = [Counter() for _ in range(players)]

    def turn(self, seat: int, hand: Sequence[str], action: Action, bot: bots.Bot | None = None) -> None:
        """A turn's action: a claim counted by role, held or bluffed (``hand``: the seat's cards as it
        chose), and for a search bot by whose it was (``prior``: the heuristic's, kept; ``search``: the
        search's, instead of the prior's); a prior's bluff the search set aside is counted as
        ``dropped``."""
        prior = getattr(bot, "last_prior", None)
        role = CLAIM.get(action["type"])
        census = self.claim_census[seat]
        if role is not None:
            whose = "—" if prior is None else ("prior" if prior["type"] == action["type"] else "search")
            census[f"{role}|{'held' if role in hand else 'bluff'}|{whose}"] += 1
        if prior is not None and prior["type"] != action["type"]:
            was = CLAIM.get(prior["type"])
            if was is not None and was not in hand:
                census[f"{was}|bluff|dropped"] += 1

    def before(
        self, seat: int, legal: Iterable[Action], state: GameState | None = None
    ) -> tuple[str, str] | None:
        if any(a["type"] == "challenge" for a in legal):
            self.chances[seat] += 1
            if state is not None:
                return census_key(state, seat)
        return None

    def after(
        self, seat: int, kind: tuple[str, str] | None, action: Action, bot: bots.Bot | None = None
    ) -> None:
        """Count the chance ``kind`` by what ``seat`` did; for a search bot, also by what its prior
        (the heuristic's choice, kept unless a candidate clearly beats it) would have done."""
        if kind is None:
            return
        key, truth = kind
        census = self.census[seat]
        census[f"{key}|offered"] += 1
        census[f"{key}|{truth}"] += 1
        took = action["type"] == "challenge"
        if took:
            census[f"{key}|taken"] += 1
            census[f"{key}|taken right"] += truth == "bluff"
        prior = getattr(bot, "last_prior", None)
        if prior is None:
            return
        if prior["type"] == "challenge":
            census[f"{key}|prior taken"] += 1
            census[f"{key}|prior taken right"] += truth == "bluff"
        if took and prior["type"] != "challenge":
            census[f"{key}|added"] += 1
            census[f"{key}|added right"] += truth == "bluff"
        elif not took and prior["type"] == "challenge":
            census[f"{key}|dropped"] += 1
            census[f"{key}|dropped right"] += truth == "bluff"


def play(state: GameState, seated: Sequence[bots.Bot], max_decisions: int = MAX_DECISIONS) -> list[Counts]:
    """Play ``state`` to its end as ``bots.play_game`` does (the first awaited seat each time) and
    count it; a game stopped at ``max_decisions`` is counted as it stands (nobody won it)."""
    rec = Recorder(state.num_players)
    decisions = 0
    while decisions < max_decisions:
        waiting = state.waiting_for()
        if not waiting:
            break
        seat = waiting[0]
        legal = state.legal_actions(seat)
        kind = rec.before(seat, legal, state)
        hand = list(state.hidden[seat]) if state.phase is TURN else None  # type: ignore[attr-defined]
        action = seated[seat].act(state.view(seat), legal)
        rec.after(seat, kind, action, seated[seat])
        if hand is not None:
            rec.turn(seat, hand, action, seated[seat])
        state.apply(seat, action)
        decisions += 1
    return count_game(state, rec.chances, rec.census, rec.claim_census)


@dataclass
class Result:
    bot: str
    players: int
    games: int
    field: str
    seconds: float
    unfinished: int
    all: Counts
    winners: Counts


def measure(
    bot: str,
    players: int,
    n_games: int,
    seed: int,
    field_bot: str = "normal",
    progress: Callable[[Result], None] | None = None,
) -> Result:
    """``n_games`` games of ``bot`` at a table of ``field_bot``s, seats rotated; the seats it held
    counted (every seat when it is the field itself). ``progress`` is handed the result so far after
    each game (a long run cut short keeps the games it finished)."""
    game = games.get(GAME)
    lineup = [bot] + [field_bot] * (players - 1)
    master = Rng(seed)
    total, won = Counts(), Counts()
    unfinished = 0
    start = time.perf_counter()
    for g in range(n_games):
        holders = [lineup[(i + g) % players] for i in range(players)]
        state = game.new_game(players=players, seed=master.next64())
        seated = [bots.make(name, game, seat, seed=master.next64()) for seat, name in enumerate(holders)]
        per = play(state, seated)
        unfinished += not state.is_over()
        for seat, c in enumerate(per):
            if holders[seat] != bot:
                continue
            total.add(c)
            if c.wins or c.shared:
                won.add(c)
        if progress is not None:
            seconds = time.perf_counter() - start
            progress(Result(bot, players, g + 1, field_bot, seconds, unfinished, total, won))
    return Result(bot, players, n_games, field_bot, time.perf_counter() - start, unfinished, total, won)


# ---------------------------------------------------------------------------------------- the tables


def pct(k: int, n: int, interval: bool = True) -> str:
    if n == 0:
        return "—"
    if not interval:
        return f"{100 * k / n:.0f}"
    lo, hi = wilson(k, n)
    return f"{100 * k / n:.1f} ({100 * lo:.0f}–{100 * hi:.0f})"


def mean_turns(c: Counts) -> str:
    if c.seats == 0:
        return "—"
    m = c.turns / c.seats
    var = max(0.0, c.turns_sq / c.seats - m * m)
    half = 1.96 * math.sqrt(var / c.seats) if c.seats > 1 else 0.0
    return f"{m:.1f} ± {half:.1f}"


HUMAN = (
    "| human winners (treason, 5 players) | — | — | — | 12 | — | 5–8 | 76 | — | — | 96 | ~20 |"
)


def table(results: Sequence[Result], winners: bool) -> str:
    head = (
        "| bot | games (seats) | win share (95 % CI) | turns/game | bluffs, % of action claims "
        "| bluffs, % of all claims "
        "| challenges, % of chances | challenges right, % | blocks/game | blocks genuine, % "
        "| Judge blocks of a Hacker genuine, % (n) | Hackers at it blocked by a Judge, % |"
    )
    lines = [head, "|" + "---|" * 12]
    for r in results:
        c = r.winners if winners else r.all
        fair = (r.all.seats == r.games * r.players)  # the field itself: every seat counted
        share = "(the field)" if fair else pct(r.all.wins, r.all.seats)
        if winners:
            share = f"{c.seats} won"
        lines.append(
            f"| `{r.bot}` | {r.games} ({r.all.seats}) | {share} | {mean_turns(c)} "
            f"| {pct(c.action_bluffs, c.action_claims)} | {pct(c.bluffs, c.claims)} "
            f"| {pct(c.challenges, c.chances)} | {pct(c.right, c.challenges)} "
            f"| {c.blocks / c.seats if c.seats else 0:.2f} | {pct(c.genuine, c.blocks)} "
            f"| {pct(c.judge_genuine, c.judge_blocks, interval=False)} ({c.judge_blocks}) "
            f"| {pct(c.judge_blocks, c.hacked, interval=False)} |"
        )
    if winners:
        lines.append(HUMAN)
    return "\n".join(lines)


def mix_table(results: Sequence[Result], winners: bool) -> str:
    lines = [
        "| bot | " + " | ".join(SHORT[a] for a in ACTIONS) + " | turns counted |",
        "|" + "---|" * (len(ACTIONS) + 2),
    ]
    for r in results:
        c = r.winners if winners else r.all
        n = sum(c.actions.values())
        shares = " | ".join(pct(c.actions[a], n, interval=False) for a in ACTIONS)
        lines.append(f"| `{r.bot}` | {shares} | {n} |")
    return "\n".join(lines)


def report(results: Sequence[Result], command: str) -> str:
    out = [f"`{command}`", ""]
    for players in sorted({r.players for r in results}, reverse=True):
        rows = [r for r in results if r.players == players]
        field_bot = rows[0].field
        out += [
            f"### {players} players (each bot against {players - 1} `{field_bot}`)",
            "",
            "All seats the bot held:",
            "",
            table(rows, winners=False),
            "",
            "Winners only (the seats that won):",
            "",
            table(rows, winners=True),
            "",
            "Action mix, % of the bot's turns (winners only):",
            "",
            mix_table(rows, winners=True),
            "",
            "Action mix, % of the bot's turns (all seats):",
            "",
            mix_table(rows, winners=False),
            "",
            "Stopped at 2,000 decisions (counted as played, won by nobody): "
            + ", ".join(f"`{r.bot}` {r.unfinished}" for r in rows)
            + "; seconds: "
            + ", ".join(f"`{r.bot}` {r.seconds:.0f}" for r in rows),
            "",
        ]
    return "\n".join(out)


def doc_of(r: Result) -> dict[str, Any]:
    """A ``Result`` as JSON (``dataclasses.asdict`` would rebuild a ``Counter`` from its items, counting
    the pairs)."""

    def counts(c: Counts) -> dict[str, Any]:
        return {k: dict(v) if isinstance(v, Counter) else v for k, v in vars(c).items()}

    return {**{k: v for k, v in vars(r).items() if k not in ("all", "winners")},
            "all": counts(r.all), "winners": counts(r.winners)}


def result_of(doc: dict[str, Any]) -> Result:
    """A ``Result`` from its JSON (``--json``, ``--progress``)."""

    def counts(d: dict[str, Any]) -> Counts:
        tallies = ("actions", "census", "claim_census")
        return Counts(**{k: Counter(v) if k in tallies else v for k, v in d.items()})

    fields = {k: v for k, v in doc.items() if k not in ("all", "winners")}
    return Result(**fields, all=counts(doc["all"]), winners=counts(doc.get("winners", {})))


CENSUS_PARTS = ("window", "role", "cards", "alive")
SEARCH_SPLIT = ("prior taken", "added", "dropped")


def _split(rows: Counter[tuple[str, ...]], kind: tuple[str, ...], what: str) -> str:
    n = rows[(*kind, what)]
    return f"{n} ({pct(rows[(*kind, what + ' right')], n, interval=False)})"


def census_table(results: Sequence[Result], by: Sequence[str] = ("window", "role")) -> str:
    """Each bot's chances to challenge by the ``by`` parts of their kind (``census_key``: the window,
    the role claimed, its cards against the claimant's, the players alive), all seats: offered, the
    share a bluff, the share taken, the taken ones right; for a search bot, its prior's challenges
    (the heuristic's choice) and how many the search added (a pass turned into a challenge) or dropped,
    with the share right (a bluff, for the dropped)."""
    lines = [
        f"| bot | players | {' | '.join(by)} | chances | a bluff, % | challenged, % | challenges | right, % "
        "| the prior's challenges (right, %) | added by the search (right, %) | dropped (a bluff, %) |",
        "|" + "---|" * (len(by) + 10),
    ]
    for r in results:
        rows: Counter[tuple[str, ...]] = Counter()
        for key, n in r.all.census.items():
            parts = dict(zip(CENSUS_PARTS, key.split("|"), strict=False))
            what = key.split("|")[-1]
            rows[(*(parts[b] for b in by), what)] += n
        kinds = sorted(
            {k[:-1] for k in rows},
            key=lambda k: (-rows[(*k, "taken")], -rows[(*k, "offered")], k),
        )
        for k in kinds:
            offered, taken = rows[(*k, "offered")], rows[(*k, "taken")]
            searched = any(rows[(*k, w)] for w in ("prior taken", "added", "dropped"))
            lines.append(
                f"| `{r.bot}` | {r.players} | {' | '.join(k)} | {offered} "
                f"| {pct(rows[(*k, 'bluff')], offered, interval=False)} "
                f"| {pct(taken, offered, interval=False)} | {taken} "
                f"| {pct(rows[(*k, 'taken right')], taken, interval=False)} | "
                + (" | ".join(_split(rows, k, w) for w in SEARCH_SPLIT) if searched else "— | — | —")
                + " |"
            )
    return "\n".join(lines)


def claim_table(results: Sequence[Result]) -> str:
    """Each bot's turn claims by role (all seats): claims, the share bluffed, and for a search bot its
    bluffs by whose they were (its prior's kept, or the search's instead of the prior's choice) and
    the prior's bluffs it set aside."""
    lines = [
        "| bot | players | role | claims | bluffs, % "
        "| bluffs: the prior's | the search's | the prior's set aside |",
        "|" + "---|" * 8,
    ]
    for r in results:
        rows: Counter[tuple[str, str, str]] = Counter()
        for key, n in r.all.claim_census.items():
            role, held, whose = key.split("|")
            rows[(role, held, whose)] += n
        for role in sorted({k[0] for k in rows}):
            made = sum(n for (ro, _, w), n in rows.items() if ro == role and w != "dropped")
            bluffs = sum(n for (ro, h, w), n in rows.items() if (ro, h) == (role, "bluff") and w != "dropped")
            split = " | ".join(str(rows[(role, "bluff", w)]) for w in ("prior", "search", "dropped"))
            searched = any(rows[(role, h, w)] for h in ("held", "bluff") for w in ("prior", "search"))
            lines.append(
                f"| `{r.bot}` | {r.players} | {role} | {made} | {pct(bluffs, made, interval=False)} | "
                + (split if searched else "— | — | —")
                + " |"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bots", default=DEFAULT_BOTS, help="comma-separated bots to measure")
    ap.add_argument("--players", default="4,2", help="table sizes, comma-separated")
    ap.add_argument("--games", type=int, default=2000, help="games per bot and table size")
    ap.add_argument("--hard-games", type=int, default=80, help="games for a search bot (~0.3 s a decision)")
    ap.add_argument("--field", default="normal", help="the bot at every other seat")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--json", action="store_true", help="print the counts as JSON instead")
    ap.add_argument(
        "--progress", metavar="FILE", help="write the counts so far as JSON to FILE after every game"
    )
    ap.add_argument(
        "--tables", metavar="FILE", nargs="+", help="print the tables of runs saved by --json or --progress"
    )
    ap.add_argument("--census", action="store_true", help="add the chances to challenge by kind")
    args = ap.parse_args(argv)
    names = [b for b in args.bots.split(",") if b]
    sizes = [int(p) for p in args.players.split(",") if p]
    command = (
        f"python benchmarks/bots_like_people.py --bots {','.join(names)} --players {args.players} "
        f"--games {args.games} --hard-games {args.hard_games} --field {args.field} --seed {args.seed}"
    )
    results: list[Result] = []
    if args.tables:
        for path in args.tables:
            with open(path) as f:
                results += [result_of(d) for d in json.load(f)]
        command = "python benchmarks/bots_like_people.py --tables " + " ".join(args.tables)
    else:

        def save(partial: Result) -> None:
            with open(args.progress, "w") as f:
                json.dump([doc_of(r) for r in [*results, partial]], f)

        for players in sizes:
            for name in names:
                searches = name.split(":")[0] in ("hard", "search", "pimc", "ismcts")
                n = args.hard_games if searches else args.games
                on_game = save if args.progress else None
                results.append(measure(name, players, n, args.seed, args.field, on_game))
    if args.json:
        print(json.dumps([doc_of(r) for r in results], indent=1))
        return
    print(report(results, command))
    if args.census:
        print("\nTurn claims by role (all seats):\n\n" + claim_table(results))
        for by in (("window", "role"), ("window", "cards"), ("window", "alive")):
            print(f"\nChances to challenge by {', '.join(by)} (all seats):\n\n" + census_table(results, by))


if __name__ == "__main__":
    main()
