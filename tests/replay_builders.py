"""Build functions for the replay builds' tests (server/replay_builds.py), importable by name in a
build's child process (the tests folder is on its path). Each takes, bound with ``functools.partial``,
a folder where a child that has begun its build leaves a file named by its process id: a test waits
for that file, never for a clock.

A build that hangs hangs only in a child: run in the test process it raises, so a regression cannot
hang the test run for good."""

from __future__ import annotations

import multiprocessing
import os
import threading
from pathlib import Path
from typing import Any

from conflictology.server.replay_cache import Encoded, Kind, build

HANG_SECONDS = 120.0  # a child that hangs is killed long before (the tests kill it, or its time cap)


def _begun(folder: str) -> None:
    mark = Path(folder) / str(os.getpid())
    mark.with_suffix(".tmp").write_text("begun")
    mark.with_suffix(".tmp").rename(mark)  # whole when seen


def hang(folder: str, kind: Kind, record: dict[str, Any]) -> Encoded:
    """Begin, then never answer (``record["hang"]``), or build as the server does."""
    _begun(folder)
    if record.get("hang"):
        if multiprocessing.parent_process() is None:
            raise RuntimeError("a hanging build run outside a child process")
        threading.Event().wait(HANG_SECONDS)
    return build(kind, record)


def spin(folder: str, kind: Kind, record: dict[str, Any]) -> Encoded:
    """Begin, then compute for ever (``record["spin"]``), or build as the server does."""
    _begun(folder)
    if record.get("spin"):
        if multiprocessing.parent_process() is None:
            raise RuntimeError("a spinning build run outside a child process")
        while True:
            pass
    return build(kind, record)


def hang_always(folder: str, kind: Kind, record: dict[str, Any]) -> Encoded:
    """Begin, then never answer, whatever the record (a real game's, from a server's archive)."""
    return hang(folder, kind, {**record, "hang": True})


def broken(folder: str, kind: Kind, record: dict[str, Any]) -> Encoded:
    """Raise (a game's bug) for ``record["broken"]``, or build as the server does."""
    _begun(folder)
    if record.get("broken"):
        raise ValueError("a bug in the game's replay")
    return build(kind, record)


def begun(folder: Path) -> list[int]:
    """The process ids of the children that have begun a build."""
    return sorted(int(p.name) for p in folder.iterdir() if p.name.isdigit())
