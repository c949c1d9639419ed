"""The Capitol package's layout: every import between its modules, deferred ones and type-only ones
included, runs one way (no cycle, however well hidden), and nothing in it reaches up into the bots,
the server or the clients."""

from __future__ import annotations

import ast
from pathlib import Path

import conflictology.games.capitol as package

PACKAGE = "conflictology.games.capitol"
ROOT = Path(package.__file__).parent


def _imports(path: Path) -> set[str]:
    """The modules a file imports, anywhere in it (a function's body, an ``if TYPE_CHECKING:``)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{alias.name}" for alias in node.names)
    return out


def _graph() -> dict[str, set[str]]:
    modules = {p.stem: p for p in ROOT.glob("*.py") if p.stem != "__init__"}
    return {
        name: {m.rsplit(".", 1)[1] for m in _imports(path) if m.rsplit(".", 1)[0] == PACKAGE} & set(modules)
        for name, path in modules.items()
    }


def test_the_modules_import_each_other_without_a_cycle() -> None:
    graph = _graph()
    assert {"data", "fields", "rules", "state", "views", "worlds", "game"} <= set(graph)
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, f"import cycle: {' -> '.join((*path, name))}"
        if name in done:
            return
        for other in sorted(graph[name]):
            visit(other, (*path, name))
        done.add(name)

    for name in sorted(graph):
        visit(name, ())


def test_the_rules_and_the_views_do_not_need_the_state_module() -> None:
    graph = _graph()
    assert "state" not in graph["rules"] and "state" not in graph["views"]
    assert graph["data"] == set()


def test_nothing_in_the_game_imports_upward() -> None:
    for path in ROOT.glob("*.py"):
        for module in _imports(path):
            assert not module.startswith(
                ("conflictology.bots", "conflictology.server", "conflictology.web", "conflictology.terminal")
            ), f"{path.name} imports {module}"
