"""The compiled rules (conflictology.native): taken only while they are a build of the source as it
is, and the same game as the source."""

from __future__ import annotations

import functools
import hashlib
import importlib.machinery
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from benchmarks.game_digest import digest

from conflictology import native
from conflictology.games.capitol import data, fields, rules, state

ROOT = Path(__file__).resolve().parents[2]
PURE = native.pure()


def test_the_suite_runs_the_rules_it_was_asked_to() -> None:
    """scripts/test builds the rules and runs the suite on them, then the rules' own tests again with
    CONFLICTOLOGY_PURE=1: each pass must run what it says (a failed build fails here, by name)."""
    if PURE:
        assert native.running == f"source ({native.PURE_ENV} is set)"
    else:
        assert native.running == "compiled", f"{native.running}: run scripts/build_native.py"
    for module in (data, fields, rules):
        assert native.compiled(module) is not PURE, module
    # The engine's class stays Python: it subclasses the compiled fields and the engine's ABC.
    assert not native.compiled(state)
    assert isinstance(state.CapitolState.apply, type(test_the_suite_runs_the_rules_it_was_asked_to))


def in_the_other_mode(expression: str, imports: str) -> str:
    """What ``expression`` prints in a process running the other kind of rules (compiled if this one
    runs the source, and the other way round), checked to run that kind."""
    env = {**os.environ, native.PURE_ENV: "0" if PURE else "1"}
    script = f"import conflictology.native as n; {imports}; print(n.running); print({expression})"
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0] == ("compiled" if PURE else f"source ({native.PURE_ENV} is set)")
    return out[1]


def test_compiled_and_source_play_the_same_games() -> None:
    """The other kind of rules plays the same seeded games to the same states, views and legal lists
    (benchmarks/game_digest.py, 20 deals at each table size)."""
    mine = digest(20)
    assert mine[0] > 5_000
    theirs = in_the_other_mode("*digest(20)", "from benchmarks.game_digest import digest")
    assert theirs == f"{mine[0]} {mine[1]}"


def bots_game(seed: int) -> str:
    """A four-seat game of the compiled bots' kinds (the search on a budget of worlds, so the clock
    decides nothing), as the hash of its final state: every decision is in its log."""
    from conflictology import bots, games

    game = games.get("capitol")
    state = game.new_game(players=4, seed=seed)
    specs = ["hard:iterations=12:seconds=9999", "normal", "heuristic-bluffer", "normal"]
    seated = [bots.make(spec, game, seat, seed=seed + seat) for seat, spec in enumerate(specs)]
    bots.play_game(state, seated)
    return hashlib.sha256(state.to_json().encode()).hexdigest()


def test_compiled_and_source_bots_decide_the_same() -> None:
    """The bots' compiled modules (the heuristic, the rule player, what a seat knows, the cut-off's
    value) make the same decisions as their source, the search's included."""
    mine = [bots_game(seed) for seed in (1, 2)]
    imports = "from tests.engine.test_native import bots_game"
    theirs = in_the_other_mode("*(bots_game(s) for s in (1, 2))", imports)
    assert theirs.split() == mine


def test_a_build_kept_elsewhere_is_named_by_the_environment(tmp_path: Path) -> None:
    """The container image keeps its build in /opt (CONFLICTOLOGY_NATIVE_DIR): a copy of this one,
    anywhere, serves the same sources; an empty directory serves nothing."""
    shutil.copytree(native.BUILD, tmp_path / "native")
    (tmp_path / "empty").mkdir()
    script = "import conflictology.native as n; from conflictology.games.capitol import rules; "
    script += "print(n.running, n.compiled(rules), n.BUILD)"
    for where, expected in (("native", "compiled True"), ("empty", "source (not built")):
        env = {**os.environ, native.PURE_ENV: "0", native.DIR_ENV: str(tmp_path / where)}
        out = subprocess.run(
            [sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
        assert out.startswith(expected) and out.rstrip().endswith(str(tmp_path / where)), out


def _fake_build(build: Path) -> None:
    """A build's files as the finder looks for them (empty: only their names are read here)."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    for name in [*map(native.module_name, native.SOURCES), native.SHARED]:
        path = build.joinpath(*name.split("."))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.with_name(path.name + suffix).write_bytes(b"")


def test_a_build_is_taken_only_while_its_sources_are_as_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(native.PURE_ENV, raising=False)
    src, build = tmp_path / "src", tmp_path / "build"
    for source in native.SOURCES:
        (src / source).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(native.SRC / source, src / source)
    build.mkdir()
    assert native.status(build, src).startswith("source (not built")
    (build / native.STAMP).write_text(native.stamp(src) + "\n")
    assert native.status(build, src).startswith("source (the build is incomplete")
    _fake_build(build)
    assert native.status(build, src) == "compiled"
    monkeypatch.setenv(native.PURE_ENV, "1")
    assert native.status(build, src) == f"source ({native.PURE_ENV} is set)"
    monkeypatch.delenv(native.PURE_ENV)

    # An engineer edits the rules: the build is no longer theirs, and the source runs, with a warning.
    edited = src / native.SOURCES[-1]
    edited.write_text(edited.read_text() + "\n# edited\n")
    assert not native.fresh(build, src)
    finders = list(sys.meta_path)
    with pytest.warns(RuntimeWarning, match="older than the source"):
        assert native.install(build, src).startswith("source (the build is older")
    assert sys.meta_path == finders


def test_the_finder_answers_for_the_compiled_modules_only(tmp_path: Path) -> None:
    _fake_build(tmp_path)
    finder = native.CompiledFinder(tmp_path)
    spec = finder.find_spec("conflictology.games.capitol.rules")
    assert spec is not None and isinstance(spec.loader, importlib.machinery.ExtensionFileLoader)
    assert spec.origin == str(tmp_path / "conflictology/games/capitol" / Path(spec.origin or "").name)
    assert finder.find_spec(native.SHARED) is not None
    assert finder.find_spec("conflictology.games.capitol.state") is None
    assert finder.find_spec("conflictology.engine") is None
    assert native.CompiledFinder(tmp_path / "empty").find_spec("conflictology.games.capitol.rules") is None


def _two(s: Any, seat: Any) -> tuple[Any, Any]:
    return s, seat


def _three(s: Any, seat: Any, action: Any) -> tuple[Any, Any, Any]:
    return s, seat, action


def test_a_rules_function_is_a_method_compiled_or_not() -> None:
    assert native.method(_two) is _two  # a Python function binds by itself

    class Table:
        # Not Python functions (as a compiled function is not): called through one, by arity.
        two = native.method(functools.partial(_two))
        three = native.method(functools.partial(_three))

    table = Table()
    assert table.two(1) == (table, 1)
    assert table.three(1, {"type": "income"}) == (table, 1, {"type": "income"})
    assert state.CapitolState.apply.__name__ == "apply"  # named after the function it calls, if any
