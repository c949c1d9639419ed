"""The PostgreSQL of the tests: POSTGRES_URL, or the local trust-auth server; None where none answers."""

from __future__ import annotations

import os

LOCAL = "postgresql://postgres@127.0.0.1:5432/test"


def plain_postgres_url() -> str | None:
    url = os.environ.get("POSTGRES_URL") or LOCAL
    try:
        import psycopg

        psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"), connect_timeout=2).close()
    except Exception:
        return None
    return url


class OwnPostgres:
    """A PostgreSQL cluster of the test's own (initdb in a temp dir, on a free port), which the test
    stops (``pg_ctl stop -m immediate``: as a crash would) and starts again on the same port. As root
    its programs run as the ``postgres`` user, which owns the directory."""

    def __init__(self, port: int) -> None:
        import glob
        import shutil
        import tempfile

        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        initdb = found[-1] if found else shutil.which("initdb")
        if initdb is None:
            import pytest

            pytest.skip("PostgreSQL's server programs are missing (scripts/test installs them)")
        self.bin = os.path.dirname(initdb)
        self.port = port
        self.url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
        # Not under pytest's tmp_path: the postgres user must be able to reach it.
        self.dir = tempfile.mkdtemp(prefix="cfy-pg-", dir="/tmp")
        self.data = os.path.join(self.dir, "data")
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            shutil.chown(self.dir, "postgres", "postgres")
        self._run("initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")

    def _run(self, tool: str, *args: str) -> None:
        import subprocess

        cmd = [os.path.join(self.bin, tool), *args]
        if self._as_postgres:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)

    def start(self) -> None:
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        log = os.path.join(self.dir, "log")
        self._run("pg_ctl", "-D", self.data, "-l", log, "-o", options, "-w", "start")

    def stop(self, mode: str = "immediate") -> None:
        self._run("pg_ctl", "-D", self.data, "-m", mode, "-w", "stop")

    def close(self) -> None:
        import contextlib
        import shutil
        import subprocess

        with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
            self.stop("fast")
        shutil.rmtree(self.dir, ignore_errors=True)
