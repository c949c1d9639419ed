"""Issue 17, the table tried as a new user would: each rough edge checked in a real browser (Playwright
driving Debian's Chromium) against a real server — leaving mid-game and taking the seat back, layout
measured by element boxes at phone, tablet and laptop sizes in both languages, and the wording."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from browser_helpers import WebServer, create_room, join_by_link, run_server, watch_errors

pytestmark = pytest.mark.browser

LAPTOP = {"width": 1280, "height": 800}
TABLET = {"width": 768, "height": 1024}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    with run_server(tmp_path_factory.mktemp("polish")) as running:
        yield running


def new_page(browser: Browser, viewport: dict[str, int] = LAPTOP, locale: str = "en-US") -> Page:
    return browser.new_context(viewport=viewport, locale=locale).new_page()  # type: ignore[arg-type]


def test_leaving_mid_game_asks_first_and_the_same_browser_takes_the_seat_back(
    browser: Browser, server: WebServer
) -> None:
    """17.2: "Leave room" at the table asks first; a bot plays the seat; the join link then offers
    the seat back (also after a reload), and taking it back puts the player at the table again."""
    ana, ben = new_page(browser), new_page(browser)
    errors = watch_errors(ben)
    code = create_room(ana, server.url, "capitol", "Ana", timers=False)
    join_by_link(ben, server.url, code, "Ben")
    ana.click("[data-k=add-bot]")
    expect(ana.locator(".seats .seat")).to_have_count(3)
    ana.click("[data-k=start]")
    ben.wait_for_selector(".capitol-table")

    ben.click("[data-k=leave]")
    confirm = ben.locator("[data-testid=leave-confirm]")
    expect(confirm).to_be_visible()
    expect(confirm).to_contain_text("A bot will play your seat")
    expect(ben.locator("[data-k=leave-stay]")).to_be_focused()
    ben.click("[data-k=leave-stay]")
    expect(confirm).to_have_count(0)
    expect(ben.locator(".capitol-table")).to_be_visible()

    ben.click("[data-k=leave]")
    ben.click("[data-k=leave-yes]")
    expect(ben.locator("[data-testid=rejoin]")).to_be_visible()
    expect(ben.locator("[data-k=rejoin]")).to_have_text("Take my seat back")
    # The others see a bot playing Ben's seat.
    expect(ana.locator(".player", has_text="Ben").locator(".tag.away")).to_be_visible()
    # Opened again (a reload of the link), the page still offers the seat back.
    ben.goto(f"{server.url}/?room={code}")
    expect(ben.locator("[data-k=rejoin]")).to_be_visible()
    ben.click("[data-k=rejoin]")
    ben.wait_for_selector(".me-area")
    expect(ben.locator(".me-area .pname")).to_contain_text("Ben")
    expect(ana.locator(".player", has_text="Ben").locator(".tag.away")).to_have_count(0)
    assert errors == [], errors
