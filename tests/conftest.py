"""Fixtures every test module shares."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

# The shared helpers assert too: their failures say what they compared, as a test's own asserts do.
pytest.register_assert_rewrite(
    "bot_helpers", "browser_helpers", "capitol_helpers", "postgres_helpers", "redis_helpers",
    "room_helpers", "server_helpers", "pool_bots", "replay_builders",
)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """pytest-playwright's launch arguments, pointed at Debian's Chromium (testing-recipes.md)."""
    from browser_helpers import launch_args  # (imported here: game tests need no browser libraries)

    return launch_args(browser_type_launch_args)


@pytest.fixture(autouse=True)
def patient_browser_expectations(request: pytest.FixtureRequest) -> None:
    """Every browser test's ``expect`` waits browser_helpers.PATIENT_MS for what it checks."""
    if request.node.get_closest_marker("browser") is not None:
        from playwright.sync_api import expect

        from browser_helpers import PATIENT_MS

        expect.set_options(timeout=PATIENT_MS)


@pytest.fixture(autouse=True)
def browser_contexts_closed(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every browser context a test opens is closed when the test ends, passed or failed. The browser
    lives for the whole session: a page left open keeps its timers and its socket running (reconnecting
    to a server its test stopped), and a suite that piles them up slows every later test (a page.goto
    that timed out right after another test failed)."""
    if "browser" not in request.fixturenames:
        yield
        return
    browser = request.getfixturevalue("browser")
    before = set(browser.contexts)
    yield
    for context in browser.contexts:
        if context not in before:
            with contextlib.suppress(Exception):  # a context its browser already lost
                context.close()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Browser tests last: Playwright's sync API keeps its event loop running in the main thread for
    the rest of the session once started, and every later ``asyncio.run`` would refuse to start."""
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)
