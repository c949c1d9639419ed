"""Issue 31: the database (PostgreSQL, the archive) stopped as a crash would stop it while rooms play
to their end and rematch, with or without ``--redis``; then started again. How many of the games that
ended meanwhile are archived afterwards (and how many twice), and what /healthz said meanwhile.

The attack runs a PostgreSQL of its own (initdb in a temp dir, on 127.0.0.1 and a free port; as
root its programs run as the ``postgres`` user) and a server of its own on it: the run's probe keeps
playing against the run's SQLite server, untouched.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.attacks.clients import Player, auto_rematch, start_table
from benchmarks.attacks.common import AttackError, free_port, log
from benchmarks.attacks.context import Ctx, Row
from benchmarks.attacks.servers import ServerProc


class PostgresProc:
    """initdb, pg_ctl start / stop -m immediate (a crash, for the server) / start on the same port."""

    def __init__(self) -> None:
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        initdb = found[-1] if found else shutil.which("initdb")
        if initdb is None:
            raise AttackError("PostgreSQL's server programs (initdb, pg_ctl) are not installed")
        self.bin = os.path.dirname(initdb)
        self.port = free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self.dir = tempfile.mkdtemp(prefix="cfy-attack-pg-", dir="/tmp")
        self.data = os.path.join(self.dir, "data")
        self.as_postgres = os.geteuid() == 0
        if self.as_postgres:
            shutil.chown(self.dir, "postgres", "postgres")
        self._run("initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")

    def _run(self, tool: str, *args: str) -> None:
        cmd = [os.path.join(self.bin, tool), *args]
        if self.as_postgres:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)

    async def start(self) -> None:
        opts = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1"
        log_file = os.path.join(self.dir, "log")
        args = ("-D", self.data, "-l", log_file, "-o", opts, "-w", "start")
        await asyncio.to_thread(self._run, "pg_ctl", *args)

    async def stop(self, mode: str = "immediate") -> None:
        await asyncio.to_thread(self._run, "pg_ctl", "-D", self.data, "-m", mode, "-w", "stop")

    def close(self) -> None:
        with contextlib.suppress(subprocess.SubprocessError):
            self._run("pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")
        shutil.rmtree(self.dir, ignore_errors=True)

    def archived(self, game_ids: list[str]) -> dict[str, int]:
        import psycopg

        with psycopg.connect(self.url, connect_timeout=3) as conn:
            rows = conn.execute(
                "select id, count(*) from conflictology_games where id = any(%s) group by id", (game_ids,)
            ).fetchall()
        return {row[0]: int(row[1]) for row in rows}


class PostgresServer(ServerProc):
    """The run's server command, with the archive in this attack's PostgreSQL."""

    def __init__(self, workdir: Path, db_url: str, src: str | None, serve_args: list[str], redis: str | None):
        super().__init__(workdir, src, serve_args, redis)
        self.db_url = db_url

    def command(self) -> list[str]:
        cmd = super().command()
        cmd[cmd.index("--db") + 1] = self.db_url
        return cmd


async def attack_db_outage(ctx: Ctx) -> Row:
    outage = ctx.args.outage
    pg = PostgresProc()
    workdir = ctx.server.workdir / "db-outage"
    workdir.mkdir(parents=True, exist_ok=True)
    redis_url = ctx.redis.url if ctx.redis else None
    # Quick bots: many games end within the outage.
    serve_args = ["--bot-delay", "0.02", *ctx.args.serve_args.split()]
    server = PostgresServer(workdir, pg.url, ctx.args.server_src, serve_args, redis_url)
    sub: Ctx | None = None
    ended: dict[str, float] = {}  # game id → when its end reached a player (monotonic)

    def on_over_of(rematch: Any) -> Any:
        def on_over(player: Player, msg: dict[str, Any]) -> None:
            game_id = (msg.get("room") or {}).get("game_id")
            if game_id and game_id not in ended:
                ended[game_id] = time.monotonic()
            rematch(player, msg)

        return on_over

    try:
        await pg.start()
        await server.start()
        sub = Ctx(ctx.args, server, ctx.redis, None)
        for i in range(ctx.args.outage_rooms):
            t = await sub.table(humans=1, bots=1, level="random", settings={"public": True})
            await start_table(sub.pool, t)
            sub.player(t.code, t.tokens[0], local=t.homes[0], think=0.02, seed=i,
                       on_over=on_over_of(auto_rematch(sub.pool, t)))  # fmt: skip
        await asyncio.sleep(3.0)
        log(f"  db-outage: {ctx.args.outage_rooms} rooms playing; PostgreSQL stops for {outage:g} s")
        stop = asyncio.Event()
        latencies: list[float] = []
        async with ctx.measuring():
            await pg.stop("immediate")
            t_down = time.monotonic()
            health_task = asyncio.ensure_future(sub.healthz(stop, 0.5, latencies))
            await asyncio.sleep(outage)
            stop.set()
            bodies: Counter[str] = await health_task
            await pg.start()
            t_back = time.monotonic()
        during = [g for g, at in ended.items() if t_down <= at < t_back]
        # Every game that ended during the outage, archived: waited for (bounded).
        counts: dict[str, int] = {}
        written_after = float("nan")
        while time.monotonic() - t_back < 30.0:
            with contextlib.suppress(Exception):
                counts = await asyncio.to_thread(pg.archived, during)
            if len(counts) == len(during):
                written_after = time.monotonic() - t_back
                break
            await asyncio.sleep(0.2)
        lost = len(during) - len(counts)
        twice = sum(1 for n in counts.values() if n > 1)
        failing = sum(n for body, n in bodies.items() if '"database":"failing"' in body.replace(" ", ""))
        waiting = [int(m) for body in bodies for m in re.findall(r'"waiting":\s*(\d+)', body)]
        gave_up = server.logs().count("gave up archiving")
        return Row(
            "db-outage",
            attempts=len(during),
            notes=(
                f"PostgreSQL down {t_back - t_down:.1f} s{' with --redis' if ctx.redis else ''}, "
                f"{ctx.args.outage_rooms} rooms playing: {len(during)} games ended meanwhile, {lost} never "
                f"archived (checked for 30 s), {twice} archived twice, all written {written_after:.1f} s "
                f"after it was back; /healthz 'database: failing' {failing}/{sum(bodies.values())} polls"
                f"{f', most waiting {max(waiting)}' if waiting else ''}; "
                f"'gave up archiving' log lines {gave_up}"
            ),
            figures={"during": len(during), "lost": lost, "twice": twice, "written_after_s": written_after,
                     "healthz": dict(bodies), "gave_up": gave_up},
        )  # fmt: skip
    finally:
        if sub is not None:
            await sub.close()
        await server.stop()
        pg.close()
