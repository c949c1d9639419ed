"""Issue 29, the side panel at ten: the built extension's side panel holds a seat at a ten-seat Capitol
table (one player, nine bots) in the panel's narrow column, 360 to 400 px wide: every seat's name,
money, cards and turn marker inside the width, one's own hand and the answers too, and nothing to
scroll sideways, at the start and through the decisions of a game; and a decision about one's own
cards (lose, return, show, keep) on screen as the panel opens, hand and buttons, without scrolling."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Playwright, expect

from browser_helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    OWN_CARDS_OFF_SCREEN,
    Seen,
    WebServer,
    api_room,
    api_start,
    assert_table_fits,
    capitol_step,
    is_over,
    own_card_choice,
    run_server,
    shot,
    table_fit,
    watch_errors,
)
from conflictology.extension import build

pytestmark = pytest.mark.browser

WIDTHS = (360, 380, 400)
HEIGHT = 760


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    with run_server(tmp_path_factory.mktemp("panel10"), bot_delay=0.1) as running:
        yield running


def test_the_side_panel_shows_a_ten_seat_table_in_its_width(
    playwright: Playwright, server: WebServer, tmp_path: Path
) -> None:
    ext_dir = tmp_path / "extension"
    build(server.url, ext_dir, make_zip=False)
    ctx = playwright.chromium.launch_persistent_context(
        str(tmp_path / "profile"),
        executable_path=CHROMIUM,
        headless=True,
        args=[*CHROMIUM_ARGS, f"--disable-extensions-except={ext_dir}", f"--load-extension={ext_dir}"],
        viewport={"width": 380, "height": HEIGHT},
    )
    try:
        sw = ctx.service_workers[0] if ctx.service_workers else ctx.wait_for_event("serviceworker")
        panel_url = f"chrome-extension://{sw.url.split('/')[2]}/sidepanel.html"
        panel = ctx.new_page()
        errors = watch_errors(panel)

        def sit() -> None:
            """A new table of Ana and nine bots, its seat held by the panel as after joining in it. A
            bot plays first, so an opponent's turn marker is on the table from the start."""
            room = api_room(server, "capitol", ["Ana"], bots=9, options={"first_player": 1})
            api_start(server, room)
            panel.goto(panel_url)
            seat = {"token": room["tokens"][0], "seat": 0, "name": "Ana"}
            key = f"conflictology:room:{room['code']}"
            panel.evaluate("([k, v]) => localStorage.setItem(k, v)", [key, json.dumps(seat)])
            panel.goto(f"{panel_url}?room={room['code']}")
            expect(panel.locator("body")).to_have_class("extension sidepanel")
            panel.wait_for_selector(".capitol-table .opponents .player")

        sit()
        # Through Ana's decisions, until the panel has been measured with an opponent's turn marker,
        # with Ana's answers on screen and with a choice of her own cards (every width each time). A
        # game may end before Ana chose a card of her own (her losses can all be forced, ruling 12a):
        # then she sits at a new table.
        seen, turn_tags, answers, card_choices, shot_taken = Seen(), 0, 0, set(), False
        deadline = time.monotonic() + 480
        while not (turn_tags and answers and card_choices and shot_taken):
            assert time.monotonic() < deadline, (turn_tags, answers, card_choices)
            if is_over(panel):
                sit()
                seen = Seen()
            choice = own_card_choice(panel)
            for width in WIDTHS:
                panel.set_viewport_size({"width": width, "height": HEIGHT})
                got = table_fit(panel, 9)
                assert_table_fits(got, 9)
                turn_tags += any(p["turn"] for p in got["panels"])
                answers += bool(got["answers"])
                if choice is not None and own_card_choice(panel) == choice:
                    assert panel.evaluate(OWN_CARDS_OFF_SCREEN) == [], (width, choice)
                    card_choices.add(choice)
                if width == 380 and any(p["turn"] for p in got["panels"]) and got["answers"]:
                    shot(panel, "capitol-10-players-side-panel", tmp_path)
                    shot_taken = True
            if not capitol_step(panel, seen):
                panel.wait_for_timeout(100)
        assert turn_tags and answers and card_choices and shot_taken, (turn_tags, answers, card_choices)
        assert errors == [], errors
    finally:
        ctx.close()
