"""The web client in a real browser: whole games played through the UI alone, several players in
several browser contexts, against a real server (Playwright driving Debian's Chromium)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from browser_helpers import (
    Seen,
    WebServer,
    capitol_step,
    conspiranoicos_step,
    create_room,
    free_port,
    join_by_code,
    join_by_link,
    play_until_over,
    run_server,
    shot,
    watch_errors,
)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    with run_server(tmp_path_factory.mktemp("web")) as running:
        yield running

LAPTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}


def new_page(browser: Browser, **kwargs: object) -> Page:
    ctx = browser.new_context(viewport=kwargs.pop("viewport", LAPTOP), **kwargs)  # type: ignore[arg-type]
    return ctx.new_page()


EARLY_SUMMARY = "!!document.querySelector('[data-testid=claims-summary]') && !document.querySelector('.end')"


def test_capitol_full_game_two_people_and_a_bot(
    browser: Browser, server: WebServer, tmp_path: Path
) -> None:
    base = server.url
    ana = new_page(browser, locale="en-US")
    ben = new_page(browser, locale="en-US")
    errors_ana, errors_ben = watch_errors(ana), watch_errors(ben)

    code = create_room(ana, base, "capitol", "Ana")
    assert len(code) >= 4
    # The lobby offers the code, the link and a QR code of the link.
    expect(ana.locator(".share .link")).to_have_text(f"{base}/?room={code}")
    assert ana.locator(".qr svg path").count() == 1
    join_by_link(ben, base, code, "Ben")
    expect(ana.locator(".seats .seat")).to_have_count(2)
    # Only the host may start or add bots.
    assert ben.locator("[data-k=start]").count() == 0
    ana.locator("[data-k=bot-level]").select_option("random")
    ana.click("[data-k=add-bot]")
    expect(ana.locator(".seats .seat")).to_have_count(3)
    expect(ben.locator(".seats .seat")).to_have_count(3)
    # The bot is named by its number and level in the reader's words, its tag says it is a bot.
    expect(ben.locator(".seats .seat").nth(2)).to_contain_text("Bot 1 · random")
    expect(ben.locator(".seats .seat").nth(2).locator(".tag.bot")).to_have_text("bot")
    shot(ana, "lobby", tmp_path)
    ana.click("[data-k=start]")

    for page in (ana, ben):
        page.wait_for_selector(".capitol-table")
        expect(page.locator("[data-testid=banner]")).not_to_be_empty()
        # Your own two influence cards face up to you; the others' face down.
        expect(page.locator(".my-hand .card-art")).to_have_count(2)
        expect(page.locator(".opponents .player")).to_have_count(2)
    shot(ana, "capitol-table", tmp_path)

    seen = Seen()
    shots_taken: set[str] = set()

    def on_step(n: int) -> None:
        for page in (ana, ben):
            # The claims summary is the end's alone: nothing of it shows while the game goes on (one
            # evaluate, so the page cannot re-render between the two looks).
            assert not page.evaluate(EARLY_SUMMARY)
        # Keep pictures of a response prompt and of a threat (a card to lose or show), the first time
        # each shows up: two different moments (a claim against you is both, and made them one picture).
        for page in (ana, ben):
            classes = page.locator("[data-testid=banner]").get_attribute("class") or ""
            card_prompt = page.locator(".my-hand .card-btn.lose, .my-hand .card-btn.show").count()
            if "threat" in classes and card_prompt and "threat" not in shots_taken:
                shots_taken.add("threat")
                shot(page, "capitol-threat", tmp_path)
            responding = page.locator("[data-k=act-challenge]").count() and "threat" not in classes
            if responding and "respond" not in shots_taken:
                shots_taken.add("respond")
                shot(page, "capitol-respond", tmp_path)

    play_until_over([ana, ben], capitol_step, seen, on_step=on_step)
    assert seen.decisions > 5
    assert seen.countdowns > 0
    # Turns, responses and at least one card prompt (lose, show, keep, return) came up.
    assert {"turn", "respond"} <= seen.kinds and len(seen.kinds) >= 3, seen.kinds
    for page in (ana, ben):
        end = page.locator("[data-testid=end]")
        expect(end).to_be_visible()
        expect(page.locator("[data-testid=banner]")).to_have_class("banner over")
        # The log names players by name and never by seat number.
        log = page.locator(".log-list").inner_text()
        assert "Seat 0" not in log and "Ana" in log
        # The end summary: a row per player, each claim marked honest (✓) or bluff (✗); the people
        # claimed a role on most of their turns, so there are claims to show.
        summary = end.locator("[data-testid=claims-summary]")
        expect(summary).to_be_visible()
        expect(summary.locator("caption")).to_have_text("Claims and bluffs")
        expect(summary.locator("tbody tr[data-seat]")).to_have_count(3)
        assert summary.locator("tbody tr[data-seat]").first.locator("th").inner_text().startswith("Ana")
        claims = summary.locator(".claim")
        assert claims.count() >= 2
        marks = claims.locator(".mark").all_inner_texts()
        assert set(marks) <= {"✓", "✗"}
        counts = summary.locator("tbody tr[data-seat] td.num:nth-of-type(1)")
        bluffs = [int(x) for x in counts.all_inner_texts()]
        assert sum(bluffs) == marks.count("✗") == summary.locator(".claim.bluff").count()
    expect(ana.locator("[data-k=rematch]")).to_be_visible()
    assert ben.locator("[data-k=rematch]").count() == 0
    shot(ana, "capitol-end", tmp_path)

    # Rematch: everyone goes back to the lobby of the same room.
    ana.click("[data-k=rematch]")
    expect(ana.locator(".lobby")).to_be_visible()
    expect(ben.locator(".lobby")).to_be_visible()
    assert errors_ana == [] and errors_ben == [], errors_ana + errors_ben


def test_conspiranoicos_full_game_through_the_ui(
    browser: Browser, server: WebServer, tmp_path: Path
) -> None:
    base = server.url
    ana = new_page(browser)
    ben = new_page(browser)
    errors_ana, errors_ben = watch_errors(ana), watch_errors(ben)
    code = create_room(ana, base, "conspiranoicos", "Ana")
    join_by_code(ben, base, code, "Ben")
    expect(ana.locator(".seats .seat")).to_have_count(2)
    # Conspiranoicos is for two: no room for a bot once both are seated.
    assert ana.locator("[data-k=add-bot]").count() == 0
    ana.click("[data-k=start]")
    for page in (ana, ben):
        page.wait_for_selector(".consp-table")
        expect(page.locator(".consp-player.mine .hand .card-btn")).to_have_count(2)
        # The opponent's hand shows backs only.
        expect(page.locator(".consp-player.theirs .hand .card-art.back")).to_have_count(2)
    shot(ana, "conspiranoicos-table", tmp_path)

    seen = Seen()
    taken: set[str] = set()

    def on_step(n: int) -> None:
        for page in (ana, ben):
            if page.locator("[data-k=send-zone]").count() and "send" not in taken:
                taken.add("send")
                shot(page, "conspiranoicos-send", tmp_path)
            if page.locator("[data-testid=row-arranger]").count() and "build" not in taken:
                taken.add("build")
                shot(page, "conspiranoicos-build", tmp_path)

    play_until_over([ana, ben], conspiranoicos_step, seen, on_step=on_step)
    assert seen.decisions >= 12  # six rounds, two plays each
    for page in (ana, ben):
        table = page.locator("[data-testid=score-breakdown]")
        expect(table).to_be_visible()
        # Six criteria and a total.
        expect(table.locator("tbody tr")).to_have_count(6)
        totals = table.locator("tfoot td").all_inner_texts()
        assert len(totals) == 2 and all(t.strip().isdigit() for t in totals)
    shot(ana, "conspiranoicos-end", tmp_path)
    assert errors_ana == [] and errors_ben == [], errors_ana + errors_ben


def test_phone_layout_spanish_reconnect_and_spectator(
    browser: Browser, server: WebServer, tmp_path: Path
) -> None:
    base = server.url
    # A phone held upright, in Spanish (from the browser's language).
    phone = new_page(browser, viewport=PHONE, locale="es-ES", is_mobile=True, has_touch=True)
    errors = watch_errors(phone)
    phone.goto(base + "/")
    expect(phone.locator("h1")).to_have_text("Engaña a tus amigos, en línea.")
    expect(phone.locator("html")).to_have_attribute("lang", "es")
    shot(phone, "home-phone-es", tmp_path)
    code = create_room(phone, base, "capitol", "Lucía")
    expect(phone.locator("[data-k=start]")).to_have_text("Faltan jugadores (mínimo 2)")
    phone.click("[data-k=add-bot]")
    phone.click("[data-k=start]")
    phone.wait_for_selector(".capitol-table")
    # Nothing overflows the phone's width.
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], width
    expect(phone.locator(".my-hand .card-art").first).to_have_attribute(
        "aria-label", re.compile(r"Banquero|Mafia|Hacker|Juez|Periodista|Policía")
    )
    shot(phone, "capitol-phone-es", tmp_path)

    # The language switch turns the whole UI to English and back.
    phone.click("[data-k=lang]")
    phone.click("[data-k=lang-en]")
    expect(phone.locator("[data-k=rules]")).to_have_text("Rules")
    phone.click("[data-k=rules]")
    expect(phone.locator("dialog.rules")).to_be_visible()
    expect(phone.locator("dialog.rules h2")).to_have_text("Capitol")
    phone.keyboard.press("Escape")
    phone.click("[data-k=lang]")
    phone.click("[data-k=lang-es]")
    expect(phone.locator("[data-k=rules]")).to_have_text("Reglas")

    # A reload keeps the seat: the token lives in the browser, the client reconnects by itself.
    phone.reload()
    phone.wait_for_selector(".capitol-table")
    # Still seated: the same player's two influence cards (face down or lost), not a spectator's table.
    expect(phone.locator(".my-hand .card-art")).to_have_count(2)
    expect(phone.locator(".me-area .pname")).to_contain_text("Lucía")
    expect(phone.locator("#conn")).to_have_class("conn open")

    # A network drop: the socket closes, the banner of the connection says so, and it comes back.
    phone.context.set_offline(True)
    phone.evaluate("window.dispatchEvent(new Event('offline'))")
    expect(phone.locator("#conn")).to_have_class("conn retrying")
    expect(phone.locator("#conn")).to_have_text("Reconectando…")
    phone.context.set_offline(False)
    phone.evaluate("window.dispatchEvent(new Event('online'))")
    expect(phone.locator("#conn")).to_have_class("conn open")
    # Back in the seat, the table as it was.
    expect(phone.locator(".my-hand .card-art")).to_have_count(2)

    # A spectator sees the table but no hand of their own and no controls.
    watcher = new_page(browser, locale="en-US")
    watcher.goto(f"{base}/?room={code}&watch=1")
    watcher.wait_for_selector(".capitol-table")
    expect(watcher.locator(".banner .tag")).to_have_text("Spectator")
    assert watcher.locator(".me-area").count() == 0
    assert watcher.locator(".controls").count() == 0
    # Hidden information: the spectator sees no face of a face-down card.
    expect(watcher.locator(".opponents .player")).to_have_count(2)
    shot(watcher, "capitol-spectator", tmp_path)
    assert errors == [], errors


def wait_until_saved_playing(db: Path, code: str, timeout: float = 60.0) -> None:
    """Until the room's snapshot in the server's SQLite file shows its game started."""
    from conflictology.server.store import Store

    store = Store(f"sqlite:///{db}")
    try:
        deadline = time.monotonic() + timeout
        while not any(s["code"] == code and s["status"] == "playing" for s in store.load_rooms()):
            assert time.monotonic() < deadline, "the started game was never saved"
            time.sleep(0.02)
    finally:
        store.close()


def test_reconnects_by_itself_after_the_server_restarts(browser: Browser, tmp_path: Path) -> None:
    page = new_page(browser, locale="en-US")
    other = new_page(browser, locale="en-US")
    errors = watch_errors(page)
    port = free_port()
    labels = "els => els.map(e => e.getAttribute('aria-label'))"
    with run_server(tmp_path, port=port) as first:
        # Two people and no bot: nothing moves while the server is away (timers are a minute long).
        code = create_room(page, first.url, "capitol", "Ana")
        join_by_link(other, first.url, code, "Ben")
        page.click("[data-k=start]")
        page.wait_for_selector(".capitol-table")
        hand = page.locator(".my-hand .card-art").evaluate_all(labels)
        # What this test is about is the page finding its seat again, not the last 50 ms of changes
        # (a SIGKILL may lose them: docs/protocol.md): the start must be on disk before the kill.
        wait_until_saved_playing(tmp_path / "web.sqlite3", code)
        # The network drops: the server dies at once.
        first.proc.kill()
        first.proc.wait()
        expect(page.locator("#conn")).to_have_class("conn retrying")
        expect(page.locator("#conn")).to_have_text("Reconnecting…")
    # The server comes back (same port, same database): the page finds its seat again by itself.
    with run_server(tmp_path, port=port):
        expect(page.locator("#conn")).to_have_class("conn open", timeout=20000)
        expect(page.locator(".capitol-table")).to_be_visible()
        assert page.locator(".my-hand .card-art").evaluate_all(labels) == hand
        # And play goes on: whoever's turn it is can act.
        expect(page.locator("[data-testid=banner]")).not_to_be_empty()
    # Errors the browser logs for the refused connections while the server was down are expected.
    assert [e for e in errors if "WebSocket" not in e and "ERR_CONNECTION_REFUSED" not in e] == []


def tab_to(page: Page, key: str, presses: int = 80) -> None:
    """Move the keyboard focus with Tab alone until it reaches the control ``data-k=key``."""
    for _ in range(presses):
        if page.evaluate("document.activeElement && document.activeElement.dataset.k") == key:
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"{key} is not reachable with the keyboard")


def test_lobby_host_controls_kick_and_keyboard_play(browser: Browser, server: WebServer) -> None:
    base = server.url
    ana = new_page(browser, locale="en-US")
    ben = new_page(browser, locale="en-US")
    cat = new_page(browser, locale="en-US")
    code = create_room(ana, base, "capitol", "Ana")
    join_by_link(ben, base, code, "Ben")
    join_by_link(cat, base, code, "Cat")
    # The host changes a rule option; the others see it in the lobby.
    ana.locator("[data-k=opt-anyone_challenges_block]").check()
    expect(ben.locator(".option-summary")).to_contain_text("Anyone may challenge a block")
    expect(ben.locator(".option-summary li").nth(1)).to_contain_text("on")
    ana.locator("[data-k=opt-steal_blockers-mafia]").check()
    expect(cat.locator(".option-summary li").nth(2)).to_contain_text("Mafia")
    # The host removes Ben: his page says so and offers to join again.
    ana.click("[data-k=kick-1]")
    expect(ana.locator(".seats .seat")).to_have_count(2)
    expect(ben.locator("#toast")).to_have_text("You no longer hold a seat in this room.")
    expect(ben.locator("[data-k=join-name]")).to_be_visible()
    # Seats renumbered: Cat is seat 1 now and still recognises herself.
    expect(cat.locator(".seat.me")).to_contain_text("Cat")
    cat.click("[data-k=leave]")
    expect(cat.locator("form.create")).to_be_visible()
    expect(ana.locator(".seats .seat")).to_have_count(1)

    # Keyboard only: start, then take a turn with Tab and Enter.
    ana.click("[data-k=add-bot]")
    expect(ana.locator(".seats .seat")).to_have_count(2)
    ana.locator("body").focus()
    tab_to(ana, "start")
    ana.keyboard.press("Enter")
    ana.wait_for_selector(".capitol-table")
    deadline = time.monotonic() + 120  # (the bots' turns before hers, however slow the machine)
    while time.monotonic() < deadline:
        if ana.locator("[data-k=act-income]:enabled").count():
            tab_to(ana, "act-income")
            ana.keyboard.press("Enter")
            expect(ana.locator(".log-list")).to_contain_text("Ana takes Income.")
            break
        if ana.locator("[data-k=act-pass]:enabled").count():
            try:
                tab_to(ana, "act-pass")
            except AssertionError:
                if ana.locator("[data-k=act-pass]:enabled").count():
                    raise  # still offered, and the keyboard never reached it
                continue  # the window closed while she tabbed (slowly, on a loaded machine)
            ana.keyboard.press("Enter")
        ana.wait_for_timeout(100)
    else:
        raise AssertionError("Ana never got a turn")


def test_lobby_seat_follows_the_servers_you_even_with_twin_names(browser: Browser, server: WebServer) -> None:
    """Seats renumber when someone leaves the lobby; the lobby messages' `you` says which seat is whose,
    where following a seat by name could not tell two players of the same name apart."""
    base = server.url
    ana, cy, sam1, sam2 = (new_page(browser, locale="en-US") for _ in range(4))
    code = create_room(ana, base, "capitol", "Ana")
    join_by_link(cy, base, code, "Cy")
    join_by_link(sam1, base, code, "Sam")
    join_by_link(sam2, base, code, "Sam")
    expect(ana.locator(".seats .seat")).to_have_count(4)
    mine = "els => els.findIndex(e => e.classList.contains('me'))"
    expect(sam2.locator(".seats .seat")).to_have_count(4)
    assert sam1.locator(".seats .seat").evaluate_all(mine) == 2
    assert sam2.locator(".seats .seat").evaluate_all(mine) == 3
    ana.click("[data-k=kick-1]")  # Cy leaves: both Sams move up a seat
    for page, seat in ((sam1, 1), (sam2, 2)):
        expect(page.locator(".seats .seat")).to_have_count(3)
        expect(page.locator(".seats .seat.me")).to_have_count(1)
        assert page.locator(".seats .seat").evaluate_all(mine) == seat
    for page in (ana, cy, sam1, sam2):
        page.context.close()


def test_i18n_files_have_the_same_keys(page: Page, server: WebServer) -> None:
    """Every language the client offers (js/i18n.js LANGUAGES, all eight) has every key of en.js and
    none of its own, and a rules sheet of the same sections and items, the Capitol sheet saying how the
    target's one prompt (challenge, block or let it pass) maps onto the rules."""
    page.goto(server.url + "/")
    got = page.evaluate(
        """async () => {
          const { LANGUAGES } = await import('/js/i18n.js');
          const en = LANGUAGES.en;
          const keys = (o, p = '') => Object.entries(o).flatMap(([k, v]) =>
            v && typeof v === 'object' && !Array.isArray(v) ? keys(v, p + k + '.') : [p + k]);
          const shape = (d) => ['capitol', 'conspiranoicos']
            .map((g) => d.rules[g].map((s) => s.items.length).join());
          const a = new Set(keys(en));
          const out = {};
          for (const [code, dict] of Object.entries(LANGUAGES)) {
            const b = new Set(keys(dict));
            out[code] = { missing: [...a].filter((k) => !b.has(k)), extra: [...b].filter((k) => !a.has(k)),
              rules: shape(dict).join('|') === shape(en).join('|') };
          }
          // The rules sheet says how the target's one prompt maps onto the rules (issue 26).
          out.onePrompt = en.rules.capitol.flatMap((s) => s.items).filter((i) => i.includes('answers once'));
          return out;
        }"""
    )
    assert len(got.pop("onePrompt")) == 1
    assert sorted(got) == ["de", "en", "es", "fr", "it", "pl", "pt", "tr"]
    for code, found in got.items():
        assert found == {"missing": [], "extra": [], "rules": True}, (code, found)


def test_bad_code_and_errors_are_shown(page: Page, server: WebServer) -> None:
    page.goto(server.url + "/?room=ZZZZZ")
    expect(page.locator("main h2")).to_have_text("This room does not exist (any more).")
    page.goto(server.url + "/")
    page.fill("[data-k=join-code]", "QQQQQ")
    page.fill("[data-k=join-name]", "Eve")
    page.click("[data-k=join]")
    expect(page.locator("#toast")).to_have_text("There is no room with that code.")
