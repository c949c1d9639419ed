"""Playwright fixtures and UI drivers for the web client tests (Debian's Chromium, never a download).

The server runs as ``python -m conflictology.cli serve`` on 127.0.0.1 with a free port, a temporary
SQLite file and a near-zero bot delay; each test module that uses ``web_server`` starts one and
stops it when the module is done. The drivers play through the page alone: they read what the page
shows (buttons, cards) and click, exactly as a person would.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import BrowserContext, Page, Playwright, ViewportSize, Worker, expect
from playwright.sync_api import Error as PlaywrightError

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Screenshots go to a temporary folder unless SCREENSHOT_DIR says where (docs/screenshots/ to refresh
# the README's pictures).
SCREENSHOT_DIR = os.environ.get("SCREENSHOT_DIR")


# How long an ``expect`` waits for what it checks in every browser test: a page on a loaded 2-core
# machine can take seconds to draw (Playwright's own default is 5 s).
PATIENT_MS = 30_000


@contextlib.contextmanager
def patient_expectations(timeout_ms: int = PATIENT_MS) -> Iterator[None]:
    """A loaded machine (2 cores, several browsers) draws a page in seconds: every ``expect`` inside
    waits ``timeout_ms`` for what it checks (every browser test's default already waits
    :data:`PATIENT_MS`, tests/conftest.py, instead of Playwright's 5 s)."""
    expect.set_options(timeout=timeout_ms)
    try:
        yield
    finally:
        expect.set_options(timeout=PATIENT_MS)


def launch_args(base: dict[str, Any]) -> dict[str, Any]:
    """pytest-playwright's launch arguments with Debian's Chromium (its --browser-channel cannot
    find it); test modules override ``browser_type_launch_args`` with this."""
    return {**base, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class WebServer:
    url: str
    proc: subprocess.Popen[bytes]

    def api(self) -> httpx.Client:
        # Patient: on a loaded machine (CI at load 30) a first replay or archive export, built in a
        # process of its own, took more than 10 s to answer; a refused or wrong answer fails at once.
        return httpx.Client(base_url=self.url, timeout=60)


@contextlib.contextmanager
def run_server(
    db_dir: Path, bot_delay: float = 0.05, port: int | None = None, extra: Sequence[str] = ()
) -> Iterator[WebServer]:
    """``conflictology serve`` on 127.0.0.1 (a free port unless given), with its SQLite file in
    ``db_dir`` and ``extra`` flags; stopped (terminated, then killed) on exit unless the test killed
    it already. Its health is awaited for up to two minutes (a loaded machine starts it slowly)."""
    port = port or free_port()
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "conflictology.cli", "serve",
            "--host", "127.0.0.1", "--port", str(port),
            "--db", f"sqlite:///{db_dir / 'web.sqlite3'}",
            "--bot-delay", str(bot_delay),
            "--log-level", "warning",
            *extra,
        ],
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
        yield WebServer(url, proc)
    finally:
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def shot(page: Page, name: str, tmp: Path | None = None) -> Path:
    """Save a screenshot of the page (full page) as NAME.png; returns its path."""
    folder = Path(SCREENSHOT_DIR) if SCREENSHOT_DIR else (tmp or Path(os.environ.get("TMPDIR", "/tmp")))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    if SCREENSHOT_DIR:
        # A picture for the docs shows the table settled, not a plaque or a line halfway through its
        # fade-in: the short animations end first (a clock's bar runs for its whole deadline: not it).
        page.evaluate("""async () => {
          const short = document.getAnimations().filter((a) => {
            const t = a.effect && a.effect.getComputedTiming();
            return t && t.endTime !== Infinity && t.endTime - (t.localTime || 0) < 1500;
          });
          await Promise.all(short.map((a) => a.finished.catch(() => null)));
        }""")
    page.screenshot(path=str(path), full_page=False)
    return path


def watch_errors(page: Page) -> list[str]:
    """Collect the page's uncaught errors and console errors, to assert there were none."""
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
    page.on("console", lambda msg: errors.append(f"console: {msg.text}") if msg.type == "error" else None)
    return errors


# ---- rooms through the UI ---------------------------------------------------------------------------


def create_room(page: Page, base: str, game: str, name: str, *, timers: bool = True) -> str:
    """Create a room from the home screen; returns its code (the lobby is showing)."""
    page.goto(base + "/")
    page.locator(f"[data-k=game-{game}]").check(force=True)
    page.fill("form.create input[name=name]", name)
    if not timers:
        page.locator("form.create details.options summary").click()
        page.locator("[data-k=set-timers]").uncheck()
    page.click("[data-k=create]")
    page.wait_for_selector(".lobby .code-big")
    return page.locator(".share .code-big").inner_text().strip()


def join_by_link(page: Page, base: str, code: str, name: str) -> None:
    page.goto(f"{base}/?room={code}")
    page.wait_for_selector("form [data-k=join-name]")
    page.fill("[data-k=join-name]", name)
    page.click("[data-k=join]")
    page.wait_for_selector(".lobby")


def join_by_code(page: Page, base: str, code: str, name: str) -> None:
    page.goto(base + "/")
    page.fill("[data-k=join-code]", code.lower())
    page.fill("[data-k=join-name]", name)
    page.click("[data-k=join]")
    page.wait_for_selector(".lobby")


def _try_click(page: Page, selector: str) -> bool:
    loc = page.locator(selector)
    try:
        if loc.count() and loc.first.is_visible() and loc.first.is_enabled():
            loc.first.click(timeout=1500)
            return True
    except PlaywrightError:
        # The table re-renders on every state message; a detached button is simply tried again.
        return False
    return False


def is_over(page: Page) -> bool:
    return page.locator("[data-testid=end]").count() > 0


@dataclass
class Seen:
    """What the drivers noticed on the way (asserted by the tests)."""

    threat_prompts: int = 0
    decisions: int = 0
    countdowns: int = 0
    kinds: set[str] = field(default_factory=set)
    turns: dict[int, int] = field(default_factory=dict)


# Each person's turns cycle through the character actions, so every kind of prompt comes up.
CAPITOL_ROTATION = ("reporter", "police_investigate", "hacker", "police_swap", "mafia", "banker")


_HAND_AND_BANNER = """(kind) => ({
  hand: document.querySelectorAll(`.my-hand .card-btn.${kind}`).length,
  banner: (document.querySelector('[data-testid=banner]') || {}).className || '',
})"""


def capitol_step(page: Page, seen: Seen) -> bool:
    """Make one decision on a Capitol page if the page asks for one; True if it clicked."""
    if is_over(page):
        return False
    for kind in ("lose", "return", "show"):
        # The hand and the banner read in one go: the page may draw a new state between two reads.
        shown = page.evaluate(_HAND_AND_BANNER, kind)
        if shown["hand"]:
            seen.kinds.add(kind)
            if kind in ("lose", "show"):
                assert "threat" in shown["banner"], (kind, shown)
                seen.threat_prompts += 1
            return _try_click(page, f".my-hand .card-btn.{kind}:enabled")
    if page.locator(".my-hand .card-btn.keep").count():
        seen.kinds.add("keep")
        for i in range(6):
            if page.locator("[data-k=act-keep]:enabled").count():
                return _try_click(page, "[data-k=act-keep]")
            _try_click(page, f"[data-k=card-{i}]:not(.on)")
        return False
    if page.locator("[data-k=act-force_redraw]").count():
        seen.kinds.add("investigate")
        return _try_click(page, "[data-k=act-force_redraw]")
    if page.locator("[data-k^=target-]").count():
        return _try_click(page, "[data-k^=target-]")
    if page.locator(".countdown").count():
        seen.countdowns += 1
    if _try_click(page, "[data-k=act-pass]"):
        seen.kinds.add("respond")
        seen.decisions += 1
        return True
    if page.locator("[data-k=act-income]").count():
        key = id(page)
        n = seen.turns.get(key, 0)
        seen.turns[key] = n + 1
        for action in ("scandal", CAPITOL_ROTATION[n % len(CAPITOL_ROTATION)], "income"):
            if _try_click(page, f"[data-k=act-{action}]"):
                seen.kinds.add("turn")
                seen.decisions += 1
                if page.locator("[data-k^=target-]").count():
                    _try_click(page, "[data-k^=target-]")
                return True
    return False


_PICKS_AND_BANNER = """() => ({
  send: document.querySelectorAll('[data-k=send-zone]').length,
  picks: document.querySelectorAll('.controls .table-choices .card-btn.pick').length,
  banner: (document.querySelector('[data-testid=banner]') || {}).className || '',
})"""


def conspiranoicos_step(page: Page, seen: Seen, confirm_row: bool = True) -> bool:
    """Make one decision on a Conspiranoicos page if the page asks for one; True if it clicked.
    ``confirm_row`` false: a row to arrange is left to the caller."""
    if is_over(page):
        return False
    if page.locator(".countdown").count():
        seen.countdowns += 1
    if _try_click(page, ".consp-player.mine .card-btn.play:enabled"):
        seen.decisions += 1
        return True
    # What the page offers, read in one go: a state drawn between two reads (the send decision
    # arriving) would pair one state's picks with another's banner.
    picks = page.evaluate(_PICKS_AND_BANNER)
    if picks["send"]:
        if page.locator("[data-k=send-zone]:enabled").count():
            return _try_click(page, "[data-k=send-zone]")
        return _try_click(page, ".controls .card-btn.pick:enabled")
    if picks["picks"]:
        assert "threat" in picks["banner"], picks
        seen.threat_prompts += 1
        return _try_click(page, ".controls .card-btn.pick:enabled")
    if _try_click(page, "[data-k=act-pass]"):
        return True
    # Sort Evidence: the whole row is arranged, then confirmed (its cards then go down one by one).
    return confirm_row and _try_click(page, "[data-k=row-confirm]:enabled")


def play_until_over(
    pages: list[Page], step: Callable[[Page, Seen], bool], seen: Seen, timeout: float = 240.0,
    on_step: Callable[[int], None] | None = None,
) -> None:
    """Round-robin over the pages, letting each one decide, until every page shows the end."""
    deadline = time.monotonic() + timeout
    steps = 0
    while not all(is_over(p) for p in pages):
        if time.monotonic() > deadline:
            raise TimeoutError(f"the game did not end in {timeout} s ({steps} decisions)")
        acted = False
        for p in pages:
            if step(p, seen):
                acted = True
                steps += 1
                if on_step:
                    on_step(steps)
        if not acted:
            pages[0].wait_for_timeout(60)


# ---- rooms made through the HTTP API, then opened in pages (issue 17's layout and accessibility) ----


def api_room(
    server: WebServer,
    game: str,
    names: list[str],
    bots: int = 0,
    options: dict | None = None,
    **settings: object,
) -> dict:
    """A room made through the API: {code, tokens by seat}."""
    with server.api() as http:
        body = {"game": game, "name": names[0], "settings": {"timers": False, **settings}}
        if options is not None:
            body["options"] = options
        r = http.post("/api/rooms", json=body)
        assert r.status_code == 201, r.text
        code, tokens = r.json()["code"], {0: r.json()["token"]}
        for name in names[1:]:
            r = http.post(f"/api/rooms/{code}/join", json={"name": name})
            assert r.status_code == 201, r.text
            tokens[r.json()["seat"]] = r.json()["token"]
        auth = {"Authorization": f"Bearer {tokens[0]}"}
        if bots:
            assert http.post(f"/api/rooms/{code}/bots", json={"count": bots}, headers=auth).status_code == 201
    return {"code": code, "tokens": tokens}


def api_start(server: WebServer, room: dict) -> None:
    with server.api() as http:
        auth = {"Authorization": f"Bearer {room['tokens'][0]}"}
        assert http.post(f"/api/rooms/{room['code']}/start", headers=auth).status_code == 200


def api_leave(server: WebServer, room: dict, seat: int) -> None:
    with server.api() as http:
        auth = {"Authorization": f"Bearer {room['tokens'][seat]}"}
        assert http.post(f"/api/rooms/{room['code']}/leave", headers=auth).status_code == 200


def open_seat(page: Page, server: WebServer, room: dict, seat: int, name: str, lang: str = "en") -> None:
    """This page holds the seat (its token in localStorage, as after joining) and opens the room."""
    page.goto(f"{server.url}/?lang={lang}")
    value = {"token": room["tokens"][seat], "seat": seat, "name": name}
    page.evaluate("([k, v]) => localStorage.setItem(k, JSON.stringify(v))",
                  [f"conflictology:room:{room['code']}", value])
    page.goto(f"{server.url}/?room={room['code']}&lang={lang}")


# ---- a table's fit in the window (issue 29: ten seats at 360-1280 px and in the side panel) -------

# Per seat panel: is each part there and inside the window's width (a name neither cut nor
# overflowing)? Also one's own area, the answer buttons shown, and the page's sideways scroll.
TABLE_FIT = """() => {
  const w = window.innerWidth;
  const inside = (el) => { if (!el) return false; const r = el.getBoundingClientRect();
    return r.width > 0 && r.left >= -1 && r.right <= w + 1; };
  const panels = [...document.querySelectorAll('.opponents .player')].map((p) => ({
    seat: p.dataset.seat,
    name: inside(p.querySelector('.pname')) && p.querySelector('.pname').scrollWidth
      <= p.querySelector('.pname').clientWidth + 1,
    money: inside(p.querySelector('.purse')),
    cards: inside(p.querySelector('.hand')),
    turn: p.classList.contains('turn') ? inside(p.querySelector('.turn-tag')) : null,
  }));
  const answers = [...document.querySelectorAll('[data-k^=act-]')].filter((b) => b.offsetParent !== null);
  // One's own cards inside the window, top to bottom too, wherever the page opens (issues 26, 29).
  const cards = [...document.querySelectorAll('.my-hand .card-art')];
  const seen = cards.length > 0 && cards.every((el) => { const r = el.getBoundingClientRect();
    return r.top >= -1 && r.bottom <= window.innerHeight + 1; });
  // The seats use the width: their panels reach from one side of the seats' area to the other.
  const area = document.querySelector('.opponents');
  const rects = [...document.querySelectorAll('.opponents .player')].map((el) => el.getBoundingClientRect());
  const spread = area && rects.length ? (Math.max(...rects.map((r) => r.right))
    - Math.min(...rects.map((r) => r.left))) / area.getBoundingClientRect().width : 0;
  return { panels, spread, me: inside(document.querySelector('.me-area')),
    hand: inside(document.querySelector('.my-hand')), handInView: seen,
    answers: answers.map(inside), width: w,
    scroll: document.documentElement.scrollWidth - w,
    money: document.querySelector('.me-area') ? document.querySelector('.me-area').textContent : '' };
}"""


def table_fit(page: Page, opponents: int) -> dict[str, Any]:
    """TABLE_FIT of a Capitol table once it shows ``opponents`` panels and no sideways scroll, or as
    it stands after 30 s of tries (the caller's assertions then say what is wrong)."""
    got: dict[str, Any] = page.evaluate(TABLE_FIT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        # (A resize or a state drawn just then settles within a frame or two, more on a loaded
        # machine; a hand truly out of the window stays out, and the caller's assertions say so.)
        if len(got["panels"]) == opponents and got["scroll"] <= 0 and got["handInView"]:
            break
        page.wait_for_timeout(200)
        got = page.evaluate(TABLE_FIT)
    return got


def assert_table_fits(got: dict[str, Any], opponents: int) -> None:
    """Every seat's name, money, cards and turn marker inside the width, one's own hand and answers
    too (the hand's cards inside the window's height as well), the seats' panels across the whole
    width of their area, and no sideways scroll."""
    where = got["width"]
    assert len(got["panels"]) == opponents, (where, got)
    assert got["scroll"] <= 0, (where, got)
    assert got["me"] and got["hand"] and got["handInView"], (where, got)
    assert all(got["answers"]), (where, got)
    assert got["spread"] >= 0.95, (where, got["spread"])  # the seats use the width
    for panel in got["panels"]:
        assert panel["name"] and panel["money"] and panel["cards"], (where, panel)
        assert panel["turn"] in (None, True), (where, panel)


# A decision about one's own cards: its card buttons and the buttons that go with them, measured with
# the page at its top (as it opens): those outside the window, by data-k.
OWN_CARDS_OFF_SCREEN = """() => { window.scrollTo(0, 0);
  return [...document.querySelectorAll('.my-hand .card-btn, .dock .controls button')].filter((el) => {
    const r = el.getBoundingClientRect();
    return r.width === 0 || r.top < 0 || r.left < 0 || r.bottom > window.innerHeight + 0.5
      || r.right > window.innerWidth + 0.5;
  }).map((el) => el.dataset.k || el.textContent.trim()); }"""


def own_card_choice(page: Page) -> str | None:
    """The kind of decision about one's own cards the page shows (lose, return, show, keep), if any."""
    for kind in ("lose", "return", "show", "keep"):
        if page.locator(f".my-hand .card-btn.{kind}").count():
            return kind
    return None


# ---- the table screen drawn from engine views, without a server game (layout and language tests) ----

# A page of the client's own stylesheets and the elements app.js expects, served by page.route.
TABLE_HARNESS = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/style.css"><link rel="stylesheet" href="/beside.css">
<link rel="stylesheet" href="/motion.css"></head>
<body><div id="app"></div><div id="toast" class="toast" role="alert" hidden></div>
<div id="live" class="sr-only" aria-live="polite"></div><dialog id="rules" class="rules"></dialog>
</body></html>"""

# Draws the table screen as app.js does (the header and <main>) from a state message and a room;
# `openDetails` opens every <details> (so a check reads the texts folded inside them); `recap`, if
# given, is what GET /api/games/{id}/recap answers for the room's game_id (the end's recap cards).
DRAW_TABLE = """async ({msg, room, lang, ui, openDetails, recap}) => {
  const i18n = await import('/js/i18n.js');
  i18n.setLang(lang);
  const { initialState } = await import('/js/store.js');
  const frame = await import('/js/frame.js');
  const { h } = await import('/js/dom.js');
  const table = await import('/js/screens/table.js');
  const capitol = await import('/js/capitol.js');
  const conspiranoicos = await import('/js/conspiranoicos.js');
  let state = { ...initialState(), screen: 'table', code: 'ABCD', token: 't', seat: 0, room, msg, ui,
    connStatus: 'open' };
  const root = document.getElementById('app');
  const app = {
    get state() { return state; }, tables: { capitol, conspiranoicos }, lang: i18n.lang,
    update: (patch) => { state = { ...state, ...patch }; draw(); }, render: () => draw(),
    act: () => {}, send: () => {}, hostCall: () => {}, goHome: () => {}, standings: () => null,
    savedName: () => null, createRoom: () => {},
    api: { request: async () => {
      if (recap) return recap;
      throw Object.assign(new Error('no recap'), { status: 403 });
    } },
  };
  function draw() {
    const main = h('main', { id: 'main', class: 'screen-table' }, table.render(app));
    root.replaceChildren(frame.header(app), main);
    if (openDetails) for (const d of root.querySelectorAll('details')) d.open = true;
  }
  draw();
  document.body.dataset.screen = 'table';
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return true;
}"""


def open_table_harness(page: Page, server: WebServer) -> None:
    """Opens TABLE_HARNESS at ``/harness`` of the server's origin (its modules are the server's)."""
    page.route(
        f"{server.url}/harness", lambda route: route.fulfill(body=TABLE_HARNESS, content_type="text/html")
    )
    page.goto(f"{server.url}/harness")


# ---- the built extension (its side panel is the client's page at chrome-extension://ID/sidepanel.html) ----


@dataclass
class LoadedExtension:
    context: BrowserContext  # a persistent profile of its own: close it when done
    worker: Worker  # the extension's service worker (background.js)
    id: str
    directory: Path  # the unpacked build

    @property
    def origin(self) -> str:
        return f"chrome-extension://{self.id}"


def load_extension(
    playwright: Playwright, server: WebServer, tmp: Path, viewport: ViewportSize, locale: str = "en-US"
) -> LoadedExtension:
    """The extension built for ``server`` (in ``tmp``) loaded in a Chromium profile of its own (in
    ``tmp`` too); the caller closes its context."""
    from conflictology.extension import build  # (imported here: most browser tests never build it)

    ext_dir = tmp / "extension"
    build(server.url, ext_dir, make_zip=False)
    ctx = playwright.chromium.launch_persistent_context(
        str(tmp / "profile"),
        executable_path=CHROMIUM,
        headless=True,
        args=[*CHROMIUM_ARGS, f"--disable-extensions-except={ext_dir}", f"--load-extension={ext_dir}"],
        viewport=viewport,
        locale=locale,
    )
    sw = ctx.service_workers[0] if ctx.service_workers else ctx.wait_for_event("serviceworker")
    return LoadedExtension(ctx, sw, sw.url.split("/")[2], ext_dir)
