"""The container image and the compose file (issue 14).

The image is built and run with Debian's podman: no image registry is reachable from these machines,
so its base is made from Debian's own packages (mmdebstrap: Debian's Python 3.11 and pip), passed to
the project's unchanged Dockerfile as ``PYTHON_IMAGE``. The sandbox needs two settings: no default
ulimits (it may not raise them) and runc (crun refuses its hybrid cgroups). The compose file needs
images from a registry and cannot run here: it is checked against the project instead (every
variable a real ``serve`` flag, every upstream a service, every mount a file of deploy/)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from conflictology.server.cli import env_name
from server_helpers import free_port

ROOT = Path(__file__).resolve().parents[2]
BASE = "localhost/conflictology-test-base:bookworm"
IMAGE = "localhost/conflictology:test"


def serve_flags() -> set[str]:
    from typer.testing import CliRunner

    from conflictology.cli import app

    text = CliRunner().invoke(app, ["serve", "--help"], env={"COLUMNS": "250"}).output
    return set(re.findall(r"CONFLICTOLOGY_[A-Z_]+", text))


def test_the_compose_file_names_only_real_flags_services_and_files() -> None:
    compose = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())
    services = compose["services"]
    assert {"server1", "server2", "redis", "postgres", "front"} <= set(services)
    known = serve_flags()
    for name in ("server1", "server2"):
        env = services[name]["environment"]
        assert set(env) <= known, set(env) - known
        assert env[env_name("--proxy-headers")] == "true" and env_name("--public-url") in env
        assert services[name]["build"]["context"] == ".."
    # Redis keeps every change on disk before it answers (a move a player saw survives Redis dying).
    redis_command = services["redis"]["command"]
    assert (
        "--appendonly" in redis_command
        and redis_command[redis_command.index("--appendfsync") + 1] == "always"
    )
    # The front runs deploy/nginx.conf, which sends to exactly the compose file's servers.
    mounts = services["front"]["volumes"]
    assert "./nginx.conf:/etc/nginx/nginx.conf:ro" in mounts
    upstreams = (ROOT / "deploy" / "conflictology-upstreams.conf").read_text()
    assert sorted(re.findall(r"^server (\w+):8000;", upstreams, re.M)) == ["server1", "server2"]
    for mount in mounts:
        source = mount.split(":")[0]
        if source.startswith("./"):
            assert (ROOT / "deploy" / source[2:]).is_file(), mount
    assert {"redis", "postgres", "certs"} <= set(compose["volumes"])


def podman(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    conf = Path(os.environ.get("TMPDIR", "/tmp")) / "conflictology-containers.conf"
    conf.write_text("[containers]\ndefault_ulimits = []\n")
    env = dict(os.environ, CONTAINERS_CONF=str(conf))
    return subprocess.run(["podman", *args], env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    for tool in ("podman", "runc", "mmdebstrap"):
        assert shutil.which(tool), f"{tool} is not installed (scripts/test installs it)"
    if podman("image", "exists", BASE).returncode != 0:
        rootfs = tmp_path_factory.mktemp("rootfs") / "rootfs.tar"
        subprocess.run(
            ["mmdebstrap", "--variant=minbase", "--include=python3,python3-pip,python3-venv,ca-certificates",
             "bookworm", str(rootfs)],
            check=True, capture_output=True, timeout=900,
        )  # fmt: skip
        imported = podman("import", str(rootfs), BASE)
        assert imported.returncode == 0, imported.stderr
    # This machine reaches PyPI through a proxy whose certificate its own bundle trusts: the build
    # borrows the bundle (a build elsewhere needs nothing of the kind).
    built = podman(
        "build", "--format", "docker", "--runtime", "runc", "--network", "host",
        "-v", "/etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro",
        "--build-arg", f"PYTHON_IMAGE={BASE}", "-t", IMAGE, str(ROOT), timeout=1200,
    )  # fmt: skip
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    yield IMAGE


def test_the_image_serves_on_port_as_a_user_and_stops_promptly(image: str) -> None:
    port = free_port()
    name = f"cfy-test-{port}"
    started = podman(
        "run", "-d", "--name", name, "--runtime", "runc", "--network", "host", "-e", f"PORT={port}",
        "-e", "CONFLICTOLOGY_BOT_DELAY=0.2", image,
    )  # fmt: skip
    assert started.returncode == 0, started.stderr
    try:
        deadline = time.time() + 60
        while True:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
                break
            except httpx.HTTPError:
                assert time.time() < deadline, podman("logs", name).stderr
                time.sleep(0.3)
        assert health.json()["status"] == "ok"
        made = httpx.post(f"http://127.0.0.1:{port}/api/rooms", json={"game": "capitol", "name": "Ana"})
        assert made.status_code == 201
        assert podman("exec", name, "id", "-u").stdout.strip() == "10001"  # not root
        # The image compiled the rules in its build stage (docs/architecture.md, "The compiled rules").
        check = podman("exec", name, "conflictology", "serve", "--check")
        assert "rules: compiled" in check.stdout, check.stdout[-2000:] + check.stderr[-2000:]
        # The image's own HEALTHCHECK passes (and the SQLite file is in the /data volume).
        healthy = podman("healthcheck", "run", name)
        assert healthy.returncode == 0, healthy.stdout + healthy.stderr
        assert "conflictology.sqlite3" in podman("exec", name, "find", "/data", "-name", "*.sqlite3").stdout
        began = time.monotonic()
        stopped = podman("stop", "-t", "10", name)
        assert stopped.returncode == 0 and time.monotonic() - began < 10
    finally:
        podman("rm", "-f", name)
