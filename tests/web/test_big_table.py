"""Issue 29, the table at ten: a Capitol room of one player and nine bots (the big-table variant), shown
at 360, 390, 768 and 1280 px in a real browser: every seat's name, money, cards and turn marker inside
the window (no sideways scroll), and one's own hand on the page."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser

from browser_helpers import WebServer, api_room, api_start, open_seat, run_server, shot, watch_errors

pytestmark = pytest.mark.browser

SIZES = [(360, 740), (390, 844), (768, 1024), (1280, 800)]

# Per seat panel: is each part there and inside the window's width? And the page's sideways scroll.
SEATS = """() => {
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
  return { panels, me: inside(document.querySelector('.me-area')),
    scroll: document.documentElement.scrollWidth - w,
    money: document.querySelector('.me-area') ? document.querySelector('.me-area').textContent : '' };
}"""


@pytest.fixture
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    return {**browser_context_args, "bypass_csp": True}  # the probe is evaluated in the page


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    with run_server(tmp_path_factory.mktemp("bigtable")) as running:
        yield running


def test_a_ten_seat_table_fits_every_width(browser: Browser, server: WebServer) -> None:
    room = api_room(server, "capitol", ["Ana"], bots=9)
    api_start(server, room)
    for width, height in SIZES:
        page = browser.new_context(viewport={"width": width, "height": height}).new_page()
        errors = watch_errors(page)
        open_seat(page, server, room, 0, "Ana")
        page.wait_for_selector(".capitol-table .opponents .player")
        got = page.evaluate(SEATS)
        for _ in range(10):  # measured once the page has settled
            if len(got["panels"]) == 9 and got["scroll"] <= 0:
                break
            page.wait_for_timeout(200)
            got = page.evaluate(SEATS)
        assert len(got["panels"]) == 9, (width, got)
        assert got["scroll"] <= 0, (width, got)
        assert got["me"], (width, got)
        for panel in got["panels"]:
            assert panel["name"] and panel["money"] and panel["cards"], (width, panel)
            assert panel["turn"] in (None, True), (width, panel)
        shot(page, f"capitol-10-players-{width}")
        assert errors == [], errors
        page.context.close()
