"""The bot worker processes' lifecycle: launched, watched, cut at the time cap, reaped.

Each worker takes one decision at a time. Nothing waits on a worker: the event loop reads its pipe
when it is readable (``add_reader``) and notices its death by its sentinel. A worker that has not
answered ``time_cap`` seconds after it was sent a job is killed (SIGKILL) and replaced, and the job
ends with None (the seat takes its timeout action); so does the job of a worker that died on its own
(a crash, the OOM killer), logged in one line. What a reply means for its decision is the pool's
(:class:`Listener`).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import pickle
import time
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Protocol

from conflictology.server.botjobs import Job, PoolCounts
from conflictology.server.botworker import worker_context, worker_main

log = logging.getLogger("conflictology.server")

# How long the first workers may take to start (the fork server imports the bots and every game
# once, about 1-2 s on a loaded 2-core machine) before decisions fall back to the server process.
BOOT_SECONDS = 30.0
# A worker that fails to start is tried again after this long.
RETRY_SECONDS = 2.0


class Listener(Protocol):
    """What the processes tell the pool."""

    def worker_ready(self) -> None:
        """A worker is ready for a job."""

    def answered(self, job: Job, kind: str, payload: object, took: float) -> None:
        """A worker answered ``job`` (``kind`` "done", "unknown" or "error") after ``took`` seconds;
        it is free again."""

    def boot_failed(self) -> None:
        """No worker became ready within :data:`BOOT_SECONDS`."""


class Sent(enum.Enum):
    """How sending a job to a worker went."""

    SENT = "sent"
    UNSENDABLE = "unsendable"  # the job does not pickle (a game's bug): the worker is fine
    WORKER_LOST = "worker lost"  # the worker died between two decisions: the job was not taken


@dataclass(eq=False)
class Worker:
    """One worker process and the server's end of its pipe."""

    process: BaseProcess
    conn: Connection
    ready: bool = False
    job: Job | None = None
    started: float = 0.0  # loop time the current job was sent
    cap: asyncio.TimerHandle | None = None
    gone: bool = False  # killed or found dead: no longer in the pool

    @property
    def idle(self) -> bool:
        return self.ready and self.job is None and not self.gone


