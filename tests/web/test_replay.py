"""The replay viewer (/replay/GAME_ID) in a real browser: a Capitol game and a Conspiranoicos game,
played on a real server, stepped through with the buttons, the keyboard, the slider and ``?step=N``;
at each step checked the cards every seat held and the bluff marks against the engine's own replay
of the archived game. A stranger's browser is refused a private room's game."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from browser_helpers import WebServer, run_server, shot, watch_errors
from conflictology import games
from conflictology.engine import GameState
from server_helpers import Player, Server, auth, make_table, play_randomly, start

pytestmark = pytest.mark.browser

CLAIMS = {"banker", "mafia", "hacker", "reporter", "police_investigate", "police_swap"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    with run_server(tmp_path_factory.mktemp("replay"), bot_delay=0.0) as running:
        yield running


def finished(web: WebServer, game: str, bots: int) -> tuple[Any, dict[str, Any]]:
    """A private room's game played to its end (one person at random, bots), and its archived record."""
    srv = Server(web.url)
    table = make_table(srv, game, humans=1, bots=bots, level="random", settings={"timers": False})
    game_id = start(table)["game_id"]
    host = Player(srv, table.code, table.host_token, 0)
    play_randomly([host], seed=3)
    host.close()
    with web.api() as http:
        for _ in range(100):
            r = http.get(f"/api/games/{game_id}", headers=auth(table.host_token))
            if r.status_code == 200 and r.json()["status"] == "over":
                return table, r.json()
    raise AssertionError("the game was not archived")


def engine_states(record: dict[str, Any]) -> list[GameState]:
    """The engine's own states: the deal, then after each archived action."""
    game = games.get(record["game"])
    state = game.from_json(record["initial"])
    states = [state.clone()]
    for a in record["actions"]:
        state.apply(a["seat"], a["action"])
        states.append(state.clone())
    return states


def expected_marks(final: GameState) -> dict[int, list[str]]:
    """From the engine's final public log and its end summary: per log entry, the marks it carries."""
    view = final.view(None)
    log, claims = view["log"], view["summary"]["claims"]
    at = [
        i
        for i, e in enumerate(log)
        if (e["type"] == "action" and e["action"] in CLAIMS) or e["type"] == "block"
    ]
    marks: dict[int, list[str]] = {}
    for i, claim in zip(at, claims, strict=True):
        marks.setdefault(i, []).append("true" if claim["honest"] else "bluff")
        if claim["challenged"]:
            j = next(k for k in range(i + 1, len(log)) if log[k]["type"] == "challenge")
            marks.setdefault(j, []).append("won" if log[j + 1]["type"] == "bluff" else "lost")
    return marks


def remember_seat(page: Page, table: Any) -> None:
    """The seat stored as the game page stores it, before any page of the origin runs."""
    seat = json.dumps({"token": table.host_token, "seat": 0})
    script = f"localStorage.setItem('conflictology:room:{table.code}', {json.dumps(seat)})"
    page.context.add_init_script(script)


def open_viewer(page: Page, web: WebServer, table: Any, game_id: str, step: int | None = None) -> None:
    """The player's browser: its seat stored as the game page stores it, then the viewer."""
    remember_seat(page, table)
    query = f"?step={step}" if step is not None else ""
    page.goto(f"{web.url}/replay/{game_id}{query}#room={table.code}")
    expect(page.get_by_test_id("replay-step")).to_be_visible()


def cards(page: Page, seat: int, testid: str) -> list[str]:
    return list(page.locator(f"[data-seat='{seat}'] [data-testid={testid}] [data-card]").evaluate_all(
        "els => els.map(e => e.dataset.card)"
    ))


def step_shown(page: Page) -> int:
    text = page.get_by_test_id("replay-step").inner_text()
    return int(re.findall(r"\d+", text)[0])


