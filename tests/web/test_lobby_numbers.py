"""Issue 29 in the lobby: the host of a seven-seat Capitol room picks the deck's copies of each role and
the stalemate rule's turns (numbers the game lists only when set, offered from GET /api/info's
`choices`), and the game starts with that deck."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser
from websockets.sync.client import connect

from browser_helpers import WebServer, api_room, api_start, open_seat, run_server, watch_errors
from server_helpers import eventually

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    with run_server(tmp_path_factory.mktemp("numbers")) as running:
        yield running


def room_options(server: WebServer, code: str) -> dict[str, Any]:
    with server.api() as http:
        return dict(http.get(f"/api/rooms/{code}").json()["options"])


def test_a_seven_seat_room_set_to_five_copies_deals_thirty_cards(browser: Browser, server: WebServer) -> None:
    room = api_room(server, "capitol", ["Ana"], bots=6)
    page = browser.new_context().new_page()
    errors = watch_errors(page)
    open_seat(page, server, room, 0, "Ana")
    copies = page.locator("[data-k=opt-copies]")
    copies.wait_for()
    assert copies.input_value() == ""  # left to the rules (four copies at seven seats)
    assert page.locator("[data-k=opt-copies] option").all_inner_texts() == ["by the rules", "3", "4", "5"]
    copies.select_option("5")
    page.wait_for_function("() => document.querySelector('[data-k=opt-copies]').value === '5'")
    page.locator("[data-k=opt-stalemate_turns]").select_option("20")
    page.wait_for_function("() => document.querySelector('[data-k=opt-stalemate_turns]').value === '20'")
    # The page sends each choice to the server as it is made: what the room holds is read until then.
    want_both = {"copies": 5, "stalemate_turns": 20}
    eventually(lambda: room_options(server, room["code"]), lambda got: got == want_both)
    page.locator("[data-k=opt-stalemate_turns]").select_option("")  # back to the rule's own 40
    page.wait_for_function("() => document.querySelector('[data-k=opt-stalemate_turns]').value === ''")
    eventually(lambda: room_options(server, room["code"]), lambda got: got == {"copies": 5})
    # Two choices made at once, before either's echo can arrive (one task of the page): both hold.
    page.evaluate("""() => {
      for (const [key, value] of [['copies', '3'], ['stalemate_turns', '80']]) {
        const select = document.querySelector(`[data-k=opt-${key}]`);
        select.value = value;
        select.dispatchEvent(new Event('change', { bubbles: true }));
      }
    }""")
    want_both = {"copies": 3, "stalemate_turns": 80}
    eventually(lambda: room_options(server, room["code"]), lambda got: got == want_both)
    page.locator("[data-k=opt-copies]").select_option("5")
    page.locator("[data-k=opt-stalemate_turns]").select_option("")
    eventually(lambda: room_options(server, room["code"]), lambda got: got == {"copies": 5})
    assert errors == [], errors
    page.context.close()

    api_start(server, room)
    url = server.url.replace("http://", "ws://") + f"/ws/{room['code']}?token={room['tokens'][0]}"
    with connect(url) as ws:
        while True:
            msg = json.loads(ws.recv(timeout=30))
            if msg["type"] == "state":
                break
    view = msg["view"]
    assert view["options"]["copies"] == 5 and "stalemate_turns" not in view["options"]
    players = view["players"]
    in_hands = sum(len(p["hidden"]) if isinstance(p["hidden"], list) else p["hidden"] for p in players)
    # Five of each of six roles, wherever they are now (the bots may have played already).
    assert in_hands + sum(len(p["revealed"]) for p in view["players"]) + view["deck"] == 30
