"""A newcomer under a name the table has is told apart, and the web client says so (issue 25)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from browser_helpers import WebServer, create_room, join_by_link, run_server

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    with run_server(tmp_path_factory.mktemp("web")) as running:
        yield running


def test_a_taken_name_is_told_apart_and_the_newcomer_is_told(browser: Browser, server: WebServer) -> None:
    ana = browser.new_context(locale="en-US").new_page()
    other = browser.new_context(locale="en-US").new_page()
    code = create_room(ana, server.url, "capitol", "Ana")
    join_by_link(other, server.url, code, "ANA")
    expect(other.locator("#toast")).to_have_text("That name is taken at this table: you play as ANA 2.")
    expect(other.locator(".seat.me")).to_contain_text("ANA 2")
    expect(ana.locator(".seats .seat")).to_have_count(2)
