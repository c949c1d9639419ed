"""A proxy that APPENDS to X-Forwarded-For (issue 25): Debian's nginx with
``proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for`` (what most PaaS routers do) in front
of a server trusting it, by its address or by ``'*'``. A client sending forged X-Forwarded-For values
through it gets exactly the room-creation quota and code-guess budget of a direct client."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from server_helpers import ServerProcess, free_port

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
ROOMS_BURST = 20  # ServerConfig.rooms_burst
GUESSES = 10  # ServerConfig.room_guess_burst

pytestmark = pytest.mark.skipif(not Path(NGINX).exists(), reason="needs Debian's nginx")


def appending_config(directory: Path, port: int, upstream: str) -> Path:
    conf = directory / "nginx.conf"
    conf.write_text(f"""
error_log stderr warn;
pid {directory}/nginx.pid;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {directory}/body;
    proxy_temp_path {directory}/proxy;
    fastcgi_temp_path {directory}/fastcgi;
    uwsgi_temp_path {directory}/uwsgi;
    scgi_temp_path {directory}/scgi;
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://{upstream};
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        }}
    }}
}}
""")
    return conf


@pytest.fixture(params=["127.0.0.1", "*"], ids=["trusted-address", "star"])
def front(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, ServerProcess, str]]:
    server = ServerProcess(f"sqlite:///{tmp_path / 'a.sqlite3'}", None, "--proxy-headers",
                           "--forwarded-allow-ips", request.param)  # fmt: skip
    port = free_port()
    nginx = subprocess.Popen(
        [NGINX, "-p", str(tmp_path), "-c", str(appending_config(tmp_path, port, f"127.0.0.1:{server.port}")),
         "-g", "daemon off;"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 120  # a loaded machine starts nginx slowly
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if nginx.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"nginx did not start: {nginx.stderr.read() if nginx.stderr else ''}")
            time.sleep(0.1)
        yield url, server, request.param
    finally:
        nginx.terminate()
        nginx.wait(10)
        server.stop()


def client(url: str, source: str) -> httpx.Client:
    return httpx.Client(base_url=url, transport=httpx.HTTPTransport(local_address=source), timeout=10)


def made_rooms(c: httpx.Client, forge: bool) -> list[int]:
    statuses = []
    for i in range(ROOMS_BURST + 5):
        headers = {"X-Forwarded-For": f"198.51.100.{i}" if i % 2 else f"junk{i}"} if forge else {}
        statuses.append(
            c.post("/api/rooms", json={"game": "capitol", "name": "Ana"}, headers=headers).status_code
        )
    return statuses


def test_forged_addresses_through_an_appending_proxy_get_a_direct_clients_quota(
    front: tuple[str, ServerProcess, str],
) -> None:
    url, server, trusted = front
    with client(url, "127.0.0.2") as forger, client(url, "127.0.0.3") as honest:
        forged = made_rooms(forger, forge=True)
        assert forged.count(201) == ROOMS_BURST and forged[-1] == 429
        # Another client behind the same proxy keeps its own quota.
        assert made_rooms(honest, forge=False).count(201) == ROOMS_BURST
        guesses = [
            forger.get(f"/api/rooms/ZZZZZ{c}", headers={"X-Forwarded-For": f"203.0.113.{n}"}).status_code
            for n, c in enumerate("ABCDEFGHJKLM")
        ]
        assert guesses[:GUESSES] == [404] * GUESSES and guesses[-1] == 429
    if trusted == "*":
        return  # ('*' takes every peer for a proxy: it is for a server only the platform can reach)
    # Straight to the server from an address it does not trust: X-Forwarded-For is not read.
    with client(server.url, "127.0.0.4") as direct:
        statuses = made_rooms(direct, forge=True)
        assert statuses.count(201) == ROOMS_BURST