class WorkerProcesses:
    def __init__(
        self, size: int, time_cap: float, setup: Sequence[str], counts: PoolCounts, listener: Listener
    ) -> None:
        self.size = size
        self.time_cap = time_cap
        self.setup = list(setup)
        self.counts = counts
        self.listener = listener
        self.workers: list[Worker] = []
        self.ever_ready = False
        self._started = False
        self._stopped = False
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self) -> None:
        """Launch the workers (once: with the first decision that needs them)."""
        if self._started or self._stopped:
            return
        self._started = True
        for _ in range(self.size):
            self._launch()
        self._spawn_task(self._watch_boot())

    def any_idle(self) -> bool:
        return any(w.idle for w in self.workers)

    def busy(self) -> int:
        return sum(1 for w in self.workers if w.job is not None)

    # ---- a job to a worker -----------------------------------------------------------------------

    def send(self, worker: Worker, job: Job) -> Sent:
        try:
            worker.conn.send(job.message())
        except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
            return Sent.UNSENDABLE
        except (OSError, ValueError):
            self._lost(worker, "its pipe is closed")
            return Sent.WORKER_LOST
        loop = asyncio.get_running_loop()
        worker.job, worker.started = job, loop.time()
        worker.cap = loop.call_later(self.time_cap, self._over_cap, worker)
        self.counts.sent += 1
        if not job.mystery:
            # A mystery seat's decisions count as sent only: by kind or level they would name it.
            self.counts.searches += job.search
            self.counts.by_level[job.level] = self.counts.by_level.get(job.level, 0) + 1
        return Sent.SENT

    def _readable(self, worker: Worker) -> None:
        try:
            message: tuple[object, ...] = worker.conn.recv()
        except (EOFError, OSError):
            self._lost(worker, "its pipe closed")
            return
        kind = message[0]
        if kind == "ready":
            worker.ready = True
            self.ever_ready = True
            self.listener.worker_ready()
            return
        job = worker.job
        if job is None or message[1] != job.id:
            return
        worker.job = None
        if worker.cap is not None:
            worker.cap.cancel()
            worker.cap = None
        self.counts.answered += 1
        took = asyncio.get_running_loop().time() - worker.started
        self.listener.answered(job, str(kind), message[2] if len(message) > 2 else None, took)

    # ---- starting --------------------------------------------------------------------------------

    def _spawn_task(self, coro: Coroutine[object, object, None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _watch_boot(self) -> None:
        await asyncio.sleep(BOOT_SECONDS)
        if self.ever_ready or self._stopped:
            return
        log.error(
            "no bot worker started in %.0f s; bots decide in the server process (docs/bots.md)", BOOT_SECONDS
        )
        self.listener.boot_failed()

    def _launch(self, delay: float = 0.0) -> None:
        self._spawn_task(self._launch_one(delay))

    async def _launch_one(self, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        if self._stopped:
            return
        context = worker_context()
        parent, child = context.Pipe()
        process = context.Process(
            target=worker_main, args=(child, self.setup), name="conflictology-bot-worker", daemon=True
        )
        # Starting blocks until the fork server has forked (and, the first time, imported
        # everything): in a thread, not on the loop.
        starting = asyncio.ensure_future(asyncio.to_thread(process.start))
        try:
            await asyncio.shield(starting)
        except asyncio.CancelledError:
            # The pool stops. The thread still needs the child's end of the pipe (it passes it to
            # the fork server): everything is closed, and a process started after all killed, then.
            def abandon(_started: object) -> None:
                _kill(process)
                child.close()
                parent.close()

            starting.add_done_callback(abandon)
            raise
        except Exception:
            child.close()
            parent.close()
            log.exception("could not start a bot worker; trying again in %.0f s", RETRY_SECONDS)
            if not self._stopped:
                self._launch(RETRY_SECONDS)
            return
        child.close()  # the worker's end: the worker's pipe closes when the worker dies
        if self._stopped:
            _kill(process)
            parent.close()
            return
        self.counts.started += 1
        worker = Worker(process, parent)
        self.workers.append(worker)
        loop = asyncio.get_running_loop()
        loop.add_reader(parent.fileno(), self._readable, worker)
        loop.add_reader(process.sentinel, self._exited, worker)

    # ---- ending ----------------------------------------------------------------------------------

    def _over_cap(self, worker: Worker) -> None:
        job = worker.job
        if job is None or worker.gone:
            return
        self.counts.over_cap += 1
        self.counts.fell_back("time_cap")
        log.warning(
            "bot %s in %s did not answer in %.1f s: worker %s killed and replaced; the seat takes its "
            "timeout action",
            job.level,
            job.where,
            self.time_cap,
            worker.process.pid,
        )
        self._retire(worker)
        if not job.future.done():
            job.future.set_result(None)
        self._launch()

    def _exited(self, worker: Worker) -> None:
        self._lost(worker, "it exited")

    def _lost(self, worker: Worker, why: str) -> None:
        """A worker died on its own (not killed by the pool)."""
        if worker.gone:
            return
        job = worker.job
        code = worker.process.exitcode
        self._retire(worker)
        if self._stopped:
            return
        self.counts.crashed += 1
        if job is not None and not job.future.done():
            log.error(
                "bot worker %s died (%s, exit code %s) deciding for bot %s in %s; replaced, and the seat "
                "takes its timeout action",
                worker.process.pid,
                why,
                code,
                job.level,
                job.where,
            )
            self.counts.fell_back("worker_lost")
            job.future.set_result(None)
        else:
            log.error("bot worker %s died (%s, exit code %s); replaced", worker.process.pid, why, code)
        self._launch()

    def _retire(self, worker: Worker, reap: bool = True) -> None:
        """Take a worker out of the pool, kill it and close its pipe (without waiting for it)."""
        worker.gone = True
        if worker.cap is not None:
            worker.cap.cancel()
            worker.cap = None
        with contextlib.suppress(ValueError):
            self.workers.remove(worker)
        loop = asyncio.get_running_loop()
        with contextlib.suppress(Exception):
            loop.remove_reader(worker.conn.fileno())
        with contextlib.suppress(Exception):
            loop.remove_reader(worker.process.sentinel)
        _kill(worker.process)
        worker.conn.close()
        if reap:
            # Its exit status is collected (and its last file descriptors closed) once it is gone.
            with contextlib.suppress(Exception):
                loop.add_reader(worker.process.sentinel, self._reap, worker.process)

    def _reap(self, process: BaseProcess) -> None:
        loop = asyncio.get_running_loop()
        with contextlib.suppress(Exception):
            loop.remove_reader(process.sentinel)
        with contextlib.suppress(Exception):
            process.join(0)
            process.close()

    async def stop(self) -> None:
        """Withdraw the jobs under way and kill every worker; returns within a second."""
        self._stopped = True
        workers = list(self.workers)
        for worker in workers:
            if worker.job is not None:
                worker.job.future.cancel()
            self._retire(worker, reap=False)
        for task in list(self._tasks):
            task.cancel()
        if workers:
            await asyncio.to_thread(_wait_gone, [w.process for w in workers], 1.0)


def _kill(process: BaseProcess) -> None:
    with contextlib.suppress(Exception):
        process.kill()


def _wait_gone(processes: list[BaseProcess], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for process in processes:
        with contextlib.suppress(Exception):
            process.join(max(0.0, deadline - time.monotonic()))
            process.close()
