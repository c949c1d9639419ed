"""Issue 26, keyboard play on a desktop (js/keys.js): every decision on the table has a key, shown on its
button as a cap and declared with aria-keyshortcuts, and pressing it plays it.

The game modules are fed real engine views in a real browser with keys.js installed, for every kind of
decision of both games, in English and Spanish; then a real Capitol game on a real server is played with
the keyboard alone by two pages: Income by its letter, a target by its digit, Cancel by Escape, a lost
card by its digit, and keys left alone while typing or while the rules sheet is open."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from browser_helpers import WebServer, api_room, api_start, open_seat, patient_expectations, run_server
from capitol_helpers import B, H, J, M, P, R, table
from conflictology.games.conspiranoicos import GAME as CONSPIRANOICOS

pytestmark = pytest.mark.browser

LAPTOP = {"width": 1280, "height": 800}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    # A long grace: a seat nobody opens (Cat's) is not handed to a bot while the others play.
    with run_server(tmp_path_factory.mktemp("keys"), extra=("--grace", "3600")) as running:
        yield running


@pytest.fixture
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    return {**browser_context_args, "viewport": LAPTOP, "locale": "en-US"}


# Draws a game's table into #main as app.js does (its render, then keys.decorate), with the actions
# it plays kept in window.played; `c.rerender` draws it again (a target picker, a kept card).
DRAW = """async ({game, view, legal, you, lang}) => {
  const i18n = await import('/js/i18n.js');
  i18n.setLang(lang);
  const keys = await import('/js/keys.js');
  keys.install();
  const m = await import(`/js/${game}.js`);
  const names = ['Ana', 'Ben', 'Cat', 'Dan'];
  window.played = [];
  const ui = {};
  const draw = () => {
    const c = { view, legal, deadline: null, you, room: null, name: (s) => names[s],
      act: (a) => { window.played.push(a); }, busy: false, ui, rerender: draw, t: i18n.t, lang };
    let main = document.getElementById('main');
    if (!main) {
      main = document.createElement('main');
      main.id = 'main';
      document.body.replaceChildren(main);
    }
    main.replaceChildren(m.renderTable(c));
    keys.decorate();
  };
  draw();
}"""

# Every button in #main: its data-k, whether it may be pressed, its declared key and its cap (shown, and
# inside the button's box).
KEYED = """() => [...document.querySelectorAll('#main button[data-k]')].map((b) => {
  const cap = b.querySelector(':scope > kbd.key-cap');
  const r = b.getBoundingClientRect();
  const q = cap ? cap.getBoundingClientRect() : null;
  return { k: b.dataset.k, enabled: !b.disabled, key: b.getAttribute('aria-keyshortcuts'),
    cap: cap ? cap.textContent : null, capHidden: cap ? cap.getAttribute('aria-hidden') : null,
    shown: !!cap && cap.checkVisibility(),
    inside: !!q && q.width > 0 && q.left >= r.left && q.right <= r.right
      && q.top >= r.top && q.bottom <= r.bottom,
    small: !!q && q.width <= r.width / 2 && q.height <= 24 };
})"""


def draw(page: Page, game: str, view: dict[str, Any], legal: list[dict[str, Any]], you: int = 0,
         lang: str = "en") -> None:
    page.evaluate(DRAW, {"game": game, "view": view, "legal": legal, "you": you, "lang": lang})


def keys(page: Page) -> dict[str, str]:
    """data-k → key of every keyed button, having checked what every table must hold: each enabled
    button has a key, each key once, with its cap shown small in the button's box (a laptop), hidden
    from screen readers (the attribute says it)."""
    found = page.evaluate(KEYED)
    keyed = [b for b in found if b["key"]]
    assert [b["k"] for b in found if b["enabled"]] == [b["k"] for b in keyed], found
    assert len({b["key"] for b in keyed}) == len(keyed), found
    for b in keyed:
        assert b["shown"] and b["inside"] and b["small"] and b["capHidden"] == "true", b
        assert b["cap"] == {"Enter": "↵", "Escape": "Esc"}.get(b["key"], b["key"]), b
    return {b["k"]: b["key"] for b in keyed}


def played(page: Page) -> list[dict[str, Any]]:
    return list(page.evaluate("window.played"))


def wait_played(page: Page, timeout: float = 30.0) -> None:
    """Until the page played something. Polled with evaluate: the page's CSP (script-src 'self') refuses
    the eval behind a string wait_for_function, which fails whenever the first check is false."""
    deadline = time.monotonic() + timeout
    while not page.evaluate("window.played.length > 0"):
        assert time.monotonic() < deadline, "nothing was played"
        page.wait_for_timeout(20)


@pytest.fixture
def blank(page: Page, server: WebServer) -> Page:
    page.goto(server.url + "/")
    expect(page.locator("main#main")).to_be_attached()
    return page


# ---- Capitol, every decision ----------------------------------------------------------------------------


def test_capitol_turn_has_a_letter_per_action_in_each_language(blank: Page) -> None:
    page = blank
    s = table([[B, M], [H, J], [R, P]])
    view, legal = s.view(0), s.legal_actions(0)
    draw(page, "capitol", view, legal)
    # $2M: no Scandal nor Hacker, so those two buttons (disabled) have no key.
    assert keys(page) == {"act-income": "I", "act-foreign_aid": "F", "act-banker": "B", "act-mafia": "M",
                          "act-reporter": "R", "act-police_investigate": "P", "act-police_swap": "W"}
    page.keyboard.press("i")
    assert played(page) == [{"type": "income"}]

    rich = table([[B, M], [H, J], [R, P]])
    rich.money[0] += 5
    rich.treasury -= 5
    view, legal = rich.view(0), rich.legal_actions(0)
    draw(page, "capitol", view, legal)
    english = keys(page)
    assert english == {"act-income": "I", "act-foreign_aid": "F", "act-scandal": "S", "act-banker": "B",
                       "act-mafia": "M", "act-hacker": "H", "act-reporter": "R",
                       "act-police_investigate": "P", "act-police_swap": "W"}
    draw(page, "capitol", view, legal, lang="es")
    spanish = keys(page)
    # Ingreso, Ayuda Exterior, Escándalo, Banquero, Mafia, Hacker, Periodista, Policía: investigar / cambiar.
    assert spanish == {"act-income": "I", "act-foreign_aid": "A", "act-scandal": "E", "act-banker": "B",
                       "act-mafia": "M", "act-hacker": "H", "act-reporter": "R",
                       "act-police_investigate": "P", "act-police_swap": "C"}
    page.keyboard.press("a")
    page.keyboard.press("f")  # English Foreign Aid's letter means nothing in Spanish
    assert played(page) == [{"type": "foreign_aid"}]


def test_capitol_target_by_digit_and_escape_cancels(blank: Page) -> None:
    page = blank
    s = table([[B, M], [H, J], [R, P]])
    draw(page, "capitol", s.view(0), s.legal_actions(0))
    page.keyboard.press("m")
    expect(page.locator("[data-k=target-1]")).to_be_visible()
    assert keys(page) == {"target-1": "1", "target-2": "2", "cancel": "Escape"}
    page.keyboard.press("Escape")
    expect(page.locator("[data-k=act-income]")).to_be_visible()
    assert "act-mafia" in keys(page)
    assert played(page) == []
    page.keyboard.press("m")
    page.keyboard.press("2")
    assert played(page) == [{"type": "mafia", "target": 2}]


def test_capitol_responses_and_blocks(blank: Page) -> None:
    page = blank
    # The Hacker's target answers once: Challenge, Block as Judge, Let it pass.
    s = table([[H, M], [B, J], [R, P]])
    s.money[0] += 1
    s.treasury -= 1
    s.apply(0, {"type": "hacker", "target": 1})
    view, legal = s.view(1), s.legal_actions(1)
    draw(page, "capitol", view, legal, you=1)
    assert keys(page) == {"act-challenge": "C", "act-block-judge": "B", "act-pass": "P"}
    draw(page, "capitol", view, legal, you=1, lang="es")  # Desafiar, Bloquear, Dejar pasar
    assert keys(page) == {"act-challenge": "D", "act-block-judge": "B", "act-pass": "P"}
    page.keyboard.press("c")  # not Desafiar's letter
    page.keyboard.press("b")
    assert played(page) == [{"type": "block", "card": "judge"}]

    # Two blocks at once (steal_blockers): the second one's letter is taken, so it gets a digit.
    two = table([[B, M], [H, J]], steal_blockers=["police", "reporter"])
    two.apply(0, {"type": "mafia", "target": 1})
    draw(page, "capitol", two.view(1), two.legal_actions(1), you=1)
    assert keys(page) == {"act-challenge": "C", "act-block-police": "B", "act-block-reporter": "1",
                          "act-pass": "P"}
    page.keyboard.press("1")
    assert played(page) == [{"type": "block", "card": "reporter"}]

    # Blocked: the actor may challenge the block or accept it (Accept: A, Aceptar: A).
    blocked = table([[M, H], [B, J]])
    blocked.apply(0, {"type": "foreign_aid"})
    blocked.apply(1, {"type": "block", "card": "banker"})
    draw(page, "capitol", blocked.view(0), blocked.legal_actions(0))
    assert keys(page) == {"act-challenge": "C", "act-pass": "A"}
    page.keyboard.press("a")
    assert played(page) == [{"type": "pass"}]


def test_capitol_own_cards_by_digit_and_enter_confirms(blank: Page) -> None:
    page = blank
    # A Scandal: the target picks the card it loses.
    s = table([[M, H], [B, J]])
    s.money[0] += 5
    s.treasury -= 5
    s.apply(0, {"type": "scandal", "target": 1})
    draw(page, "capitol", s.view(1), s.legal_actions(1), you=1)
    assert keys(page) == {"card-0": "1", "card-1": "2"}
    page.keyboard.press("2")
    assert played(page) == [{"type": "lose", "card": "judge"}]

    # The Reporter keeps two of four: digits toggle, Enter confirms once the choice is whole.
    r = table([[R, H], [B, J], [M, P]])
    r.apply(0, {"type": "reporter"})
    r.apply(1, {"type": "pass"})
    r.apply(2, {"type": "pass"})
    draw(page, "capitol", r.view(0), r.legal_actions(0))
    assert keys(page) == {"card-0": "1", "card-1": "2", "card-2": "3", "card-3": "4"}
    page.keyboard.press("Enter")  # nothing chosen: Keep is disabled and has no key
    page.keyboard.press("1")
    page.keyboard.press("2")
    expect(page.locator("[data-k=act-keep]")).to_be_enabled()
    assert keys(page)["act-keep"] == "Enter"
    # Enter on a focused card is the card's own (it is unchosen again), not Keep's.
    page.locator("[data-k=card-0]").focus()
    page.keyboard.press("Enter")
    expect(page.locator("[data-k=card-0]")).to_have_attribute("aria-pressed", "false")
    assert "act-keep" not in keys(page)
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    hand = r.view(0)["players"][0]["hidden"]
    assert played(page) == [next(a for a in r.legal_actions(0)
                                 if sorted(a["cards"]) == sorted([hand[1], hand[2]]))]

    # A Police investigation: the target shows a card by digit, the Police lets it keep it or not.
    p = table([[P, H], [B, J], [M, R]])
    p.apply(0, {"type": "police_investigate", "target": 1})
    p.apply(1, {"type": "pass"})
    p.apply(2, {"type": "pass"})
    draw(page, "capitol", p.view(1), p.legal_actions(1), you=1)
    assert keys(page) == {"card-0": "1", "card-1": "2"}
    p.apply(1, {"type": "show", "card": "judge"})
    draw(page, "capitol", p.view(0), p.legal_actions(0))
    assert keys(page) == {"act-let_keep": "K", "act-force_redraw": "F"}
    draw(page, "capitol", p.view(0), p.legal_actions(0), lang="es")  # Que se la quede, Obligar a robar otra
    assert keys(page) == {"act-let_keep": "Q", "act-force_redraw": "O"}
    page.keyboard.press("o")
    assert played(page) == [{"type": "force_redraw"}]


def test_keys_are_left_to_typing_dialogs_modifiers_and_repeats(blank: Page) -> None:
    page = blank
    s = table([[B, M], [H, J], [R, P]])
    draw(page, "capitol", s.view(0), s.legal_actions(0))
    page.evaluate("""() => {
      const input = document.createElement('input');
      input.id = 'typing';
      document.body.appendChild(input);
      const dialog = document.createElement('dialog');
      dialog.id = 'sheet';
      dialog.appendChild(document.createElement('p')).textContent = 'Rules';
      document.body.appendChild(dialog);
    }""")
    page.locator("#typing").focus()
    page.keyboard.type("ib")
    expect(page.locator("#typing")).to_have_value("ib")
    page.locator("#typing").blur()
    page.evaluate("document.getElementById('sheet').showModal()")
    page.keyboard.press("i")
    page.keyboard.press("Escape")  # the browser's: it closes the sheet
    expect(page.locator("#sheet")).not_to_have_attribute("open", "")
    page.keyboard.press("Control+i")
    page.keyboard.press("Alt+b")
    page.evaluate("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'i', repeat: true}))")
    # Tab moves the focus and plays nothing.
    page.keyboard.press("Tab")
    assert played(page) == []
    page.keyboard.press("i")
    assert played(page) == [{"type": "income"}]


def test_caps_are_hidden_on_a_touch_screen_but_the_keys_stay_declared(
    browser: Browser, server: WebServer,
) -> None:
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    try:
        page = ctx.new_page()
        page.goto(server.url + "/")
        s = table([[B, M], [H, J], [R, P]])
        draw(page, "capitol", s.view(0), s.legal_actions(0))
        found = {b["k"]: b for b in page.evaluate(KEYED)}
        assert found["act-income"]["key"] == "I" and found["act-income"]["cap"] == "I"
        assert not any(b["shown"] for b in found.values())
    finally:
        ctx.close()


# ---- Conspiranoicos, every decision ---------------------------------------------------------------------


def consp_decisions() -> dict[str, tuple[dict[str, Any], list[dict[str, Any]], int]]:
    """A view and its legal actions for each kind of decision, from random games (the first seen)."""
    found: dict[str, tuple[dict[str, Any], list[dict[str, Any]], int]] = {}
    kinds = {"play", "send", "keep", "abduct", "reveal_gnome", "place"}
    for seed in range(50):
        rng = random.Random(seed)
        s = CONSPIRANOICOS.new_game(players=2, seed=seed)
        while not s.is_over() and not kinds <= found.keys():
            seat = rng.choice(s.waiting_for())
            legal = s.legal_actions(seat)
            kind = next((a["type"] for a in legal if a["type"] in kinds), None)
            if kind and kind not in found:
                found[kind] = (s.view(seat), legal, seat)
            s.apply(seat, rng.choice(legal))
        if kinds <= found.keys():
            return found
    raise AssertionError(f"no game reached {kinds - found.keys()}")


def test_conspiranoicos_decisions(blank: Page) -> None:
    page = blank
    found = consp_decisions()

    view, legal, seat = found["play"]
    draw(page, "conspiranoicos", view, legal, you=seat)
    hand = view["players"][seat]["hand"]
    assert keys(page) == {f"hand-{x}": str(i + 1) for i, x in enumerate(hand)}
    page.keyboard.press("2")
    assert played(page) == [{"type": "play", "card": hand[1]}]

    # The round's winner picks a card by digit, then sends it with P (Pyramid) or Z (zone).
    view, legal, seat = found["send"]
    draw(page, "conspiranoicos", view, legal, you=seat)
    picks = keys(page)
    assert list(picks.values()) == [str(i + 1) for i in range(len(picks))]
    assert all(k.startswith("pick-") for k in picks)
    page.keyboard.press("1")
    first = next(iter(picks)).removeprefix("pick-")
    got = keys(page)
    assert {k: v for k, v in got.items() if k.startswith("send-")} == {"send-pyramid": "P", "send-zone": "Z"}
    page.keyboard.press("z")
    sent = [a for a in legal if a["type"] == "send" and a["card"] == first and a["to"] == "zone"]
    assert played(page) == sent

    view, legal, seat = found["keep"]
    draw(page, "conspiranoicos", view, legal, you=seat)
    picks = keys(page)
    assert list(picks.values()) == [str(i + 1) for i in range(len(picks))]
    page.keyboard.press("1")
    assert played(page) == [{"type": "keep", "card": next(iter(picks)).removeprefix("pick-")}]

    # A Pyramid slot answers to its own number; No swap (No cambiar) to N.
    for kind in ("abduct", "reveal_gnome"):
        view, legal, seat = found[kind]
        for lang in ("en", "es"):
            draw(page, "conspiranoicos", view, legal, you=seat, lang=lang)
            slots = sorted(a["slot"] for a in legal if a["type"] == kind)
            assert keys(page) == {**{f"slot-{n}": str(n) for n in slots}, "act-pass": "N"}
        page.keyboard.press(str(slots[-1]))
        assert played(page) == [{"type": kind, "slot": slots[-1]}]

    # The row: a card by its place (two swap), Enter confirms and the row goes down from the left.
    view, legal, seat = found["place"]
    draw(page, "conspiranoicos", view, legal, you=seat)
    cards = [a["card"] for a in legal if a["type"] == "place"]
    order = page.evaluate("[...document.querySelectorAll('[data-k^=arr-]')].map((b) => b.dataset.card)")
    assert keys(page) == {**{f"arr-{i}": str(i + 1) for i in range(len(order))}, "row-confirm": "Enter"}
    assert sorted(order) == sorted(cards)
    page.keyboard.press("1")
    page.keyboard.press("2")
    expect(page.locator("[data-k=arr-0]")).to_have_attribute("data-card", order[1])
    page.keyboard.press("Enter")
    wait_played(page)
    assert played(page) == [{"type": "place", "card": order[1]}]


# A text field of the test's own, outside the table (no screen of the table has one).
FIELD = "document.body.append(Object.assign(document.createElement('input'), {id: 'typing'}))"


# ---- a real game, with the keyboard alone ----------------------------------------------------------------

# What the page sends: its `act` messages, kept in window.acts.
SPY = """(() => {
  window.acts = [];
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    try {
      const m = JSON.parse(data);
      if (m.type === 'act') window.acts.push(m.action);
    } catch { /* not JSON: not an act */ }
    return send.call(this, data);
  };
})();"""


def acts(page: Page) -> list[dict[str, Any]]:
    return list(page.evaluate("window.acts"))


def hand(page: Page) -> list[str]:
    """The roles of one's own face-down cards, as their art names them."""
    cards = page.locator(".me-area .my-hand svg[aria-label]")
    expect(cards).to_have_count(2)
    return [cards.nth(i).get_attribute("aria-label") or "" for i in range(2)]


