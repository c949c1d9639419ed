"""Issue 27, the app on the phone: the web app manifest and icons, the service worker that keeps the
client for offline use, and the reload that takes a newer client — each checked in Debian's Chromium
against a real server, under the server's own Content-Security-Policy (no context here bypasses it).

Chromium's own installability check (CDP ``Page.getInstallabilityErrors``) is asked in a profile on
disk (in an incognito-like context it answers ``in-incognito`` whatever the page does)."""

from __future__ import annotations

import contextlib
import json
import shutil
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, Route, expect

from browser_helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    WebServer,
    free_port,
    patient_expectations,
    run_server,
    watch_errors,
)
from conflictology.server.config import WEB_DIR
from conflictology.server.webclient import WebClient

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
PNG = b"\x89PNG\r\n\x1a\n"
# Every cache the page's origin holds: {cache name: [url, ...]}.
CACHED = """async () => {
  const out = {};
  for (const name of await caches.keys()) {
    out[name] = (await (await caches.open(name)).keys()).map((r) => r.url);
  }
  return out;
}"""
CACHED_TEXT = "async (path) => { const r = await caches.match(path); return r ? r.text() : null; }"
PAGE_VERSION = "async () => (await import('/js/version.js')).CLIENT_VERSION"
# Waits (polling, for up to 60 s) until the origin's caches are `name` alone; returns their names.
ONLY_CACHE = """async (name) => {
  const until = Date.now() + 60000;
  for (;;) {
    const names = await caches.keys();
    if ((names.length === 1 && names[0] === name) || Date.now() > until) return names;
    await new Promise((resolve) => { setTimeout(resolve, 100); });
  }
}"""
NOT_THE_CLIENTS = ("/api", "/ws", "/metrics", "/replay/", "/healthz")


def version_module(version: str) -> str:
    return f"export const CLIENT_VERSION = {json.dumps(version)};\n"


@pytest.fixture(autouse=True, scope="module")
def patient() -> Iterator[None]:
    with patient_expectations():
        yield


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    with run_server(tmp_path_factory.mktemp("pwa")) as running:
        yield running


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG, "not a PNG"
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk comes first
    return width, height


def controlled(page: Page, base: str) -> None:
    """Wait until the worker is active and controls the page (it claims the page that registered it)."""
    scope = page.evaluate("navigator.serviceWorker.ready.then((r) => r.scope)")
    assert scope == base + "/"
    # A function, not an expression string: that one needs an eval, which the page's CSP refuses.
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    assert page.evaluate("navigator.serviceWorker.controller.scriptURL") == base + "/sw.js"


def info_version(base: str) -> str:
    version = httpx.get(base + "/api/info", timeout=10).json()["client_version"]
    assert isinstance(version, str) and version
    return version


# A server on a web dir of the test's own (the real one is never changed): the app as `serve` makes it.
LAUNCHER = """
import sys
from pathlib import Path
import uvicorn
from conflictology.server.app import create_app
from conflictology.server.config import ServerConfig
web, db, port = sys.argv[1:4]
config = ServerConfig(web_dir=Path(web), db_url=db, bot_delay=0.05)
uvicorn.run(create_app(config), host="127.0.0.1", port=int(port), log_level="warning")
"""


