"""The package's modules import each other in one direction only: no cycle, not even a lazy one."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import conflictology.games.conspiranoicos as package


def test_the_package_modules_import_each_other_without_a_cycle() -> None:
    folder = Path(package.__file__).parent
    graph: dict[str, set[str]] = {}
    for path in folder.glob("*.py"):
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):  # every import, at any depth
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                deps |= {node.module} if node.module else {a.name for a in node.names}
        graph[path.stem] = deps
    assert {"state", "rules", "sorting", "views", "worlds", "game"} <= set(graph)
    order = list(graphlib.TopologicalSorter(graph).static_order())  # raises CycleError on a cycle
    assert order.index("state") < order.index("rules") < order.index("views") < order.index("game")
    assert order.index("worlds") < order.index("game")