def shown_marks(page: Page) -> dict[int, list[str]]:
    return dict(page.evaluate(
        """() => {
          const out = {};
          for (const li of document.querySelectorAll('.replay-log li:not(.later)')) {
            const m = [...li.querySelectorAll('.mark')].map(e => e.dataset.mark);
            if (m.length) out[li.dataset.i] = m;
          }
          return out;
        }"""
    ))


def quiet_step(states: list[GameState], log_len: list[int]) -> int | None:
    """A step that adds no line to the public log while the table still waits on others (a pass in
    a challenge window), if the game has one."""
    return next(
        (k for k in range(1, len(states))
         if log_len[k] == log_len[k - 1] and (states[k].view(None).get("pending") or {}).get("awaiting")),
        None,
    )  # fmt: skip


def test_stepping_through_a_capitol_game(browser: Browser, server: WebServer) -> None:
    # The deal is the server's: a short game may have no quiet step (a pass while others are still
    # asked), which the end of the test reads, so games are played until one has it (most do).
    for _ in range(20):
        table, record = finished(server, "capitol", bots=2)
        states = engine_states(record)
        final_marks = expected_marks(states[-1])
        log_len = [len(s.view(None)["log"]) for s in states]
        quiet = quiet_step(states, log_len)
        if final_marks and quiet is not None:
            break
    assert final_marks and quiet is not None, "20 games without a claim and a quiet step"
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    errors = watch_errors(page)
    # A step in the middle with a claim shown, straight from a share link.
    first_claim = min(final_marks)
    middle = next(k for k, n in enumerate(log_len) if n > first_claim)
    open_viewer(page, server, table, record["id"], step=middle)
    shot(page, "replay-capitol")

    def check(k: int) -> None:
        assert step_shown(page) == k
        state = states[k]
        for seat in range(len(record["players"])):
            own = state.view(seat)["players"][seat]
            assert cards(page, seat, "hidden") == own["hidden"], (k, seat)
            assert cards(page, seat, "revealed") == own["revealed"], (k, seat)
        want = {i: m for i, m in final_marks.items() if i < log_len[k]}
        assert shown_marks(page) == {str(i): m for i, m in want.items()}, k

    check(middle)
    page.keyboard.press("ArrowRight")
    check(middle + 1)
    assert page.url.split("?")[1].startswith(f"step={middle + 1}")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    check(middle - 1)
    page.locator("[data-k=first]").click()
    check(0)
    page.locator("[data-k=slider]").fill(str(len(states) // 2))
    check(len(states) // 2)
    page.locator("body").click()
    page.keyboard.press("End")
    check(len(states) - 1)
    expect(page.get_by_test_id("replay-end")).to_be_visible()
    expect(page.get_by_test_id("claims-summary")).to_be_visible()
    expect(page.get_by_test_id("figures")).to_be_visible()
    shot(page, "replay-capitol-end")
    # The exports: the JSON is the archived replay, the text names the players.
    with page.expect_download() as dl:
        page.locator("[data-k=export-text]").click()
    text = Path(dl.value.path()).read_text(encoding="utf-8")
    assert text.startswith("Conflictology: Capitol") and "Host" in text
    with page.expect_download() as dl:
        page.locator("[data-k=export-json]").click()
    assert json.loads(Path(dl.value.path()).read_text(encoding="utf-8"))["actions"] == record["actions"]

    # A step that adds no line to the public log (a pass in a challenge window), the table still
    # waiting on others: it says so in those words, never "Nothing shown to the table" beside the
    # "Awaiting: …" that follows it (issue 26).
    open_viewer(page, server, table, record["id"], step=quiet)
    now = page.get_by_test_id("replay-now")
    expect(now).to_contain_text("No new line in the game log at this step.")
    assert "Nothing shown" not in page.locator("#app").inner_text()
    names = [p["name"] for p in record["players"]]
    awaiting = [names[s] for s in states[quiet].view(None)["pending"]["awaiting"]]
    expect(page.locator(".replay-centre")).to_contain_text(f"Awaiting: {', '.join(awaiting)}")
    assert not errors, errors


def test_stepping_through_a_conspiranoicos_game(browser: Browser, server: WebServer) -> None:
    table, record = finished(server, "conspiranoicos", bots=1)
    states = engine_states(record)
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    errors = watch_errors(page)
    open_viewer(page, server, table, record["id"])
    assert step_shown(page) == 0
    picks = sorted({1, len(states) // 3, 2 * len(states) // 3, len(states) - 2, len(states) - 1})
    for k in picks:
        page.goto(f"{server.url}/replay/{record['id']}?step={k}#room={table.code}")
        expect(page.get_by_test_id("replay-step")).to_be_visible()
        assert step_shown(page) == k
        state = states[k]
        for seat in (0, 1):
            own = state.view(seat)
            assert cards(page, seat, "hand") == own["players"][seat]["hand"], (k, seat)
            assert cards(page, seat, "zone") == own["players"][seat]["zone"], (k, seat)
            assert cards(page, seat, "row") == own["players"][seat]["row"], (k, seat)
        # The Pyramid as it grew: every card face up, the face-down ones outlined.
        pyramid = state.view(0)["pyramid"]
        shown = page.locator("[data-testid=pyramid] [data-slot]").evaluate_all(
            "els => Object.fromEntries(els.map(e => "
            "[e.dataset.slot, e.querySelector('[data-card]')?.dataset.card || null]))"
        )
        assert shown == {str(s + 1): (p and p["seen"]) for s, p in enumerate(pyramid)}, k
        if state.view(None)["phase"] in ("play", "send", "keep"):
            assert page.get_by_test_id("round").inner_text().endswith(str(state.view(None)["round"]))
    shot(page, "replay-conspiranoicos-end")
    expect(page.get_by_test_id("score-breakdown")).to_be_visible()
    assert page.get_by_test_id("figures").inner_text().count("\n") >= 2
    assert not errors, errors


def test_a_stranger_is_refused_a_private_games_replay(browser: Browser, server: WebServer) -> None:
    table, record = finished(server, "capitol", bots=1)
    stranger = browser.new_context().new_page()
    stranger.goto(f"{server.url}/replay/{record['id']}?step=3")
    expect(stranger.get_by_test_id("replay-error")).to_be_visible()
    assert stranger.locator("[data-card]").count() == 0
    # The player's own game page links to it from the end screen.
    page = browser.new_context().new_page()
    errors = watch_errors(page)
    remember_seat(page, table)
    page.goto(f"{server.url}/?room={table.code}")
    link = page.locator("a[data-k=replay]")
    expect(link).to_be_visible()
    assert f"/replay/{record['id']}" in (link.get_attribute("href") or "")
    # After the rematch the lobby lists the earlier game, linked to its replay.
    with server.api() as http:
        r = http.post(f"/api/rooms/{table.code}/rematch", headers=auth(table.host_token))
        assert r.status_code == 200
    expect(page.locator(f"[data-testid=past-games] a[href*='/replay/{record['id']}']")).to_have_count(1)
    assert not errors, errors


def test_a_standing_tables_standings_in_the_lobby_the_end_screen_and_a_new_device(
    browser: Browser, server: WebServer
) -> None:
    srv = Server(server.url)
    table = make_table(srv, "conspiranoicos", humans=1, bots=1, level="random",
                       settings={"timers": False, "standing": True})
    page = browser.new_context().new_page()
    errors = watch_errors(page)
    remember_seat(page, table)
    page.goto(f"{server.url}/?room={table.code}")
    expect(page.get_by_test_id("standings-empty")).to_be_visible()
    game_id = start(table)["game_id"]
    host = Player(srv, table.code, table.host_token, 0)
    play_randomly([host], seed=5)
    host.close()
    # The end screen shows the standings with the finished game counted.
    row = page.locator("[data-testid=end] [data-testid=standings-table] tr[data-name='Host']")
    expect(row).to_be_visible()
    expect(row.locator("td").first).to_have_text("1")
    replay_link = f"[data-testid=end] [data-testid=standings] a[href*='/replay/{game_id}']"
    expect(page.locator(replay_link)).to_have_count(1)
    shot(page, "standings-end")
    with server.api() as http:
        r = http.post(f"/api/rooms/{table.code}/rematch", headers=auth(table.host_token))
        assert r.status_code == 200
    # Another device, no seat stored: it takes the seat back with the seat key.
    other = browser.new_context().new_page()
    other.goto(f"{server.url}/?room={table.code}")
    other.locator("[data-k=claim-key]").fill(table.host_token)
    other.locator("[data-k=claim]").click()
    expect(other.locator(".seats .seat.me .seat-name")).to_have_text("Host")
    # The host resets the standings.
    other.on("dialog", lambda d: d.accept())
    other.locator("[data-k=reset-standings]").click()
    expect(other.get_by_test_id("standings-empty")).to_be_visible()
    assert not errors, errors


def test_the_lobby_seats_a_personality_or_a_mystery_bot(browser: Browser, server: WebServer) -> None:
    table = make_table(Server(server.url), "capitol", humans=1, settings={"timers": False})
    page = browser.new_context().new_page()
    errors = watch_errors(page)
    remember_seat(page, table)
    page.goto(f"{server.url}/?room={table.code}&lang=es")
    select = page.locator("[data-k=bot-level]")
    # The options come with the server's list of levels, after the lobby shows.
    expect(select.locator("option[value=mystery]")).to_have_count(1)
    values = select.locator("option").evaluate_all("els => els.map(e => e.value)")
    wanted = {"heuristic-honest", "heuristic-bluffer", "heuristic-sceptic", "heuristic-aggressive", "mystery"}
    assert wanted <= set(values)
    select.select_option("heuristic-sceptic")
    expect(page.get_by_test_id("bot-about")).to_have_text("Desafía las declaraciones dudosas.")
    page.locator("[data-k=add-bot]").click()
    select = page.locator("[data-k=bot-level]")
    select.select_option("mystery")
    page.locator("[data-k=add-bot]").click()
    expect(page.locator(".seats .seat")).to_have_count(3)
    expect(page.locator(".seats .seat").nth(1)).to_contain_text("el escéptico")
    # The second bot, named in the table's language (issue 26), its personality kept a secret.
    expect(page.locator(".seats .seat").nth(2)).to_contain_text("Bot misterioso 2")
    expect(page.locator(".seats .seat").nth(2)).not_to_contain_text("el ")
    with server.api() as http:
        assert http.get(f"/api/rooms/{table.code}").json()["seats"][2]["level"] == "mystery"
    assert not errors, errors


def test_the_host_switches_the_tables_game_in_the_lobby(browser: Browser, server: WebServer) -> None:
    """A standing table's evening goes on with another game: the host picks it in the lobby; a game
    the seats do not fit is refused with the server's reason and the picker shows the room's game."""
    table = make_table(Server(server.url), "capitol", humans=1, bots=2, level="random",
                       settings={"timers": False, "standing": True})
    page = browser.new_context().new_page()
    errors = watch_errors(page)
    remember_seat(page, table)
    page.goto(f"{server.url}/?room={table.code}")
    picker = page.locator("[data-k=game]")
    expect(picker).to_have_value("capitol")
    picker.select_option("conspiranoicos")  # three seated: Conspiranoicos seats two
    expect(page.locator("#toast")).to_have_text("This game needs a different number of players.")
    expect(page.locator("[data-k=game]")).to_have_value("capitol")
    expect(page.locator(".lobby-title")).to_have_text("Capitol")
    page.locator("[data-k=kick-2]").click()
    expect(page.locator(".seats .seat")).to_have_count(2)
    page.locator("[data-k=game]").select_option("conspiranoicos")
    expect(page.locator(".lobby-title")).to_have_text("Conspiranoicos")
    with server.api() as http:
        assert http.get(f"/api/rooms/{table.code}").json()["game"] == "conspiranoicos"
    # The refused switch's 409 is the only console line the browser writes.
    assert [e for e in errors if "status of 409" not in e] == [], errors