@contextlib.contextmanager
def serve_web_dir(web: Path, port: int, db_dir: Path) -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER, str(web), f"sqlite:///{db_dir / 'pwa.sqlite3'}", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                raise RuntimeError(f"the server exited early: {err}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/healthz", timeout=10).status_code == 200:  # (1 s starved at load 50)
                    break
            if time.monotonic() > deadline:
                raise TimeoutError("the server did not become healthy")
            time.sleep(0.1)
        yield url
    finally:
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_the_app_is_installable(playwright: Playwright, server: WebServer, tmp_path: Path) -> None:
    """The manifest is linked from both pages, served as application/manifest+json with what an
    install needs, its icons load at the sizes it says; the worker registers from the root under the
    server's CSP; Chromium finds the page installable and the manifest without errors."""
    for page_path in ("/", "/replay/anything"):
        html = httpx.get(server.url + page_path, timeout=10).text
        assert '<link rel="manifest" href="/manifest.webmanifest">' in html, page_path
    r = httpx.get(server.url + "/manifest.webmanifest", timeout=10)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/manifest+json")
    manifest = json.loads(r.text)
    assert manifest["name"] == "Conflictology" and manifest["short_name"] == "Conflictology"
    assert (manifest["start_url"], manifest["scope"], manifest["display"]) == ("/", "/", "standalone")
    assert manifest["background_color"] == "#121829"  # style.css's --bg
    assert manifest["theme_color"] == "#141a2b"  # index.html's theme-color
    pngs = {}
    for icon in manifest["icons"]:
        got = httpx.get(server.url + icon["src"], timeout=10)
        assert got.status_code == 200, icon["src"]
        assert got.headers["content-type"] == icon["type"], icon["src"]
        if icon["type"] == "image/png":
            width, height = png_size(got.content)
            assert icon["sizes"] == f"{width}x{height}", icon["src"]
            assert len(got.content) < 20_000, icon["src"]
            pngs[(icon["purpose"], width)] = icon["src"]
    assert {("any", 192), ("any", 512), ("maskable", 512)} <= set(pngs)

    worker = httpx.get(server.url + "/sw.js", timeout=10)
    assert worker.headers["content-type"].startswith("text/javascript")
    assert worker.headers["cache-control"] == "no-cache"
    csp = worker.headers["content-security-policy"]
    assert "worker-src 'self'" in csp and "manifest-src 'self'" in csp and "script-src 'self'" in csp

    ctx = playwright.chromium.launch_persistent_context(
        str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS, viewport=PHONE
    )
    try:
        page = ctx.new_page()
        errors = watch_errors(page)  # a CSP refusal is a console error
        page.goto(server.url + "/")
        expect(page.locator("[data-k=game-capitol]")).to_be_attached()
        controlled(page, server.url)
        cdp = ctx.new_cdp_session(page)
        app_manifest = cdp.send("Page.getAppManifest")
        assert app_manifest["url"] == server.url + "/manifest.webmanifest"
        assert app_manifest["errors"] == []
        assert cdp.send("Page.getInstallabilityErrors")["installabilityErrors"] == []
        assert errors == [], errors
    finally:
        ctx.close()


def test_the_worker_keeps_the_client_and_nothing_else(browser: Browser, server: WebServer) -> None:
    """The worker controls the page after a reload; its one cache is named by the server's client
    version and holds exactly the client's files, even after the page has used the API and a socket."""
    ctx = browser.new_context(viewport=PHONE)  # type: ignore[arg-type]
    try:
        page = ctx.new_page()
        errors = watch_errors(page)
        page.goto(server.url + "/")
        expect(page.locator("[data-k=game-capitol]")).to_be_attached()
        controlled(page, server.url)
        page.reload()
        expect(page.locator("[data-k=game-capitol]")).to_be_attached()
        assert page.evaluate("navigator.serviceWorker.controller.scriptURL") == server.url + "/sw.js"
        version = info_version(server.url)
        assert page.evaluate(PAGE_VERSION) == version

        # The API, a room's socket and a seat's token at work under the worker.
        body = {"game": "capitol", "name": "Ana"}
        created = httpx.post(server.url + "/api/rooms", json=body, timeout=10).json()
        code = created["code"]
        page.goto(f"{server.url}/?room={code}&watch=1")
        expect(page.locator(".seats .seat")).to_have_count(1)
        expect(page.locator("#conn")).to_have_class("conn open")
        page.evaluate("fetch('/api/info').then((r) => r.json())")
        seat = "(t) => fetch('/api/rooms/' + t.code, {headers: {Authorization: 'Bearer ' + t.token}})"
        page.evaluate(seat, created)

        cached = page.evaluate(CACHED)
        assert list(cached) == [f"conflictology-client-{version}"]
        paths = [url.removeprefix(server.url) for url in cached[f"conflictology-client-{version}"]]
        assert sorted(paths) == sorted(WebClient.read(WEB_DIR).files)
        for path in paths:
            assert "?" not in path and not path.startswith(NOT_THE_CLIENTS), path
        assert {"/index.html", "/js/app.js", "/i18n/en.js", "/i18n/es.js", "/icons/app-192.png"} <= set(paths)
        assert "/sw.js" not in paths
        # What the page was given of its own version is what the cache holds.
        assert page.evaluate(CACHED_TEXT, "/js/version.js") == version_module(version)
        assert errors == [], errors
    finally:
        ctx.close()


