"""Learn to play from the extension's side panel (issue 27), in a reader's own language (Polish, from
the browser): both games' practice rooms open from the panel's home screen with the coach, the
panel's width holds them, a practice game goes to its end there, and its end offers a real room."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, Playwright, ViewportSize, expect

from browser_helpers import (
    Seen,
    WebServer,
    conspiranoicos_step,
    is_over,
    load_extension,
    patient_expectations,
    run_server,
    watch_errors,
)

pytestmark = pytest.mark.browser

WIDTHS = (320, 380, 480)  # the side panel's narrow column, as Chrome lets a user size it


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    with run_server(tmp_path_factory.mktemp("learn-panel")) as running:
        yield running


@pytest.fixture(autouse=True, scope="module")
def patient() -> Iterator[None]:
    with patient_expectations():
        yield


def room_of(page: Page, server: WebServer) -> dict[str, object]:
    """The room the panel shows, as the server describes it."""
    code = re.search(r"room=([A-Z0-9]+)", page.url)
    assert code, page.url
    with server.api() as http:
        return dict(http.get(f"/api/rooms/{code.group(1)}").json())


def fits(page: Page) -> dict[int, int]:
    """How far the page scrolls sideways at each of the panel's widths (0: it fits)."""
    out = {}
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 760})
        out[width] = page.evaluate("() => document.documentElement.scrollWidth - innerWidth")
    return out


def test_learn_to_play_from_the_side_panel(playwright: Playwright, server: WebServer, tmp_path: Path) -> None:
    panel: ViewportSize = {"width": WIDTHS[0], "height": 760}
    ext = load_extension(playwright, server, tmp_path, panel, "pl-PL")
    try:
        page = ext.context.new_page()
        errors = watch_errors(page)
        page.goto(f"{ext.origin}/sidepanel.html")
        expect(page.locator("body")).to_have_class("extension sidepanel")
        expect(page.locator("html")).to_have_attribute("lang", "pl")
        expect(page.locator("[data-k=learn]")).to_have_text("Naucz się grać")

        # Conspiranoicos: a practice room with its coach, in Polish, in the panel's width.
        page.locator("[data-k=game-conspiranoicos]").check(force=True)
        page.click("[data-k=learn]")
        region = page.get_by_test_id("coach")
        expect(region).to_have_attribute("data-lesson", "challengeCard")
        expect(region).to_have_attribute("aria-label", "Trener")
        expect(region).to_have_attribute("aria-live", "polite")
        expect(region.locator(".coach-title")).to_have_text("Karta wyzwania i kto wybiera pierwszy")
        room = room_of(page, server)
        assert room["game"] == "conspiranoicos" and room["settings"]["practice"] is True  # type: ignore[index]
        assert fits(page) == dict.fromkeys(WIDTHS, 0)

        # Played to its end in the panel, every lesson read as it comes.
        seen, steps = Seen(), 0
        while not is_over(page):
            steps += 1
            assert steps < 2000, "the practice game did not end"
            lesson = region.get_attribute("data-lesson")
            if lesson:
                region.locator("[data-k=coach-ok]").click()
                expect(region).not_to_have_attribute("data-lesson", lesson)
            elif not conspiranoicos_step(page, seen):
                page.wait_for_timeout(60)
        offer = page.get_by_test_id("coach-end")
        expect(offer.locator("[data-k=coach-real]")).to_have_text("Zagraj prawdziwą grę")
        expect(page.get_by_test_id("recap")).to_be_visible(timeout=60_000)
        assert fits(page) == dict.fromkeys(WIDTHS, 0)

        # The real room it offers: the lobby, in the panel, of a normal room of the same game.
        offer.locator("[data-k=coach-real]").click()
        expect(page.locator(".lobby .code-big")).to_be_visible()
        room = room_of(page, server)
        assert room["game"] == "conspiranoicos" and room["settings"]["practice"] is False  # type: ignore[index]
        assert room["status"] == "lobby"

        # Back home, and Capitol's practice: the bot's claim comes first, and its lesson with it.
        page.click("[data-k=leave]")
        page.locator("[data-k=game-capitol]").check(force=True)
        page.click("[data-k=learn]")
        expect(region).to_have_attribute("data-lesson", "challenge")
        expect(region.locator(".coach-title")).to_have_text("Sprawdzanie i bycie sprawdzanym")
        expect(page.locator("[data-k=act-challenge]")).to_be_visible()
        room = room_of(page, server)
        assert room["game"] == "capitol" and room["settings"]["practice"] is True  # type: ignore[index]
        assert fits(page) == dict.fromkeys(WIDTHS, 0)
        assert errors == []
    finally:
        ext.context.close()
