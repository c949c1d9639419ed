"""A Redis for the tests: ``REDIS_URL`` when it is set and answers, else a private
``redis-server`` on a free loopback port (no persistence), stopped by its pid at the end
(testing-recipes.md). Every test uses its own key prefix, so a shared Redis is never disturbed."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import redis

from server_helpers import free_port


def _answers(url: str) -> bool:
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)
        client.ping()
        client.close()
    except (redis.RedisError, ValueError):
        return False
    return True


@contextlib.contextmanager
def redis_server(workdir: Path) -> Iterator[str]:
    url = os.environ.get("REDIS_URL")
    if url and _answers(url):
        yield url
        return
    exe = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not Path(exe).exists():
        raise RuntimeError(
            "redis-server is not installed (scripts/test installs it) and REDIS_URL is not set"
        )
    port = free_port()
    proc = subprocess.Popen(
        [
            exe,
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(workdir),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        deadline = time.time() + 60  # a loaded machine starts it slowly
        while not _answers(url):
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("could not start redis-server")
            time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def new_prefix() -> str:
    return f"test{uuid.uuid4().hex[:10]}:"


def clear_prefix(url: str, prefix: str) -> None:
    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()