def deal(browser: Browser, server: WebServer) -> tuple[Page, Page, bool, list[str]]:
    """Ana (English) and Ben (Spanish) on their pages at a new three-seat Capitol table (Cat never opens
    hers), dealt so that whoever loses the challenge below chooses between two different cards (with
    two alike the game turns one up by itself): Ben claims the Mafia and Ana challenges, so Ana loses
    if Ben holds it, else Ben. Returns the pages, whether Ben bluffs and the loser's cards."""
    for _ in range(12):
        room = api_room(server, "capitol", ["Ana", "Ben", "Cat"], options={"first_player": 0})
        api_start(server, room)
        pages = []
        for seat, name, lang in ((0, "Ana", "en"), (1, "Ben", "es")):
            ctx = browser.new_context(viewport=LAPTOP)  # type: ignore[arg-type]
            ctx.add_init_script(SPY)
            page = ctx.new_page()
            open_seat(page, server, room, seat, name, lang=lang)
            pages.append(page)
        ana, ben = pages
        with patient_expectations():
            bens = hand(ben)
            bluff = "Mafia" not in bens  # the role's name in Spanish too
            loser = bens if bluff else hand(ana)
        if loser[0] != loser[1]:
            return ana, ben, bluff, loser
        for page in pages:
            page.context.close()
    raise AssertionError("twelve deals, each with the loser holding two alike")


