"""The TLS front, tested without containers (issue 14): nginx from Debian's packages with a
self-signed certificate, running the project's own deploy/nginx.conf (only its listening ports and
the upstream list put in), in front of two server processes sharing Redis. A game in Chromium over
https/wss through it; each real client counted apart; a forged X-Forwarded-For changes nothing; the
Host and Origin checks with the public host name."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Playwright, expect

from browser_helpers import (
    CHROMIUM_ARGS,
    Seen,
    capitol_step,
    create_room,
    launch_args,
    play_until_over,
    watch_errors,
)
from redis_helpers import clear_prefix, new_prefix, redis_server
from server_helpers import ServerProcess, free_port

pytestmark = [pytest.mark.browser, pytest.mark.redis]

ROOT = Path(__file__).resolve().parents[2]
PUBLIC_HOST = "play.test"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def self_signed(directory: Path, host: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
         "-subj", f"/CN={host}", "-addext", f"subjectAltName=DNS:{host}",
         "-keyout", str(directory / "privkey.pem"), "-out", str(directory / "fullchain.pem")],
        check=True, capture_output=True,
    )  # fmt: skip


def front_config(directory: Path, https: int, http: int, upstreams: list[str]) -> Path:
    """deploy/nginx.conf as it is, but for where it listens (loopback, free ports) and which server
    processes it sends to (the file it includes)."""
    text = (ROOT / "deploy" / "nginx.conf").read_text()
    text = re.sub(r"^\s*listen \[::\]:\d+.*\n", "", text, flags=re.M)
    text = re.sub(r"listen 443 ssl;", f"listen 127.0.0.1:{https} ssl;", text)
    text = re.sub(r"listen 80;", f"listen 127.0.0.1:{http};", text)
    assert f"127.0.0.1:{https} ssl" in text and f"127.0.0.1:{http};" in text
    (directory / "conflictology-upstreams.conf").write_text("".join(f"server {u};\n" for u in upstreams))
    conf = directory / "nginx.conf"
    conf.write_text(text)
    return conf


@dataclass
class Front:
    url: str  # https://play.test:PORT, what players open
    https_port: int
    servers: list[ServerProcess]

    def client(self, source: str) -> httpx.Client:
        """A client of the front from its own loopback address (a player somewhere else)."""
        transport = httpx.HTTPTransport(local_address=source, verify=False)
        return httpx.Client(
            base_url=f"https://127.0.0.1:{self.https_port}",
            headers={"Host": f"{PUBLIC_HOST}:{self.https_port}"},
            transport=transport,
            timeout=10,
        )


@pytest.fixture(scope="module")
def front(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Front]:
    tmp = tmp_path_factory.mktemp("front")
    https, http = free_port(), free_port()
    public = f"https://{PUBLIC_HOST}:{https}"
    with redis_server(tmp) as redis_url:
        prefix = new_prefix()
        db = f"sqlite:///{tmp / 'archive.sqlite3'}"
        args = ("--redis", redis_url, "--redis-prefix", prefix, "--proxy-headers", "--forwarded-allow-ips",
                "127.0.0.1", "--public-url", public, "--bot-delay", "0.05")  # fmt: skip
        servers = [ServerProcess(db, None, *args), ServerProcess(db, None, *args)]
        self_signed(tmp / "certs", PUBLIC_HOST)
        conf = front_config(tmp, https, http, [f"127.0.0.1:{s.port}" for s in servers])
        nginx = subprocess.Popen(
            [NGINX, "-p", str(tmp), "-c", str(conf), "-g", "daemon off;"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            front = Front(public, https, servers)
            deadline = time.time() + 120  # a loaded machine starts nginx slowly
            while True:
                try:
                    with front.client("127.0.0.1") as c:
                        if c.get("/healthz").status_code == 200:
                            break
                except httpx.HTTPError:
                    pass
                if nginx.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"nginx did not start: {nginx.stderr.read() if nginx.stderr else ''}")
                time.sleep(0.1)
            yield front
        finally:
            nginx.terminate()
            nginx.wait(10)
            for s in servers:
                s.stop()
            clear_prefix(redis_url, prefix)


def test_a_game_in_chromium_over_https_and_wss_through_the_front(
    front: Front, playwright: Playwright, tmp_path: Path
) -> None:
    args = launch_args({})
    args["args"] = [*CHROMIUM_ARGS, f"--host-resolver-rules=MAP {PUBLIC_HOST} 127.0.0.1"]
    browser = playwright.chromium.launch(**args)
    try:
        context = browser.new_context(ignore_https_errors=True, viewport={"width": 1280, "height": 860})
        page = context.new_page()
        errors = watch_errors(page)
        create_room(page, front.url, "capitol", "Ana")
        # The share link is the public address, whatever address served the page.
        link = page.locator(".share .link").inner_text()
        assert link.startswith(f"{front.url}/?room=")
        page.locator("[data-k=bot-level]").select_option("random")
        page.click("[data-k=add-bot]")
        expect(page.locator(".seats .seat")).to_have_count(2)
        page.click("[data-k=start]")
        page.wait_for_selector(".capitol-table")
        seen = Seen()
        play_until_over([page], capitol_step, seen)
        assert seen.decisions >= 2  # (a game against one bot can be short; it was played to its end)
        expect(page.locator("[data-testid=end]")).to_be_visible()
        # Over TLS the server says so for good.
        hsts = page.evaluate("fetch('/api/info').then((r) => r.headers.get('strict-transport-security'))")
        assert hsts.startswith("max-age=")
        # The front's certificate is self-signed: the test's browser takes its pages anyway
        # (ignore_https_errors) but Chromium never loads a service worker's script over a certificate
        # error, and says so in the console. The client registers its worker as an extra and plays
        # without it (js/install.js), as this game did; with a real certificate the worker loads.
        worker_refused = "An SSL certificate error occurred when fetching the script."
        assert [e for e in errors if not e.endswith(worker_refused)] == [], errors
    finally:
        browser.close()


def test_each_real_client_is_counted_apart_and_forged_addresses_change_nothing(front: Front) -> None:
    # Wrong room codes are counted per client address: through the proxy, by the address it saw.
    with front.client("127.0.0.2") as ana, front.client("127.0.0.3") as ben:
        misses = [ana.get(f"/api/rooms/ZZZZZ{c}").status_code for c in "ABCDEFGHJKLM"]
        assert misses[:10] == [404] * 10 and misses[-1] == 429
        # Ana cannot pass as someone else: the proxy replaces what she claims.
        forged = ana.get("/api/rooms/ZZZZZW", headers={"X-Forwarded-For": "203.0.113.7"})
        assert forged.status_code == 429
        # Ben, behind the same proxy, has his own budget.
        assert ben.get("/api/rooms/ZZZZZW").status_code == 404
    # Straight to a server process from an address that is not the trusted proxy: X-Forwarded-For
    # is not believed, so a forged one is no way around the limit either.
    server = front.servers[0]
    transport = httpx.HTTPTransport(local_address="127.0.0.4")
    with httpx.Client(base_url=server.url, transport=transport, timeout=10) as direct:
        statuses = [
            direct.get(f"/api/rooms/ZZZZZ{c}", headers={"X-Forwarded-For": f"198.51.100.{i}"}).status_code
            for i, c in enumerate("ABCDEFGHJKLM")
        ]
        assert statuses[:10] == [404] * 10 and statuses[-1] == 429


def test_the_public_host_name_and_origin_are_the_ones_answered(front: Front) -> None:
    with front.client("127.0.0.5") as c:
        assert c.get("/api/info").status_code == 200
        made = c.post("/api/rooms", json={"game": "capitol", "name": "Ana"}, headers={"Origin": front.url})
        assert made.status_code == 201
        assert made.headers["access-control-allow-origin"] == front.url
        evil = c.post(
            "/api/rooms", json={"game": "capitol", "name": "x"}, headers={"Origin": "https://evil.example"}
        )
        assert evil.status_code == 403 and evil.json()["code"] == "origin_refused"
        rebound = c.get("/api/info", headers={"Host": "evil.example"})
        assert rebound.status_code == 400 and rebound.json()["code"] == "bad_host"
        assert c.get("/api/info").json()["public_url"] == front.url
