"""In a bot worker process: the worker's main loop, and the multiprocessing context it is made in.

A worker is a fork of a fork server that imported this module, the bots and every game once, so a
replacement worker starts in milliseconds (``spawn`` where there is no fork server; never ``fork``:
the server has threads). It decides one job at a time, each sent down its pipe by the pool
(:class:`conflictology.server.botjobs.Job`), and answers ``("done", id, action)``, ``("unknown", id)``
(a game or bot only the server process knows) or ``("error", id, traceback)``.
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing
import os
import signal
import sys
import traceback
import warnings
from multiprocessing.connection import Connection
from multiprocessing.context import ForkServerContext, SpawnContext

from conflictology import bots, games
from conflictology.server.botjobs import JobMessage, decide

# A worker runs the server's main module again (multiprocessing's rule); preloaded in the fork server
# (see worker_context) so that costs milliseconds, runpy then warns that it was imported before: expected.
# (Here, not in the pool: the fork server imports this module first, before the main module.)
warnings.filterwarnings(
    "ignore", message=r"'[\w.]+' found in sys.modules after import of package", category=RuntimeWarning
)

# Workers run at a lower priority than the server: when a core is contended, the event loop (every
# room's moves) wins it and the searches slow down, never the other way round.
WORKER_NICENESS = 10

WorkerContext = ForkServerContext | SpawnContext

_cached_context: WorkerContext | None = None


def worker_context() -> WorkerContext:
    """The multiprocessing context of the workers (and of the replay builds): a fork server that
    imported the bots, every game, the replay builder and the main module once (each worker is a fork
    of it), or ``spawn`` where there is none."""
    global _cached_context
    if _cached_context is None:
        context: WorkerContext
        if "forkserver" in multiprocessing.get_all_start_methods():
            context = multiprocessing.get_context("forkserver")
            # The fork server serves the replay builds too (server/replay_builds.py).
            preload = [
                __name__,
                "conflictology.server.replay_builds",
                *(games.module_name(name) for name in games.names()),
            ]
            # Each worker runs the server's main module again (multiprocessing's rule: it must keep
            # its work under ``if __name__ == "__main__":``); imported once here, it costs a worker
            # only its own lines (``python -m conflictology.cli``, ``conflictology serve``).
            main = sys.modules.get("__main__")
            spec = getattr(main, "__spec__", None)
            preload.append(spec.name if spec is not None and spec.name else "conflictology.cli")
            context.set_forkserver_preload(preload)
        else:
            context = multiprocessing.get_context("spawn")
        _cached_context = context
    return _cached_context


def run_setup(setup: list[str]) -> None:
    """Call (import) each ``module:function`` (``module``) of ``ServerConfig.bot_worker_setup``: what
    the server registered at run time, registered in this child too."""
    for hook in setup:
        module, _, function = hook.partition(":")
        loaded = importlib.import_module(module)
        if function:
            getattr(loaded, function)()


def worker_main(conn: Connection, setup: list[str]) -> None:
    """A worker: decide each job received, until the server closes the pipe."""
    # Ctrl-C in a terminal reaches the whole process group: the server stops its workers itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICENESS)
    run_setup(setup)
    for name in games.names():  # imported now, not on the first decision's clock
        with contextlib.suppress(Exception):
            games.get(name)
    try:
        conn.send(("ready", os.getpid()))
    except (EOFError, OSError):
        return  # the server stopped while this worker was starting
    while True:
        try:
            message: JobMessage = conn.recv()
        except (EOFError, OSError):
            return  # the server is gone
        job_id, game_name, level, seat, seed, view, legal = message
        reply: tuple[object, ...]
        try:
            game = games.get(game_name) if game_name in games.names() else None
            if game is None or not (bots.is_offered(level, game) or bots.is_offered_on_clock(level, game)):
                reply = ("unknown", job_id)
            else:
                reply = ("done", job_id, decide(game, level, seat, seed, view, legal))
        except Exception:
            reply = ("error", job_id, traceback.format_exc(limit=-8))
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return