def test_offline_the_home_screen_and_the_rules_open(browser: Browser, tmp_path: Path) -> None:
    """The server gone and the network off: a reload still opens the home screen (saying it cannot
    reach the server, with nothing to create) and the rules sheet of both games, in both languages."""
    ctx = browser.new_context(viewport=PHONE)  # type: ignore[arg-type]
    try:
        page = ctx.new_page()
        with run_server(tmp_path) as running:
            page.goto(running.url + "/")
            expect(page.locator("[data-k=game-capitol]")).to_be_attached()
            controlled(page, running.url)
            base = running.url
        ctx.set_offline(True)
        page.reload()
        expect(page.locator(".hero h1")).to_be_visible()
        expect(page.get_by_test_id("offline")).to_have_text(
            "No connection to the server: the games appear when it answers. The rules are under Rules."
        )
        expect(page.locator("[data-k=create]")).to_be_disabled()
        page.click("[data-k=rules]")
        dialog = page.locator("dialog#rules")
        expect(dialog).to_be_visible()
        tabs = dialog.locator("[role=tab]")
        expect(tabs).to_have_text(["Capitol", "Conspiranoicos"])
        expect(dialog.locator(".rules-body h2")).to_have_text("Capitol")
        expect(dialog.locator(".rules-body section").first).to_be_visible()
        tabs.nth(1).click()
        expect(dialog.locator(".rules-body h2")).to_have_text("Conspiranoicos")
        expect(dialog.locator(".rules-body li").first).to_be_visible()
        dialog.locator("button[aria-label=Close]").click()
        expect(dialog).to_be_hidden()

        # Another address of the app, and the other language: the same page, kept.
        page.goto(base + "/?lang=es")
        expect(page.get_by_test_id("offline")).to_contain_text("Sin conexión con el servidor")
        page.click("[data-k=rules]")
        expect(page.locator("dialog#rules [role=tab]")).to_have_count(2)
        expect(page.locator("dialog#rules .rules-body li").first).to_be_visible()
    finally:
        ctx.close()


def test_a_newer_client_on_the_server_is_taken_at_once(browser: Browser, tmp_path: Path) -> None:
    """The server restarted with a changed client: the open page, once the network is back, sees the
    new version in /api/info and reloads once into it; the worker keeps the new version's files only
    (the browser's older copy of a file the page never loaded is not taken for the new one), and
    they are what opens offline."""
    web = tmp_path / "web"
    shutil.copytree(WEB_DIR, web, ignore=shutil.ignore_patterns("__pycache__"))
    port = free_port()
    old_tagline = "Create a room, share the code, and play on your video call. Bots fill empty seats."
    new_tagline = "A newer client, taken at once."
    ctx = browser.new_context(viewport=PHONE)  # type: ignore[arg-type]
    try:
        page = ctx.new_page()
        with serve_web_dir(web, port, tmp_path) as base:
            page.goto(base + "/")
            expect(page.locator(".hero p").first).to_have_text(old_tagline)
            controlled(page, base)
            old = info_version(base)
            assert page.evaluate(PAGE_VERSION) == old
            assert page.evaluate(CACHED_TEXT, "/replay.css") is not None

        en = web / "i18n" / "en.js"
        text = en.read_text(encoding="utf-8")
        assert text.count(old_tagline) == 1
        en.write_text(text.replace(old_tagline, new_tagline), encoding="utf-8")
        with (web / "replay.css").open("a", encoding="utf-8") as css:
            css.write("/* the newer client's */\n")

        with serve_web_dir(web, port, tmp_path) as base:
            new = info_version(base)
            assert new != old
            # Still the old page until the network comes back (a phone waking up).
            expect(page.locator(".hero p").first).to_have_text(old_tagline)
            ctx.set_offline(True)
            ctx.set_offline(False)
            expect(page.locator(".hero p").first).to_have_text(new_tagline)
            assert page.evaluate(PAGE_VERSION) == new
            assert page.evaluate("performance.getEntriesByType('navigation')[0].type") == "reload"
            # (The mark of the reload is gone once the page and the server agree.)
            assert page.evaluate("sessionStorage.getItem('conflictology:reloaded-for')") is None
            # The new worker installed and the old version's cache gone.
            assert page.evaluate(ONLY_CACHE, f"conflictology-client-{new}") == [f"conflictology-client-{new}"]
            assert new_tagline in page.evaluate(CACHED_TEXT, "/i18n/en.js")
            assert page.evaluate(CACHED_TEXT, "/replay.css").endswith("/* the newer client's */\n")
            assert page.evaluate(CACHED_TEXT, "/js/version.js") == version_module(new)

        ctx.set_offline(True)
        page.reload()
        expect(page.locator(".hero p").first).to_have_text(new_tagline)
        expect(page.get_by_test_id("offline")).to_be_visible()
        assert page.evaluate(PAGE_VERSION) == new
    finally:
        ctx.close()


