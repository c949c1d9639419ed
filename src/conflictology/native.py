"""The rules compiled to C, when they have been: found before their Python source, only while fresh.

Capitol's rules, their readers, the Capitol bots' playouts and the server's messages to each seat
(``SOURCES``) are plain typed Python, and mypyc compiles the same files to C extension modules
(``scripts/build_native.py``, run by ``scripts/setup``; docs/architecture.md, "The compiled rules").
A random playout then runs about 1.4 times as many decisions a second, ``hard`` takes about 60 % of
the CPU for the same decision, and the game's share of a server's move about a quarter less
(benchmarks/README.md, "The compiled rules").
The Python source stays the one place the rules live: the compiled modules are a build of it, kept
in ``build/native`` beside ``src``, with a stamp of the sources they were built from.

Importing this module puts a finder at the front of ``sys.meta_path`` that answers for those modules
(and their shared library) from ``build/native`` when its stamp matches the sources as they are
now. Else, or with ``CONFLICTOLOGY_PURE=1`` in the environment, nothing changes: the modules are
imported from their source, as they always were. A source edited since the build is played from
the source (with one warning) until ``scripts/setup`` builds it again: an engineer never runs rules
that are not the ones on the page.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import inspect
import os
import sys
import types
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

#: the modules compiled, as paths under ``src`` (their bytes, in this order, are the build's stamp)
SOURCES = (
    "conflictology/games/capitol/data.py",
    "conflictology/games/capitol/fields.py",
    "conflictology/games/capitol/rules.py",
    "conflictology/games/capitol/honesty.py",
    "conflictology/games/capitol/views.py",
    "conflictology/games/capitol/worlds.py",
    # The Capitol bots' playouts: the heuristic and the rule player the rollouts are made of, what a
    # seat knows, and the fitted value of a cut-off (the search itself, in capitol_search.py and
    # ismcts.py, stays Python: a tenth of a decision's time).
    "conflictology/bots/capitol_value.py",
    "conflictology/bots/capitol_knowledge.py",
    "conflictology/bots/capitol_rules.py",
    "conflictology/bots/capitol.py",
    # Each seat's message on each change (its view, its log from where its sockets' ends, its text):
    # compiled, the server's own work a move takes 6 % fewer instructions. (The hub, the scheduler
    # and the writer, mostly coroutines, took 2 % more off together, and the store and the limits
    # under 1 %: left as Python.)
    "conflictology/server/master.py",
)
#: mypyc's library shared by the compiled modules (its runtime and their code): a top-level module
GROUP = "conflictology_native"
SHARED = f"{GROUP}__mypyc"
STAMP = "stamp.txt"
PURE_ENV = "CONFLICTOLOGY_PURE"
#: where the build is, when not beside ``src`` (the container image keeps it in /opt)
DIR_ENV = "CONFLICTOLOGY_NATIVE_DIR"

SRC = Path(__file__).resolve().parent.parent
BUILD = Path(os.environ.get(DIR_ENV) or SRC.parent / "build" / "native")


def module_name(source: str) -> str:
    return source.removesuffix(".py").replace("/", ".")


def stamp(src: Path = SRC) -> str:
    """What a build is good for: the interpreter, and the compiled sources' bytes."""
    digest = hashlib.sha256(sys.implementation.cache_tag.encode())
    for source in SOURCES:
        digest.update(source.encode())
        digest.update((src / source).read_bytes())
    return digest.hexdigest()


def fresh(build: Path = BUILD, src: Path = SRC) -> bool:
    """Whether ``build`` holds the compiled modules of the sources as they are now."""
    try:
        return (build / STAMP).read_text().strip() == stamp(src)
    except OSError:
        return False


def _extension(build: Path, name: str) -> Path | None:
    base = build.joinpath(*name.split("."))
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = base.with_name(base.name + suffix)
        if path.is_file():
            return path
    return None


class CompiledFinder:
    """A meta path finder for the compiled modules of one build: each is loaded from its extension
    file, as the import system loads any C extension."""

    def __init__(self, build: Path) -> None:
        self.build = build
        self.names = {module_name(s) for s in SOURCES} | {SHARED}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.names:
            return None
        file = _extension(self.build, fullname)
        if file is None:
            return None
        return importlib.util.spec_from_file_location(fullname, file)


def pure() -> bool:
    """Whether the environment asks for the source (``CONFLICTOLOGY_PURE`` set, and not to 0)."""
    return os.environ.get(PURE_ENV, "") not in ("", "0")


def status(build: Path = BUILD, src: Path = SRC) -> str:
    """How the rules run in this process: ``compiled``, or ``source`` and why."""
    if pure():
        return f"source ({PURE_ENV} is set)"
    if not (build / STAMP).is_file():
        return "source (not built: scripts/setup builds it)"
    if not fresh(build, src):
        return "source (the build is older than the source: scripts/setup builds it again)"
    if any(_extension(build, name) is None for name in [*map(module_name, SOURCES), SHARED]):
        return "source (the build is incomplete: scripts/setup builds it again)"
    return "compiled"


def install(build: Path = BUILD, src: Path = SRC) -> str:
    """Put the finder first when the build is fresh (once a process); returns :func:`status`."""
    state = status(build, src)
    if state == "compiled":
        if not any(isinstance(f, CompiledFinder) for f in sys.meta_path):
            sys.meta_path.insert(0, CompiledFinder(build))
    elif not pure() and (build / STAMP).is_file():  # a build there, but not of these sources
        warnings.warn(f"conflictology: the rules run from their {state}", RuntimeWarning, stacklevel=2)
    return state


def compiled(module: types.ModuleType) -> bool:
    """Whether ``module`` was loaded from a compiled extension."""
    return isinstance(getattr(module, "__loader__", None), importlib.machinery.ExtensionFileLoader)


F = TypeVar("F", bound=Callable[..., Any])


def method(function: F) -> F:
    """A rules function as a class's method: itself when it is Python's (a function binds as a
    method); a compiled function does not bind, so it is called through a Python one."""
    if isinstance(function, types.FunctionType):
        return function
    bound: Callable[..., Any]
    # The search's hot path calls these: a wrapper of the function's own arity packs no tuple.
    arity = len(inspect.signature(function).parameters)
    if arity == 2:

        def bound(self: Any, a: Any) -> Any:
            return function(self, a)

    elif arity == 3:

        def bound(self: Any, a: Any, b: Any) -> Any:
            return function(self, a, b)

    else:

        def bound(self: Any, *args: Any) -> Any:
            return function(self, *args)

    bound.__name__ = bound.__qualname__ = getattr(function, "__name__", "bound")
    bound.__doc__ = function.__doc__
    return bound  # type: ignore[return-value]


running = install()
