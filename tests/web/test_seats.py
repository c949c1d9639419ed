"""Issue 26, the seats at the table: bots named by their personality in the table's language, a
40-character name that keeps its panel's shape (cut with "…"; the turn tag on the seat's line, or on
a phone on the line below its two lines), a player who drops
marked at once with the seconds before a bot stands in, and a renamed newcomer told for as long as
they sit in the lobby. Real server, Debian's Chromium; every wait is on what the test checks."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from browser_helpers import (
    WebServer,
    api_room,
    api_start,
    create_room,
    join_by_link,
    open_seat,
    patient_expectations,
    run_server,
)

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1280, "height": 800}
LONG = "W" * 40  # as long as the server allows, with no place to break


@pytest.fixture
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    # The probes are strings evaluated in the page, which the server's Content-Security-Policy refuses.
    return {**browser_context_args, "bypass_csp": True}


@pytest.fixture(autouse=True, scope="module")
def patient() -> Iterator[None]:
    with patient_expectations():
        yield


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    # A long grace: no bot stands in for a dropped player while a loaded machine draws the pages.
    with run_server(tmp_path_factory.mktemp("seats"), extra=("--grace", "3600")) as running:
        yield running


def new_page(browser: Browser, viewport: dict[str, int] = LAPTOP, locale: str = "en-US") -> Page:
    return browser.new_context(viewport=viewport, locale=locale).new_page()  # type: ignore[arg-type]


def add_bot(server: WebServer, room: dict, level: str) -> None:
    with server.api() as http:
        auth = {"Authorization": f"Bearer {room['tokens'][0]}"}
        r = http.post(f"/api/rooms/{room['code']}/bots", json={"count": 1, "level": level}, headers=auth)
        assert r.status_code == 201, r.text


def test_bots_are_named_by_personality_in_the_tables_language(browser: Browser, server: WebServer) -> None:
    room = api_room(server, "capitol", ["Ana"])
    add_bot(server, room, "heuristic-bluffer")
    add_bot(server, room, "mystery")
    add_bot(server, room, "normal")
    for lang, bluffer, mystery, normal in (
        ("en", "Bot 1 · the bluffer", "Mystery bot 2", "Bot 3 · normal"),
        ("es", "Bot 1 · el farolero", "Bot misterioso 2", "Bot 3 · normal"),
    ):
        page = new_page(browser)
        open_seat(page, server, room, 0, "Ana", lang)
        seats = page.locator(".seats .seat-name")
        expect(seats).to_have_text(["Ana", bluffer, mystery, normal])
        page.context.close()
    api_start(server, room)
    for lang, bluffer, mystery in (
        ("en", "Bot 1 · the bluffer", "Mystery bot 2"),
        ("es", "Bot 1 · el farolero", "Bot misterioso 2"),
    ):
        page = new_page(browser)
        open_seat(page, server, room, 0, "Ana", lang)
        names = page.locator(".opponents .player .pname")
        expect(names).to_have_count(3)
        expect(names.nth(0)).to_have_text(bluffer)
        # A mystery bot's personality stays a secret until the game is over.
        expect(names.nth(1)).to_have_text(mystery)
        text = page.locator(".capitol-table").inner_text()
        assert "heuristic" not in text and "(normal)" not in text
        page.context.close()


# The name's line in the panel of seat N: the name's box and the turn tag's.
LINE = """(seat) => {
  const panel = document.querySelector(`.player[data-seat="${seat}"]`);
  const box = (el) => {
    const r = el.getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, left: r.left, right: r.right };
  };
  const name = panel.querySelector('.pname');
  return { panel: box(panel), name: box(name), tag: box(panel.querySelector('.turn-tag')),
    cut: name.scrollHeight > name.clientHeight + 1 || name.scrollWidth > name.clientWidth + 1,
    lines: Math.round(name.getBoundingClientRect().height / parseFloat(getComputedStyle(name).lineHeight)),
    title: panel.querySelector('.pname').title, label: panel.getAttribute('aria-label') };
}"""


@pytest.mark.parametrize("size", [PHONE, LAPTOP], ids=["390", "1280"])
def test_a_forty_character_name_keeps_the_turn_tag_on_the_seats_line(
    browser: Browser, server: WebServer, size: dict[str, int]
) -> None:
    room = api_room(server, "capitol", ["Ana", LONG, "Ben"], options={"first_player": 1})
    api_start(server, room)
    page = new_page(browser, size)
    open_seat(page, server, room, 0, "Ana")
    expect(page.locator('.player[data-seat="1"] .turn-tag')).to_be_visible()
    got = page.evaluate(LINE, 1)
    name, tag, panel = got["name"], got["tag"], got["panel"]
    if size is LAPTOP:
        # The tag sits on the name's line, inside the panel; the name is cut with "…", and said whole.
        assert tag["top"] < name["bottom"] and tag["bottom"] > name["top"], got
    else:
        # On a phone the name comes first: two lines of it, cut with "…", the tag on the line below
        # (a name that fits leaves its marks beside it: test_big_table's small tables).
        assert got["lines"] == 2 and tag["top"] >= name["bottom"] - 1, got
    assert got["cut"], got
    assert panel["left"] - 1 <= name["left"] and tag["right"] <= panel["right"] + 1, got
    assert tag["bottom"] <= panel["bottom"] + 1, got
    assert got["title"] == LONG and LONG in got["label"], got
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.context.close()


def test_a_player_who_drops_is_marked_with_the_countdown_and_the_mark_clears_on_return(
    browser: Browser, server: WebServer
) -> None:
    room = api_room(server, "capitol", ["Ana", "Ben"])
    api_start(server, room)
    for lang, words in (("en", "offline · bot in"), ("es", "desconectado · bot en")):
        ana, ben = new_page(browser, locale=f"{lang}-ES" if lang == "es" else "en-US"), new_page(browser)
        open_seat(ana, server, room, 0, "Ana", lang)
        open_seat(ben, server, room, 1, "Ben")
        ben.wait_for_selector(".me-area")
        panel = ana.locator('.player[data-seat="1"]')
        expect(panel.locator(".tag.away")).to_have_count(0)
        ben.context.close()
        mark = panel.locator("[data-testid=dropped]")
        expect(mark).to_contain_text(words, timeout=15_000)
        # The countdown runs: a number of seconds, nearly the whole grace period.
        expect(mark).to_contain_text(" s")
        seconds = int(mark.inner_text().rsplit(" ", 2)[-2])
        assert 3000 < seconds <= 3600
        ben = new_page(browser)
        open_seat(ben, server, room, 1, "Ben")
        expect(panel.locator(".tag.away")).to_have_count(0, timeout=15_000)
        ana.context.close()
        ben.context.close()


def test_a_renamed_newcomer_is_told_in_the_lobby(browser: Browser, server: WebServer) -> None:
    ana = new_page(browser)
    other = new_page(browser, locale="es-ES")
    code = create_room(ana, server.url, "capitol", "Ana")
    other.goto(f"{server.url}/?lang=es")
    join_by_link(other, server.url, code, "Ana")
    note = other.locator("[data-testid=renamed]")
    expect(note).to_have_text("Ese nombre ya está en esta mesa: juegas como Ana 2.")
    # Still said once the toast is gone, and after a reload.
    expect(other.locator("#toast")).to_be_hidden(timeout=15_000)
    expect(note).to_be_visible()
    other.reload()
    expect(other.locator("[data-testid=renamed]")).to_be_visible()
    expect(ana.locator("[data-testid=renamed]")).to_have_count(0)
