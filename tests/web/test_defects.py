"""Issue 26's defects, each checked in Debian's Chromium against a real server: the standings fit a
phone; no false "Too late" when both Conspiranoicos players confirm their rows at once; the replay's
last step shows the Final Challenge once; a private game's replay is offered only to those it opens
for, and its refusal has a way back; Conspiranoicos log lines and Spanish wording read as sentences.
Every wait is on what the test checks."""

from __future__ import annotations

import contextlib
import json
import queue
import random
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, WebSocketRoute, expect

from browser_helpers import WebServer, open_seat, patient_expectations, run_server
from server_helpers import Player, Server, auth, make_table, play_randomly, start

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
SMALL = {"width": 360, "height": 740}
LAPTOP = {"width": 1280, "height": 800}

# Every toast the page shows, kept (a toast is gone after a few seconds).
TOASTS = """
window.__toasts = [];
new MutationObserver(() => {
  const el = document.getElementById('toast');
  if (el && !el.hidden && el.textContent) window.__toasts.push(el.textContent);
}).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
"""


@pytest.fixture
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    return {**browser_context_args, "bypass_csp": True}


@pytest.fixture(autouse=True, scope="module")
def patient() -> Iterator[None]:
    with patient_expectations():
        yield


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    with run_server(tmp_path_factory.mktemp("defects"), bot_delay=0.0, extra=("--grace", "3600")) as running:
        yield running


def new_page(browser: Browser, viewport: dict[str, int] = LAPTOP, locale: str = "en-US") -> Page:
    return browser.new_context(viewport=viewport, locale=locale).new_page()  # type: ignore[arg-type]


def placing(msg: dict[str, Any] | None) -> bool:
    legal = (msg or {}).get("legal") or []
    return bool(legal) and all(a["type"] == "place" for a in legal)


def to_sort_evidence(players: list[Player], seed: int = 5) -> None:
    """Both players answer at random until both are placing their rows (Sort Evidence)."""
    rng = random.Random(seed)
    answered = [-1] * len(players)
    deadline = time.time() + 120
    while not all(placing(p.latest_state()) for p in players):
        assert time.time() < deadline, "Sort Evidence never came"
        for i, p in enumerate(players):
            latest = p.latest_state()
            if latest and latest["legal"] and not placing(latest) and latest["seq"] > answered[i]:
                answered[i] = latest["seq"]
                p.send({"type": "act", "action": rng.choice(latest["legal"]), "seq": latest["seq"]})
        for p in players:  # until the next message of either (the condition is checked again)
            with contextlib.suppress(queue.Empty):
                p.inbox.get(timeout=0.05)


def test_both_rows_confirmed_at_once_show_no_false_too_late(browser: Browser, server: WebServer) -> None:
    """3b: Ana confirms her row just as Ben places a card: her first `place` reaches the server after
    Ben's (it quotes the state before it), is refused as stale, and goes again; her row goes down
    whole and she is told nothing went wrong."""
    srv = Server(server.url)
    table = make_table(srv, "conspiranoicos", 2, settings={"timers": False})
    start(table)
    ana_ws, ben = Player(srv, table.code, table.tokens[0], 0), Player(srv, table.code, table.tokens[1], 1)
    to_sort_evidence([ana_ws, ben])
    ana_ws.close()
    race: list[int] = []

    def hold_first_place(ws: WebSocketRoute) -> None:
        to_server = ws.connect_to_server()

        def from_page(message: str | bytes) -> None:
            msg = json.loads(message)
            if msg.get("type") == "act" and msg["action"]["type"] == "place" and not race:
                race.append(msg["seq"])
                # Ben's card goes down first: Ana's placing now answers an older state.
                mine = ben.latest_state()
                assert mine is not None
                ben.send({"type": "act", "action": mine["legal"][0], "seq": mine["seq"]})
                ben.wait_for(lambda m: m["type"] == "state" and m["seq"] > mine["seq"])
            to_server.send(message)

        ws.on_message(from_page)

    page = new_page(browser)
    page.add_init_script(TOASTS)
    page.route_web_socket(re.compile(r"/ws/"), hold_first_place)
    open_seat(page, server, {"code": table.code, "tokens": table.tokens}, 0, "Host")
    confirm = page.locator("[data-k=row-confirm]:not([disabled])")
    expect(confirm).to_be_visible(timeout=30_000)
    confirm.click()
    # Ana's whole row goes down (her decision ends), then Ben's rest, and the game is scored.
    expect(page.locator("[data-testid=row-arranger]")).to_have_count(0, timeout=30_000)
    assert race, "the race never happened"
    play_randomly([ben], seed=1)
    expect(page.get_by_test_id("score-breakdown")).to_be_visible(timeout=30_000)
    toasts = page.evaluate("window.__toasts")
    assert not any("Too late" in text for text in toasts), toasts
    ben.close()
    page.context.close()


