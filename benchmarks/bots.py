"""Bot strength and speed: win shares with 95 % intervals, and search iterations per second.

    python benchmarks/bots.py                 # every row at its full sample size (tens of minutes)
    python benchmarks/bots.py --scale 0.25    # a quarter of the games, for a quick look
    python benchmarks/bots.py --only speed    # one row (speed, capitol-hr, capitol-ih, capitol-ph, consp-hr,
                                              # consp-ih)
    python benchmarks/bots.py --json
    python benchmarks/bots.py --only outside  # every row against the outside AI (a group name)

Each strength row is exactly ``conflictology simulate GAME --players N --games K --seed S --bots …``
(seats rotated from game to game; the command is printed beside the row), with the target the issue
set. The speed rows run search decisions from 4-player Capitol positions (the same 20 at
``--scale 0.5``) and print one table of iterations per second of process CPU time and of wall time
(on a shared machine, CPU time is the steadier figure): ISMCTS walks (one root candidate's walk
down the tree, then the rollout) and the flat search's (``pimc``) rollouts (a world played after one
candidate), each as shipped (cut four turns on) and played to the end (``horizon=0``), and the flat
search with each model of the other seats. ``--baseline REV`` runs that revision's own speed rows on
this machine first (a temporary git worktree, its code and its script) and prints the ratios:

    python benchmarks/bots.py --only speed --scale 0.5 --baseline a3d5000   # before issue 16's work

The ``outside`` rows measure our bots against treason's rule-based AI (``outside-treason``, coupml's
port, and ``outside-treason-js``, the port with treason's JavaScript restored; docs/bots.md): head to
head in two-player games, as the lone seat against three of it in four-player games, and at mixed
tables (the outside AI, our personalities and ``random`` at one table). A row's "fair" share is one
over the seats the measured bot holds a share of; the fallbacks are the outside AI's decisions the
adapter could not map (none expected).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from conflictology import bots, games
from conflictology.arena import wilson
from conflictology.bots import outside
from conflictology.engine import Rng
from conflictology.simulate import simulate

# The search budgets the strength rows use: the registered defaults (iterations, with a wall cap).
ISMCTS = "ismcts"
PIMC = "pimc"  # the flat search (Capitol's ``search`` and ``hard``)


@dataclass
class Row:
    key: str
    game: str
    players: int
    games: int
    bot: str
    against: str
    win_share: float
    low: float
    high: float
    target: float
    ms_per_decision: float
    max_ms_per_decision: float
    command: str
    fair: float = 0.0
    fallbacks: int = 0
    unfinished: int = 0

    @property
    def met(self) -> bool:
        return self.win_share >= self.target


OUT = "outside-treason"
JS = "outside-treason-js"
MIXED = [OUT, "heuristic-bluffer", "random"]
MIXED_JS = [JS, OUT, "heuristic-sceptic"]

# key, game, seats (the measured bot first), games at scale 1, target win share
MATCHES: list[tuple[str, str, list[str], int, float]] = [
    ("capitol-hr", "capitol", ["heuristic", "random"], 400, 0.80),
    ("capitol-ih", "capitol", [ISMCTS, "heuristic", "heuristic", "heuristic"], 120, 0.40),
    ("capitol-ph", "capitol", [PIMC, "heuristic", "heuristic", "heuristic"], 120, 0.40),
    ("consp-hr", "conspiranoicos", ["heuristic", "random"], 300, 0.65),
    ("consp-ih", "conspiranoicos", [ISMCTS, "heuristic"], 120, 0.55),
    # Against the outside AI (issue 16): normal (the heuristic) and hard, head to head and alone
    # against three; the random row is the sanity check (no target).
    ("out-random-2", "capitol", ["random", OUT], 400, 0.0),
    ("out-normal-2", "capitol", ["normal", OUT], 4000, 0.55),
    ("out-normal-4", "capitol", ["normal", OUT, OUT, OUT], 2000, 0.30),
    ("out-normal-js-2", "capitol", ["normal", JS], 4000, 0.55),
    ("out-normal-js-4", "capitol", ["normal", JS, JS, JS], 2000, 0.30),
    ("out-normal-mixed", "capitol", ["normal", *MIXED], 2000, 0.30),
    ("out-normal-mixed-js", "capitol", ["normal", *MIXED_JS], 2000, 0.30),
    ("out-hard-2", "capitol", ["hard", OUT], 300, 0.65),
    ("out-hard-4", "capitol", ["hard", OUT, OUT, OUT], 100, 0.40),
    ("out-hard-js-2", "capitol", ["hard", JS], 100, 0.65),
    ("out-hard-mixed", "capitol", ["hard", *MIXED], 40, 0.30),
    # ``hard`` against the heuristic it builds on, head to head (no regression: search ≥ 0.55).
    ("out-hard-heuristic-2", "capitol", ["hard", "heuristic"], 100, 0.55),
]
# Row groups for --only.
GROUPS = {"outside": [key for key, *_ in MATCHES if key.startswith("out-")]}


def strength(key: str, game: str, seats: list[str], n: int, target: float, seed: int) -> Row:
    outside.STATS.clear()
    result = simulate(game, len(seats), n, seats, seed=seed)
    bot = seats[0]
    wins = result.wins[bot]
    lo, hi = wilson(wins, n)
    asked = result.bot_decisions.get(bot, 0)
    per = 1000 * result.bot_seconds.get(bot, 0.0) / asked if asked else 0.0
    command = (
        f"conflictology simulate {game} --players {len(seats)} --games {n} --seed {seed} "
        f"--bots {','.join(seats)}"
    )
    return Row(
        key,
        game,
        len(seats),
        n,
        bot,
        ",".join(seats[1:]),
        wins / n,
        lo,
        hi,
        target,
        per,
        1000 * result.bot_max_seconds.get(bot, 0.0),
        command,
        fair=seats.count(bot) / len(seats),
        fallbacks=sum(v for k, v in outside.STATS.items() if k.startswith("fallback:")),
        unfinished=result.unfinished,
    )


def speed(decisions: int, iterations: int, seed: int, bot: str = "ismcts") -> dict[str, float]:
    """Search iterations per second on 4-player Capitol positions reached by heuristic play
    (for ``pimc``: rollouts, a world times its candidates)."""
    game = games.get("capitol")
    rng = Rng(seed)
    wall = cpu = 0.0
    done = asked = 0
    while asked < decisions:
        state = game.new_game(4, seed=rng.next64())
        players = [bots.make("heuristic", game, s, seed=rng.next64()) for s in range(4)]
        while not state.is_over() and asked < decisions:
            seat = state.waiting_for()[0]
            legal = state.legal_actions(seat)
            if len(legal) > 1 and rng.random() < 0.3:
                searcher = bots.make(f"{bot}:iterations={iterations}", game, seat, seed=rng.next64())
                w, c = time.perf_counter(), time.process_time()
                searcher.act(state.view(seat), legal)
                wall += time.perf_counter() - w
                cpu += time.process_time() - c
                per = len(searcher.last_root_stats) if bot.startswith("pimc") else 1  # type: ignore[attr-defined]
                done += searcher.last_iterations * per  # type: ignore[attr-defined]
                asked += 1
            state.apply(seat, players[seat].act(state.view(seat), legal))
    return {
        "decisions": asked,
        "iterations_per_decision": iterations,
        "iterations_per_wall_second": done / wall,
        "iterations_per_cpu_second": done / cpu,
    }


#: the speed rows: (JSON key, bot spec, what one iteration is, what it stands for)
SPEEDS = (
    ("speed", ISMCTS, "walks", "ISMCTS as shipped (rollouts cut 4 turns on, the rule-player mix)"),
    ("speed_full", f"{ISMCTS}:horizon=0", "walks", "ISMCTS, rollouts to the end of the game"),
    ("speed_pimc", PIMC, "rollouts", "flat search as shipped (`hard`'s)"),
    ("speed_pimc_full", f"{PIMC}:horizon=0", "rollouts", "flat search, rollouts to the end"),
    ("speed_pimc_heuristic", f"{PIMC}:opp=heuristic", "rollouts", "flat search, the heuristic at every seat"),
    ("speed_pimc_rules", f"{PIMC}:opp=rules", "rollouts", "flat search, the rule player at every other seat"),
)


def baseline_speeds(rev: str, scale: float) -> dict[str, dict[str, float]]:
    """The speed rows of an earlier revision, measured now on this machine: its own benchmark script
    and code, checked out in a temporary git worktree and run in a child process."""
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "baseline"
        git = ["git", "-C", str(root), "worktree"]
        subprocess.run([*git, "add", "--detach", "-q", str(tree), rev], check=True)
        try:
            run = subprocess.run(
                [sys.executable, "benchmarks/bots.py", "--only", "speed", "--json", "--scale", str(scale)],
                cwd=tree,
                env={**os.environ, "PYTHONPATH": str(tree / "src")},
                capture_output=True,
                text=True,
                check=True,
            )
        finally:
            subprocess.run([*git, "remove", "--force", str(tree)], check=False)
    found: dict[str, dict[str, float]] = json.loads(run.stdout)
    return {k: v for k, v in found.items() if k.startswith("speed")}


def speed_table(
    console: Console, decisions: int, seed: int, baseline: str | None, scale: float
) -> dict[str, object]:
    """Every speed row, printed as one table (with the baseline revision's rows and the ratios)."""
    out: dict[str, object] = {}
    before = baseline_speeds(baseline, scale) if baseline else {}
    table = Table(title="Search speed on 4-player Capitol positions (per second of process CPU time)")
    for col in ("bot", "iteration", "per CPU s", "per wall s", f"{baseline} (same machine)", "ratio", "what"):
        table.add_column(col, justify="left" if col in ("bot", "iteration", "what") else "right")
    for key, spec, unit, what in SPEEDS:
        row = speed(decisions, 500 if spec.startswith(ISMCTS) else 50, seed, bot=spec)
        out[key] = row
        # An earlier revision's rows have the shipped bots' keys only (speed: ISMCTS, speed_pimc).
        then = before.get(key, {}).get("iterations_per_cpu_second")
        if then is None and key.endswith("_full"):
            then = before.get(key.removesuffix("_full"), {}).get("iterations_per_cpu_second")
        if then is not None:
            out[f"{key}_baseline"] = then
        table.add_row(
            spec,
            unit,
            f"{row['iterations_per_cpu_second']:.0f}",
            f"{row['iterations_per_wall_second']:.0f}",
            "" if then is None else f"{then:.0f}",
            "" if then is None else f"{row['iterations_per_cpu_second'] / then:.1f}×",
            what,
        )
    console.print(table)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every sample size")
    parser.add_argument("--only", default=None, help="comma-separated row keys")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--baseline",
        default=None,
        help="a git revision whose own speed row runs too, on this machine, for the ratios (e.g. a3d5000)",
    )
    args = parser.parse_args()
    only = None
    if args.only:
        only = {key for part in args.only.split(",") for key in GROUPS.get(part, [part])}
    console = Console(stderr=args.json)
    out: dict[str, object] = {}
    if only is None or "speed" in only:
        out.update(speed_table(console, max(5, int(40 * args.scale)), args.seed, args.baseline, args.scale))
    rows: list[Row] = []
    for key, game, seats, n, target in MATCHES:
        if only is not None and key not in only:
            continue
        games_n = max(10, int(n * args.scale))
        console.print(f"[dim]{key}: {games_n} games…[/dim]")
        rows.append(strength(key, game, seats, games_n, target, args.seed))
    out["strength"] = [asdict(r) | {"met": r.met} for r in rows]
    if args.json:
        print(json.dumps(out))
        return
    if not rows:
        return
    table = Table(title="Bot strength (seats rotated; 95 % Wilson intervals)")
    for col in (
        "game",
        "seats",
        "bot",
        "against",
        "games",
        "win share",
        "95 % CI",
        "fair",
        "target",
        "ms/decision (max)",
        "fallbacks",
    ):
        table.add_column(col, justify="right" if col not in ("game", "bot", "against") else "left")
    for r in rows:
        table.add_row(
            r.game,
            str(r.players),
            r.bot,
            r.against,
            str(r.games),
            f"{r.win_share:.3f}",
            f"{r.low:.2f}–{r.high:.2f}",
            f"{r.fair:.2f}",
            f"≥ {r.target:.2f} {'✓' if r.met else '✗'}" if r.target else "—",
            f"{r.ms_per_decision:.1f} ({r.max_ms_per_decision:.0f})",
            str(r.fallbacks) if "outside" in r.command else "—",
        )
    console.print(table)
    for r in rows:
        console.print(f"[dim]{r.key}: {r.command}[/dim]")


if __name__ == "__main__":
    main()
