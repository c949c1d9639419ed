"""Learn to play (issue 27): a practice game against a bot with a coach, played in a real browser
to the end (Playwright driving Debian's Chromium), and the practice room on the server."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from browser_helpers import (
    Seen,
    WebServer,
    api_room,
    api_start,
    capitol_step,
    conspiranoicos_step,
    is_over,
    open_seat,
    run_server,
    watch_errors,
)
from conflictology import games
from conflictology.server import practice
from conflictology.server.protocol import RoomSettings
from conflictology.server.rooms import Room

pytestmark = pytest.mark.browser

LAPTOP = {"width": 1280, "height": 860}
# js/coach.js LESSONS.capitol, in the rules' order; the practice deal (scripts/practice_seeds.py)
# brings every one of them up when the game is played the way capitol_step plays it.
CAPITOL_LESSONS = ["income", "claim", "challenge", "block", "lose", "hacker", "police", "reporter", "scandal"]
# js/coach.js LESSONS.conspiranoicos: the practice deal brings up every one of them too, the player's
# own Abduction and Gnome Revelation and a round they win among them (scripts/practice_seeds.py).
SCORING_LESSONS = ["scoreFinal", "scoreSequence", "scoreRun", "scoreTriple", "scorePairs", "scoreMajority"]
CONSPIRANOICOS_LESSONS = ["challengeCard", "send", "tie", "final", "specials", "row", *SCORING_LESSONS]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    with run_server(tmp_path_factory.mktemp("coach")) as running:
        yield running


def new_page(browser: Browser, locale: str = "en-US") -> Page:
    return browser.new_context(viewport=LAPTOP, locale=locale).new_page()


def learn(page: Page, base: str, name: str = "Ana", game: str = "capitol") -> None:
    page.goto(base + "/")
    page.locator(f"[data-k=game-{game}]").check()
    page.locator("[data-k=create-name]").fill(name)
    page.locator("[data-k=learn]").click()
    expect(page.locator("[data-testid=banner]")).to_be_visible(timeout=20_000)


def coach(page: Page):  # a Locator
    return page.locator("[data-testid=coach]")


def shown_lesson(page: Page) -> str:
    return coach(page).get_attribute("data-lesson") or "" if coach(page).count() else ""


def test_a_practice_game_played_to_the_end_shows_every_capitol_lesson(
    browser: Browser, server: WebServer
) -> None:
    page = new_page(browser)
    errors = watch_errors(page)
    learn(page, server.url)
    region = coach(page)
    expect(region).to_have_attribute("role", "region")
    expect(region).to_have_attribute("aria-label", "Coach")
    expect(region).to_have_attribute("aria-live", "polite")
    # The bot plays first in the practice deal: its claim is the first lesson, in the rulebook's words.
    expect(region).to_have_attribute("data-lesson", "challenge")
    expect(region).to_contain_text("every other player may challenge or pass")

    shown: list[str] = []
    seen = Seen()
    deadline_steps = 2000
    while deadline_steps:
        deadline_steps -= 1
        lesson = shown_lesson(page)
        if lesson:
            if not shown or shown[-1] != lesson:
                shown.append(lesson)
                assert page.locator(".coach-text").inner_text().strip()
            page.locator("[data-k=coach-ok]").click()
            expect(region).not_to_have_attribute("data-lesson", lesson)
            continue
        # The last move's lesson (a Scandal that ends it) is drawn with the end: read after the end is.
        if is_over(page) and not shown_lesson(page):
            break
        if not capitol_step(page, seen):
            page.wait_for_timeout(60)
    assert is_over(page)
    # Every lesson, once each, in the order the game brought them up.
    assert sorted(shown) == sorted(CAPITOL_LESSONS), shown
    assert len(shown) == len(set(shown))
    # With nothing left to say, the coach says it waits; the end offers a real room.
    expect(region).to_contain_text("The coach will speak up")
    offer = page.locator("[data-testid=coach-end]")
    expect(offer).to_contain_text("You have seen every lesson")
    page.locator("[data-k=coach-real]").click()
    # A normal room: its lobby, and no practice about it.
    expect(page.locator(".lobby")).to_be_visible()
    code = re.search(r"room=([A-Z0-9]+)", page.url).group(1)  # type: ignore[union-attr]
    room = httpx.get(f"{server.url}/api/rooms/{code}").json()
    assert room["settings"]["practice"] is False and room["status"] == "lobby"
    assert errors == []


def bot_first_step(page: Page, seen: Seen) -> bool:
    """conspiranoicos_step, playing a round's card only once the bot's is in: the bot's dice are the
    state's number, so the practice deal's game (scripts/practice_seeds.py) needs the bot first."""
    mine = page.locator(".consp-player.mine .card-btn.play:enabled")
    bots_slot = page.locator(".table-area .plays .play-slot").nth(1)
    if mine.count() and bots_slot.locator(".empty-card").count():
        return False
    return conspiranoicos_step(page, seen)


def test_a_practice_game_played_to_the_end_shows_every_conspiranoicos_lesson(
    browser: Browser, server: WebServer
) -> None:
    page = new_page(browser)
    errors = watch_errors(page)
    learn(page, server.url, game="conspiranoicos")
    region = coach(page)
    expect(region).to_have_attribute("data-lesson", "challengeCard")
    expect(region).to_contain_text("the top card of the challenge deck is turned face up")

    shown: list[str] = []
    # The scoring lessons are told on the player's own row: each shown with the arranger and its
    # preview of that criterion on the page.
    beside_row: dict[str, bool] = {}
    texts: dict[str, str] = {}
    seen = Seen()
    deadline_steps = 2000
    while deadline_steps:
        deadline_steps -= 1
        lesson = shown_lesson(page)
        if lesson:
            if not shown or shown[-1] != lesson:
                shown.append(lesson)
                texts[lesson] = page.locator(".coach-text").inner_text().strip()
                assert texts[lesson]
                beside_row[lesson] = page.locator("[data-testid=row-arranger]").is_visible()
            page.locator("[data-k=coach-ok]").click()
            expect(region).not_to_have_attribute("data-lesson", lesson)
            continue
        # The last move's lesson (a Scandal that ends it) is drawn with the end: read after the end is.
        if is_over(page) and not shown_lesson(page):
            break
        if not bot_first_step(page, seen):
            page.wait_for_timeout(60)
    assert is_over(page)
    assert sorted(shown) == sorted(CONSPIRANOICOS_LESSONS), shown
    assert len(shown) == len(set(shown))
    # In the rules' order where they arise together: the specials, the row, then the six criteria.
    assert shown[-8:] == ["specials", "row", *SCORING_LESSONS], shown
    assert all(beside_row[lesson] for lesson in SCORING_LESSONS), beside_row
    # The row is told as the page builds it (sorted freely, then confirmed: the rulebook's "sort the
    # cards in their hand freely and present them simultaneously"), the sequence as the rules count it.
    assert "sort them freely into your row" in texts["row"] and "once you confirm it" in texts["row"]
    assert "(a repeated value is skipped)" in texts["scoreSequence"]
    expect(region).to_contain_text("The coach will speak up")
    expect(page.locator("[data-testid=coach-end]")).to_contain_text("You have seen every lesson")
    assert errors == []


def test_the_coach_is_skipped_resumed_and_remembered(browser: Browser, server: WebServer) -> None:
    page = new_page(browser)
    learn(page, server.url)
    region = coach(page)
    expect(region).to_have_attribute("data-lesson", "challenge")
    page.locator("[data-k=coach-skip]").click()
    expect(region).to_have_attribute("data-lesson", "")
    expect(region).to_contain_text("The coach is off.")
    page.reload()
    expect(page.locator("[data-testid=banner]")).to_be_visible()
    expect(coach(page)).to_contain_text("The coach is off.")
    page.locator("[data-k=coach-resume]").click()
    # Skipping read nothing: the lesson it hid comes back.
    expect(coach(page)).to_have_attribute("data-lesson", "challenge")
    page.locator("[data-k=coach-ok]").click()
    expect(coach(page)).to_contain_text("The coach will speak up")
    page.reload()
    expect(page.locator("[data-testid=banner]")).to_be_visible()
    # What was read stays read: the same decision, and the coach waits for something new.
    expect(coach(page)).to_contain_text("The coach will speak up")
    expect(coach(page)).to_have_attribute("data-lesson", "")


def test_spanish_learn_to_play_and_coach(browser: Browser, server: WebServer) -> None:
    page = new_page(browser, locale="es-ES")
    page.goto(server.url + "/")
    expect(page.locator("[data-k=learn]")).to_have_text("Aprende a jugar")
    learn(page, server.url, "Eva")
    region = coach(page)
    expect(region).to_have_attribute("aria-label", "Entrenador")
    expect(region).to_contain_text("Desafiar y ser desafiado")
    expect(page.locator("[data-k=coach-ok]")).to_have_text("Entendido")


def test_spanish_conspiranoicos_coach(browser: Browser, server: WebServer) -> None:
    page = new_page(browser, locale="es-ES")
    learn(page, server.url, "Eva", game="conspiranoicos")
    region = coach(page)
    expect(region).to_have_attribute("data-lesson", "challengeCard")
    expect(region).to_have_attribute("aria-label", "Entrenador")
    expect(page.locator(".coach-title")).to_have_text("La carta de desafío, y quién elige primero")
    expect(region).to_contain_text("la carta superior del mazo de desafíos")


def test_a_normal_room_has_no_coach(browser: Browser, server: WebServer) -> None:
    room = api_room(server, "capitol", ["Ana"], bots=1)
    api_start(server, room)
    page = new_page(browser)
    open_seat(page, server, room, 0, "Ana")
    expect(page.locator("[data-testid=banner]")).to_be_visible()
    expect(page.locator(".my-hand")).to_be_visible()
    assert coach(page).count() == 0


def test_practice_is_asked_at_creation_only(server: WebServer) -> None:
    with server.api() as http:
        r = http.post("/api/rooms", json={"game": "capitol", "name": "Ana", "practice": True,
                                          "settings": {"public": True, "spectators": True, "timers": True}})
        assert r.status_code == 201, r.text
        code, token = r.json()["code"], r.json()["token"]
        settings = http.get(f"/api/rooms/{code}").json()["settings"]
        # Whatever else was asked, a practice room is private, unwatched and untimed.
        assert settings["practice"] is True
        assert (settings["public"], settings["spectators"], settings["timers"], settings["standing"]) == (
            False, False, False, False)
        auth = {"Authorization": f"Bearer {token}"}
        # Never turned on or off afterwards: the settings a PATCH may change do not include it.
        for value in (False, True):
            r = http.patch(f"/api/rooms/{code}", json={"settings": {"practice": value}}, headers=auth)
            assert r.status_code == 400, r.text
        assert http.get(f"/api/rooms/{code}").json()["settings"]["practice"] is True
        # Nor is it a setting of a creation (only the body's own field).
        r = http.post("/api/rooms", json={"game": "capitol", "name": "Ana", "settings": {"practice": True}})
        assert r.status_code == 400, r.text
        r = http.post("/api/rooms", json={"game": "capitol", "name": "Ana"})
        assert http.get(f"/api/rooms/{r.json()['code']}").json()["settings"]["practice"] is False


@pytest.mark.parametrize("game", ["capitol", "conspiranoicos"])
def test_a_practice_room_deals_the_practice_deal(game: str) -> None:
    """Only the deal changes: the engine's own game from the practice seed, and bots' dice made of
    the state's number and the seat."""
    room, _ = Room.create("PRACT", game, "Ana", None, practice.practice_settings(RoomSettings()))
    room.add_bots(1, "easy")
    room.start(0.0)
    # The state's number the replay (scripts/practice_seeds.py) starts from.
    assert room.seq == 1
    dealt = games.get(game).new_game(players=2, seed=practice.DEAL_SEEDS[game], options={})
    assert room.state is not None and room.state.to_json() == dealt.to_json()
    # Never in a normal room: its deal is the server's random one.
    normal, _ = Room.create("NORML", game, "Ana", None, RoomSettings())
    normal.add_bots(1, "easy")
    normal.start(0.0)
    assert normal.state is not None and normal.state.to_json() != dealt.to_json()
    assert practice.bot_seed(5, 1) == practice.bot_seed(5, 1) != practice.bot_seed(6, 1)