def test_a_seated_page_takes_the_newer_client_when_its_socket_comes_back(
    browser: Browser, tmp_path: Path
) -> None:
    """A server updated under a player in a room (a restart with a changed client, its rooms kept):
    the page's socket reconnects by itself, the page sees the new version and reloads into it, back
    in its seat: it never speaks to the newer server with the older client. No network event, no
    visit to the home screen: the reconnection alone asks."""
    web = tmp_path / "web"
    shutil.copytree(WEB_DIR, web, ignore=shutil.ignore_patterns("__pycache__"))
    port = free_port()
    old_start, new_start = "start: 'Start the game'", "start: 'Start the newer game'"
    ctx = browser.new_context(viewport=PHONE)  # type: ignore[arg-type]
    try:
        page = ctx.new_page()
        with serve_web_dir(web, port, tmp_path) as base:
            made = httpx.post(base + "/api/rooms", json={"game": "capitol", "name": "Ana"}, timeout=10).json()
            auth = {"Authorization": f"Bearer {made['token']}"}
            bots = httpx.post(f"{base}/api/rooms/{made['code']}/bots", json={}, headers=auth, timeout=10)
            assert bots.status_code == 201, bots.text
            page.goto(base + "/")
            seat = {"token": made["token"], "seat": 0, "name": "Ana"}
            page.evaluate("([k, v]) => localStorage.setItem(k, JSON.stringify(v))",
                          [f"conflictology:room:{made['code']}", seat])  # fmt: skip
            page.goto(f"{base}/?room={made['code']}")
            expect(page.locator("[data-k=start]")).to_have_text("Start the game")
            expect(page.locator("#conn")).to_have_class("conn open")
            old = page.evaluate(PAGE_VERSION)

        en = web / "i18n" / "en.js"
        text = en.read_text(encoding="utf-8")
        assert text.count(old_start) == 1
        en.write_text(text.replace(old_start, new_start), encoding="utf-8")
        with serve_web_dir(web, port, tmp_path) as base:
            new = info_version(base)
            assert new != old
            expect(page.locator("[data-k=start]")).to_have_text("Start the newer game")
            expect(page.locator(".lobby .code-big")).to_have_text(made["code"])
            expect(page.locator("#conn")).to_have_class("conn open")
            assert page.evaluate(PAGE_VERSION) == new
            assert page.evaluate("performance.getEntriesByType('navigation')[0].type") == "reload"
    finally:
        ctx.close()


def test_a_page_reloads_once_for_a_version_it_cannot_get(browser: Browser, server: WebServer) -> None:
    """Two processes of two versions behind one address (a rollout under way): the page reloads once
    for the version /api/info names, then stays and works with what it has."""
    ctx: BrowserContext = browser.new_context(viewport=PHONE, service_workers="block")  # type: ignore[arg-type]
    try:
        page = ctx.new_page()
        loads: list[str] = []
        page.on("load", lambda p: loads.append(p.url))

        def other_version(route: Route) -> None:
            response = route.fetch()
            body = response.json()
            body["client_version"] = "0.0.0+another"
            route.fulfill(response=response, json=body)

        page.route("**/api/info", other_version)
        page.goto(server.url + "/")
        expect(page.locator("[data-k=game-capitol]")).to_be_attached()
        assert page.evaluate("sessionStorage.getItem('conflictology:reloaded-for')") == "0.0.0+another"
        assert page.evaluate("performance.getEntriesByType('navigation')[0].type") == "reload"
        # Asked again (the network back), then a room made: still the same page, and it works.
        with page.expect_response("**/api/info"):
            ctx.set_offline(True)
            ctx.set_offline(False)
        page.locator("[data-k=game-capitol]").check(force=True)
        page.fill("form.create input[name=name]", "Ana")
        page.click("[data-k=create]")
        expect(page.locator(".lobby .code-big")).to_be_visible()
        assert len(loads) == 2, loads
    finally:
        ctx.close()