def finished_table(server: WebServer, game: str, **settings: Any) -> tuple[Any, str]:
    """A room's game played to its end by its one person (at random) and a random bot."""
    srv = Server(server.url)
    table = make_table(srv, game, 1, bots=1, level="random", settings={"timers": False, **settings})
    game_id = start(table)["game_id"]
    host = Player(srv, table.code, table.host_token, 0)
    play_randomly([host], seed=3)
    host.close()
    with server.api() as http:
        for _ in range(200):
            if http.get(f"/api/games/{game_id}", headers=auth(table.host_token)).status_code == 200:
                return table, game_id
    raise AssertionError("the game was not archived")


@pytest.mark.parametrize("size", [SMALL, PHONE], ids=["360", "390"])
def test_the_standings_fit_a_phone(browser: Browser, server: WebServer, size: dict[str, int]) -> None:
    """3a: a standing table's end screen was 468–495 px wide on a phone (its per-game column)."""
    table, _game_id = finished_table(server, "capitol", standing=True)
    for lang in ("en", "es"):
        page = new_page(browser, size)
        open_seat(page, server, {"code": table.code, "tokens": table.tokens}, 0, "Host", lang)
        expect(page.locator("[data-testid=end] [data-testid=standings-table]")).to_be_visible(timeout=30_000)
        expect(page.locator("[data-testid=standings-table] tr[data-name='Host'] td").first).to_have_text("1")
        wide = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert wide <= 0, (lang, size, wide)
        if lang == "es":
            expect(page.get_by_test_id("standings-table")).to_contain_text("1 jugada,")
        page.context.close()


def test_the_last_replay_step_shows_the_final_challenge_once(browser: Browser, server: WebServer) -> None:
    """3c: the Final Challenge, once sent to a zone or the Pyramid (and sorted into a row), is shown
    there, not in its slot too."""
    _table, game_id = finished_table(server, "conspiranoicos", public=True)
    page = new_page(browser)
    page.goto(f"{server.url}/replay/{game_id}")
    expect(page.get_by_test_id("replay-step")).to_be_visible()
    page.click("[data-k=last]")
    expect(page.get_by_test_id("replay-end")).to_be_visible()
    with server.api() as http:
        final = http.get(f"/api/games/{game_id}/replay").json()
    card = final["steps"][-1]["view"].get("final_challenge_card") or final["static"]["final_challenge_card"]
    shown = page.locator(f"[data-card='{card}']")
    expect(shown).to_have_count(1)
    assert page.get_by_test_id("final-challenge").locator("[data-card]").count() == 0
    page.context.close()


def test_a_private_games_replay_is_offered_only_to_its_players(browser: Browser, server: WebServer) -> None:
    """3d: a spectator of a private room's finished game is not offered the replay that would refuse
    them; a refused replay page (a link passed on) has a way back."""
    table, game_id = finished_table(server, "capitol")
    player = new_page(browser)
    open_seat(player, server, {"code": table.code, "tokens": table.tokens}, 0, "Host")
    expect(player.locator("[data-testid=end] a[data-k=replay]")).to_be_visible(timeout=30_000)
    watcher = new_page(browser)
    watcher.goto(f"{server.url}/?room={table.code}&watch=1")
    expect(watcher.get_by_test_id("end")).to_be_visible(timeout=30_000)
    expect(watcher.locator("a[data-k=replay]")).to_have_count(0)
    # A link passed on anyway: refused, with the way back to the room it names.
    watcher.goto(f"{server.url}/replay/{game_id}#room={table.code}")
    expect(watcher.get_by_test_id("replay-error")).to_be_visible()
    back = watcher.locator("a[data-k=back]")
    expect(back).to_be_visible()
    back.click()
    expect(watcher).to_have_url(re.compile(rf"/\?room={table.code}"))
    expect(watcher.locator("main")).to_contain_text("Capitol")
    # Without a room named, the way back is home.
    watcher.goto(f"{server.url}/replay/{game_id}")
    expect(watcher.locator("a[data-k=back]")).to_have_attribute("href", "/")
    player.context.close()
    watcher.context.close()