def test_a_capitol_game_played_with_the_keyboard(browser: Browser, server: WebServer) -> None:
    ana, ben, bluff, cards = deal(browser, server)
    pages = [ana, ben]
    try:
        with patient_expectations():
            # Ana's turn: I is Income; her purse and the log say it was played.
            income = ana.locator("[data-k=act-income]")
            expect(income).to_have_attribute("aria-keyshortcuts", "I")
            expect(income.locator("kbd.key-cap")).to_be_visible()
            expect(ana.locator(".me-area .purse")).to_have_text("$2M")
            ana.keyboard.press("i")
            expect(ana.locator(".me-area .purse")).to_have_text("$3M")
            expect(ana.locator(".log-list")).to_contain_text("Ana takes $1M from the Treasury.")
            assert acts(ana) == [{"type": "income"}]
            expect(income).to_have_count(0)

            # Ben's turn, in Spanish: Ayuda Exterior is A. Keys typed in a field or with the rules sheet
            # open play nothing.
            expect(ben.locator("[data-k=act-foreign_aid]")).to_have_attribute("aria-keyshortcuts", "A")
            ben.evaluate(FIELD)
            ben.locator("#typing").focus()
            ben.keyboard.type("im")
            expect(ben.locator("#typing")).to_have_value("im")
            ben.locator("#typing").blur()
            ben.locator("[data-k=rules]").click()
            expect(ben.locator("dialog#rules")).to_be_visible()
            ben.keyboard.press("i")
            ben.keyboard.press("Escape")
            expect(ben.locator("dialog#rules")).to_be_hidden()
            assert acts(ben) == []

            # Mafia, then Escape cancels the target picker; Mafia again, and 1 is the first target (Ana).
            ben.keyboard.press("m")
            expect(ben.locator("[data-k=target-0]")).to_have_attribute("aria-keyshortcuts", "1")
            expect(ben.locator("[data-k=target-2]")).to_have_attribute("aria-keyshortcuts", "2")
            expect(ben.locator("[data-k=cancel]")).to_have_attribute("aria-keyshortcuts", "Escape")
            ben.keyboard.press("Escape")
            expect(ben.locator("[data-k=cancel]")).to_have_count(0)
            expect(ben.locator("[data-k=act-mafia]")).to_have_attribute("aria-keyshortcuts", "M")
            assert acts(ben) == []
            ben.keyboard.press("m")
            ben.keyboard.press("1")
            assert acts(ben) == [{"type": "mafia", "target": 0}]

            # Ana challenges with C; whoever is wrong loses their second card with 2.
            expect(ana.locator("[data-k=act-challenge]")).to_have_attribute("aria-keyshortcuts", "C")
            expect(ana.locator("[data-k=act-pass]")).to_have_attribute("aria-keyshortcuts", "P")
            ana.keyboard.press("c")
            loser = ben if bluff else ana
            card = loser.locator("[data-k=card-1]")
            expect(card).to_have_attribute("aria-keyshortcuts", "2")
            expect(card.locator("kbd.key-cap")).to_be_visible()
            loser.keyboard.press("2")
            expect(loser.locator(".me-area .lost")).to_have_count(1)
            assert acts(loser)[-1]["type"] == "lose"
            said = (f"Ben pierde una influencia: {cards[1]} queda boca arriba." if bluff
                    else f"Ana loses an influence: the {cards[1]} is turned face up.")
            expect(loser.locator(".log-list")).to_contain_text(said)
    finally:
        for page in pages:
            page.context.close()
