"""The client in eight languages (issue 27): English, Spanish, Brazilian Portuguese, French, German,
Italian, Polish and Turkish.

Each is chosen by ``?lang=xx`` and by the browser's language, says so in ``<html lang>``, and is
offered in the header's menu, each option named in its own language; every screen of a language, at a
phone's 390×844, fits the width and shows no other language's text (home, lobby, the rules of both
games, and the tables of both games at their decisions and their ends, drawn from real engine views).
The letters of keyboard play (i18n ``keys.*``) are letters of their buttons' words, never two alike in
one prompt; plurals follow each language's rules (Polish has three forms); money is written in each
language's way."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from browser_helpers import (
    DRAW_TABLE,
    WebServer,
    api_room,
    open_seat,
    open_table_harness,
    patient_expectations,
    run_server,
)
from conflictology import recap
from conflictology.engine import GameState
from conflictology.games.capitol import GAME as CAPITOL
from conflictology.games.conspiranoicos import GAME as CONSPIRANOICOS
from test_replay import random_record

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
# Each language: the browser locale that picks it and the tag <html lang> says.
LANGS = {
    "en": ("en-US", "en"), "es": ("es-ES", "es"), "pt": ("pt-BR", "pt-BR"), "fr": ("fr-FR", "fr"),
    "de": ("de-DE", "de"), "it": ("it-IT", "it"), "pl": ("pl-PL", "pl"), "tr": ("tr-TR", "tr"),
}  # fmt: skip


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    with run_server(tmp_path_factory.mktemp("languages")) as running:
        yield running


@pytest.fixture(autouse=True, scope="module")
def patient() -> Iterator[None]:
    with patient_expectations():
        yield


def phone(browser: Browser, locale: str = "en-US", **extra: Any) -> Page:
    return browser.new_context(viewport=PHONE, locale=locale, **extra).new_page()  # type: ignore[arg-type]


# ---- what a screen shows: text of another language, sideways overflow ---------------------------------

# Run in the page. Every language's strings become patterns (a placeholder matches anything, a number
# in a plural function's output any number); a text on the screen of language X is foreign when it is
# the whole of some other language's string that X words differently, or holds a phrase of two words
# or more from one, and X itself has no string it could be. Text marked with another `lang` (the
# language menu's options, each in its own language) is meant to be there.
FOREIGN = """async ({code}) => {
  const { LANGUAGES } = await import('/js/i18n.js');
  const esc = (s) => s.replace(/[.*+?^${}()|[\\]\\\\]/g, '\\\\$&');
  const leaves = (o, p = '') => Object.entries(o).flatMap(([k, v]) => {
    if (Array.isArray(v)) return v.flatMap((s, i) => [[`${p}${k}.${i}.title`, s.title],
      ...s.items.map((it, j) => [`${p}${k}.${i}.${j}`, it])]);
    if (v && typeof v === 'object') return leaves(v, `${p}${k}.`);
    return [[p + k, v]];
  });
  const outputs = (v) => {
    if (typeof v !== 'function') return [String(v)];
    const seen = new Set();
    const counts = (n) => ({ n, chosen: n, games: n, wins: n, count: n,
      bluffs: n, caught: n, won: n, lost: n });
    for (let n = 0; n <= 12; n += 1) seen.add(String(v(counts(n))));
    return [...seen].map((s) => s.replace(/\\d+/g, '{n}'));
  };
  // Spacing is not wording (a no-break space in "3 M$" is the same words as a space).
  const spaced = (v) => outputs(v).map((s) => s.replace(/\\s+/g, ' ').trim());
  // A placeholder matches anything (nothing too, in the screen's own strings: a card draws the
  // faction of "Shows {faction}" as a symbol), a number any number, a space any spacing.
  const pattern = (s, gap = '.+?') => new RegExp('^' + s.split(/\\{\\w+\\}/).map((part) => esc(part)
    .replace(/\\d+/g, '\\\\d+').replace(/ /g, '\\\\s*')).join(gap) + '$', 's');
  // What a string says besides its placeholders: enough to tell it ("$M" is, "+" or "()" is not).
  const literal = (s) => s.replace(/\\{\\w+\\}/g, '').replace(/\\s+/g, '');
  const telling = (s) => literal(s).length >= 2 && /\\p{L}/u.test(literal(s));
  // Keyboard letters and the languages' own names are not text of a screen's language.
  const dicts = Object.fromEntries(Object.entries(LANGUAGES).map(([c, d]) => [c,
    new Map(leaves(d).filter(([k]) => !/^(keys|meta)\\./.test(k)).map(([k, v]) => [k, spaced(v)]))]));
  const mine = dicts[code];
  const mineText = [...mine.values()].flat().join('\\n');
  // A string of X's own with three letters or more besides its placeholders ("{fronts} ({value})"
  // would let anything in brackets through).
  const minePatterns = [...mine.values()].flat().filter((s) => /\\p{L}{3}/u.test(literal(s)))
    .map((s) => pattern(s, '.*?'));
  const foreign = [];
  for (const [other, dict] of Object.entries(dicts)) {
    if (other === code) continue;
    for (const [key, values] of dict) {
      if (values.join('\\n') === (mine.get(key) || []).join('\\n')) continue;
      for (const value of values) {
        if (!telling(value)) continue;
        const phrases = value.split(/\\{\\w+\\}/).map((s) => s.trim())
          .filter((s) => /\\p{L}+[ '’-]+\\p{L}+/u.test(s) && s.length >= 12 && !mineText.includes(s));
        foreign.push({ other, key, whole: pattern(value), phrases });
      }
    }
  }
  const tag = document.documentElement.lang;
  const texts = [];
  const own = (el) => { const marked = el.closest('[lang]'); return !marked || marked.lang === tag; };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    const text = n.textContent.replace(/\\s+/g, ' ').trim();
    if (!text || !el || el.closest('script, style, noscript') || !own(el)) continue;
    if (typeof el.checkVisibility === 'function' && !el.checkVisibility() && !el.closest('option')) continue;
    texts.push(text);
  }
  for (const el of document.body.querySelectorAll('[aria-label], [title], [placeholder]')) {
    if (!own(el)) continue;
    for (const a of ['aria-label', 'title', 'placeholder']) {
      const v = el.getAttribute(a);
      if (v && v.trim()) texts.push(v.replace(/\\s+/g, ' ').trim());
    }
  }
  const found = [];
  for (const text of new Set(texts)) {
    if (minePatterns.some((p) => p.test(text))) continue;
    for (const f of foreign) {
      const phrase = f.phrases.find((p) => text.includes(p));
      if (f.whole.test(text) || phrase) {
        found.push(`${JSON.stringify(text)} is ${f.other}:${f.key}`);
        break;
      }
    }
  }
  const sideways = document.documentElement.scrollWidth - innerWidth;
  return { found, checked: texts.length, sideways, lang: tag };
}"""


def check_screen(page: Page, code: str, where: str, problems: list[str]) -> int:
    """Adds what is wrong with the screen shown now to ``problems``; returns how many texts it checked."""
    got = page.evaluate(FOREIGN, {"code": code})
    if got["lang"] != LANGS[code][1]:
        problems.append(f"{code} {where}: <html lang={got['lang']}>")
    if got["sideways"] > 0:
        problems.append(f"{code} {where}: {got['sideways']} px of sideways scroll at {PHONE['width']} px")
    problems.extend(f"{code} {where}: {f}" for f in got["found"])
    return int(got["checked"])


def test_the_check_finds_another_languages_text(browser: Browser, server: WebServer) -> None:
    """The foreign-text probe is not blind: an English sentence, a Spanish button and English money
    planted on a German page are found; the German page itself, with names and numbers, is clean."""
    page = phone(browser, "de-DE")
    page.goto(server.url + "/")
    expect(page.locator("[data-k=create]")).to_have_text("Raum erstellen")
    clean: list[str] = []
    assert check_screen(page, "de", "home", clean) > 10
    assert clean == []
    page.evaluate("""() => { const p = document.createElement('p');
      p.innerHTML = '<span>Ana claims the Banker to take $3M</span><button>Dejar pasar</button>'
        + '<span>$7M</span><span>Benedetta</span>'
        + '<span>Ana gibt sich als Bankier aus, um 3 Mio. $ zu nehmen</span>';
      document.querySelector('main').appendChild(p); }""")
    planted: list[str] = []
    check_screen(page, "de", "home", planted)
    assert len(planted) == 3, planted
    assert any("en:capitol.does.banker" in p for p in planted), planted
    assert any("es:capitol.actions.pass" in p for p in planted), planted
    assert any("en:capitol.money" in p for p in planted), planted
    page.context.close()


# ---- choosing a language ---------------------------------------------------------------------------


def test_each_language_by_address_and_by_browser(browser: Browser, server: WebServer) -> None:
    """``?lang=xx`` and the browser's language each choose it; <html lang> says which; the menu shows
    it chosen; a saved choice from the menu beats the browser's language, and ``?lang`` beats both."""
    names = {}
    for code, (locale, tag) in LANGS.items():
        for page, url in ((phone(browser, locale), "/"), (phone(browser, "en-US"), f"/?lang={code}")):
            page.goto(server.url + url)
            expect(page.locator("html")).to_have_attribute("lang", tag)
            expect(page.locator("[data-k=lang] .lang-code")).to_have_text(code.upper())
            names[code] = page.locator("[data-k=rules]").inner_text()
            page.context.close()
    # Eight different words for "Rules": no language fell back to another's.
    assert len(set(names.values())) == 8, names

    page = phone(browser, "tr-TR")
    page.goto(server.url + "/")
    expect(page.locator("html")).to_have_attribute("lang", "tr")
    page.click("[data-k=lang]")
    page.click("[data-k=lang-pl]")
    expect(page.locator("html")).to_have_attribute("lang", "pl")
    expect(page.locator("[data-k=rules]")).to_have_text(names["pl"])
    expect(page.locator("[data-k=lang] .lang-code")).to_have_text("PL")
    # By keyboard: Enter opens the sheet on the current language, Shift+Tab goes to the one before,
    # Enter chooses it and the focus is back on the header's button.
    page.focus("[data-k=lang]")
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("lang-sheet")).to_be_visible()
    assert page.evaluate("document.activeElement.dataset.k") == "lang-pl"
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Enter")
    expect(page.locator("html")).to_have_attribute("lang", "it")
    expect(page.locator("[data-k=rules]")).to_have_text(names["it"])
    expect(page.get_by_test_id("lang-sheet")).to_be_hidden()
    assert page.evaluate("document.activeElement.dataset.k") == "lang"
    page.reload()
    expect(page.locator("html")).to_have_attribute("lang", "it")
    page.goto(server.url + "/?lang=de")
    expect(page.locator("[data-k=rules]")).to_have_text(names["de"])
    page.context.close()


def test_the_menu_names_each_language_in_itself(browser: Browser, server: WebServer) -> None:
    """The header's menu: a button labelled in the page's language (its visible code in its name), a
    sheet of eight choices each in its own language and marked with its `lang`, the current one
    pressed; in the game's page and in the replay viewer's. A key missing from a language falls back
    to English, not to the key."""
    page = phone(browser, "fr-FR")
    page.goto(server.url + "/")
    menu = page.locator("[data-k=lang]")
    # Its name begins with the code it shows (label in name, WCAG 2.5.3).
    expect(menu).to_have_accessible_name("FR Langue : Français")
    expect(menu).to_have_attribute("aria-haspopup", "dialog")
    menu.click()
    sheet = page.get_by_test_id("lang-sheet")
    expect(sheet.locator("h2")).to_have_text("Langue")
    choices = sheet.locator("[data-k^=lang-]")
    expect(choices).to_have_count(8)
    got = choices.evaluate_all(
        "(bs) => bs.map((b) => [b.dataset.k, b.lang, b.textContent, b.getAttribute('aria-pressed')])"
    )
    assert got == [["lang-en", "en", "English", "false"], ["lang-es", "es", "Español", "false"],
                   ["lang-pt", "pt-BR", "Português", "false"], ["lang-fr", "fr", "Français", "true"],
                   ["lang-de", "de", "Deutsch", "false"], ["lang-it", "it", "Italiano", "false"],
                   ["lang-pl", "pl", "Polski", "false"], ["lang-tr", "tr", "Türkçe", "false"]]
    page.keyboard.press("Escape")
    expect(sheet).to_be_hidden()
    expect(page.locator("html")).to_have_attribute("lang", "fr")
    fallback = page.evaluate("""async () => {
      const i18n = await import('/js/i18n.js');
      delete i18n.LANGUAGES.fr.common.close;
      return [i18n.t('common.close'), i18n.t('common.cancel')];
    }""")
    assert fallback == ["Close", "Annuler"]
    page.goto(server.url + "/replay/nosuchgame?lang=de")
    expect(page.locator("[data-testid=replay-error]")).to_have_text("Dieses Spiel gibt es nicht.")
    expect(page.locator("html")).to_have_attribute("lang", "de")
    page.click("[data-k=lang]")
    page.click("[data-k=lang-pt]")
    expect(page.locator("[data-testid=replay-error]")).to_have_text("Essa partida não existe.")
    expect(page.locator("html")).to_have_attribute("lang", "pt-BR")
    page.context.close()


# ---- every screen of every language ------------------------------------------------------------------

NAMES = ["Ana", "Benedetta", "Cat", "Dan"]


def capitol_kind(state: GameState, seat: int) -> str:
    types = {a["type"] for a in state.legal_actions(seat)}
    pending = state.view(seat).get("pending") or {}
    if "income" in types:
        return "turn"
    for kind in ("lose", "keep", "show", "return"):
        if kind in types:
            return kind
    if types & {"let_keep", "force_redraw"}:
        return "police"
    if pending.get("phase") == "block_challenge" and pending.get("actor") == seat:
        return "blocked"
    return "respond" if types & {"challenge", "block"} else "other"


def conspiranoicos_kind(state: GameState, seat: int) -> str:
    types = {a["type"] for a in state.legal_actions(seat)}
    kinds = ("play", "send", "keep", "abduct", "reveal_gnome", "place")
    return next((k for k in kinds if k in types), "other")


def views(new_game: Callable[[int], GameState], kinds: set[str], kind_of: Callable[[GameState, int], str],
          seed: int) -> list[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    """Seat 0's view and legal actions the first time it faces each kind of decision in seeded random
    games, then its view of a finished game (its end: who won, the claims or the score)."""
    rng = random.Random(seed)
    found: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
    over: dict[str, Any] | None = None
    for _ in range(300):
        state = new_game(rng.getrandbits(32))
        while not state.is_over():
            waiting = state.waiting_for()
            if 0 in waiting and kind_of(state, 0) in kinds - found.keys():
                found[kind_of(state, 0)] = (state.view(0), state.legal_actions(0))
            seat = rng.choice(waiting)
            state.apply(seat, rng.choice(state.legal_actions(seat)))
        over = over or state.view(0)
        if found.keys() == kinds:
            decisions = [(kind, view, legal) for kind, (view, legal) in sorted(found.items())]
            return [*decisions, ("end", over, [])]
    raise AssertionError(f"not every kind found: {sorted(kinds - found.keys())}")


def room_of(game: str, players: int, **more: Any) -> dict[str, Any]:
    seats = [{"seat": s, "name": NAMES[s], "connected": True, "host": s == 0} for s in range(players)]
    return {"code": "ABCD", "game": game, "status": "playing", "seats": seats, "options": {}, "settings": {},
            **more}  # fmt: skip


# (label, room, view, legal, ui, the recap GET /api/games/{id}/recap answers or None)
Json = dict[str, Any]
Drawn = tuple[str, Json, Json, list[Json], Json, Json | None]
# Learn to play: these tables again in a practice room (its coach above the table; at the end, its
# offer of a real room), the ends with their recap cards.
PRACTICE = ("capitol respond", "capitol end", "conspiranoicos place", "conspiranoicos end")


def tables() -> list[Drawn]:
    """Every kind of decision of both games and their ends, then some again in a practice room."""
    out: list[Drawn] = []
    capitol_kinds = {"turn", "respond", "blocked", "lose", "keep", "show", "police"}
    for kind, view, legal in views(lambda s: CAPITOL.new_game(players=4, seed=s), capitol_kinds, capitol_kind,
                                   4):
        out.append((f"capitol {kind}", room_of("capitol", 4), view, legal, {}, None))
        if kind == "turn":
            out.append(("capitol targets", room_of("capitol", 4), view, legal, {"pick": "mafia"}, None))
    consp_kinds = {"play", "send", "keep", "abduct", "reveal_gnome", "place"}
    for kind, view, legal in views(lambda s: CONSPIRANOICOS.new_game(players=2, seed=s), consp_kinds,
                                   conspiranoicos_kind, 2):
        out.append((f"conspiranoicos {kind}", room_of("conspiranoicos", 2), view, legal, {}, None))
    for label, _, view, legal, ui, _ in [d for d in out if d[0] in PRACTICE]:
        game, players = ("capitol", 4) if label.startswith("capitol") else ("conspiranoicos", 2)
        story = recap.build(random_record(game, players, 5)[0]) if label.endswith("end") else None
        room = room_of(game, players, game_id=f"g-{game}", settings={"practice": True})
        out.append((f"{label} (practice)", room, view, legal, ui, story))
    return out


# What a practice table or end shows besides the game: the coach's lesson, the end's offer, the recap.
PRACTICE_SHOWN = """() => ({
  lesson: (document.querySelector('[data-testid=coach]') || { dataset: {} }).dataset.lesson || '',
  offer: !!document.querySelector('[data-testid=coach-end]'),
  recap: document.querySelectorAll('[data-testid=recap] .recap-card').length,
  // A recap table that needs scrolling sideways to be read (each fits a phone's width).
  scrolled: [...document.querySelectorAll('[data-testid=recap] .table-scroll')]
    .filter((el) => el.scrollWidth > el.clientWidth + 1).map((el) => el.closest('.recap-card').dataset.card),
})"""


def test_no_screen_of_a_language_overflows_or_shows_another_language(
    browser: Browser, server: WebServer
) -> None:
    """At 390×844, in each of the eight languages: home (its options open), a lobby with a bot, the
    rules sheet of each game, and the tables of both games at every kind of decision and at their
    end, and in a practice room with the coach (a Capitol lesson; a Conspiranoicos scoring lesson
    beside the row being arranged) and the recap cards at the end: no sideways scroll, and no text of
    another language."""
    problems: list[str] = []
    checked = 0
    drawn = tables()
    harness = phone(browser, bypass_csp=True)

    open_table_harness(harness, server)
    # Every Conspiranoicos lesson read but the last criterion's: it is the one shown at Sort Evidence.
    harness.evaluate("""async () => {
      const { LESSONS } = await import('/js/coach.js');
      const read = { conspiranoicos: LESSONS.conspiranoicos.map(([id]) => id).slice(0, -1) };
      localStorage.setItem('conflictology:coach:seen', JSON.stringify(read));
    }""")
    room = api_room(server, "capitol", ["Ana"], bots=1)
    for code in LANGS:
        page = phone(browser, bypass_csp=True)
        page.goto(f"{server.url}/?lang={code}")
        page.wait_for_selector("[data-k=create]")
        page.evaluate("() => document.querySelectorAll('details').forEach((d) => { d.open = true; })")
        checked += check_screen(page, code, "home", problems)
        for game in ("capitol", "conspiranoicos"):
            page.click("[data-k=rules]")
            page.locator("dialog.rules [role=tab]").nth(0 if game == "capitol" else 1).click()
            expect(page.locator("dialog.rules li").first).to_be_visible()
            checked += check_screen(page, code, f"rules of {game}", problems)
            page.keyboard.press("Escape")
        open_seat(page, server, room, 0, "Ana", lang=code)
        page.wait_for_selector("[data-k=start]")
        expect(page.locator(".seat")).to_have_count(2)
        checked += check_screen(page, code, "lobby", problems)
        page.context.close()
        for label, room_view, view, legal, ui, story in drawn:
            msg = {"type": "state", "seq": 1, "view": view, "legal": legal, "deadline": None,
                   "room": room_view}
            drawn_with = {"msg": msg, "room": room_view, "lang": code, "ui": ui, "openDetails": True,
                          "recap": story}  # fmt: skip
            harness.evaluate(DRAW_TABLE, drawn_with)
            if label.endswith("(practice)"):
                # At the end the recap is read (the stand-in answer) and drawn after the table.
                if story:
                    harness.wait_for_function(f"() => ({PRACTICE_SHOWN})().recap > 0")
                shown = harness.evaluate(PRACTICE_SHOWN)
                assert shown["offer"] == bool(story), (code, label, shown)
                if shown["scrolled"]:
                    problems.append(f"{code} {label}: the recap's {shown['scrolled']} scroll sideways")
                if not story:
                    assert shown["lesson"], (code, label, shown)
                if label.startswith("conspiranoicos place"):
                    assert shown["lesson"] == "scoreMajority", (code, shown)
            checked += check_screen(harness, code, label, problems)
    harness.context.close()
    assert checked > 8 * 400, checked
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:80])


# Strings a language writes as English does (names, loanwords its players use), by key: anything
# else equal to the English is a string left untranslated.
SAME_AS_ENGLISH = {
    "*": {"common.bot", "common.botWho", "games.capitol.name", "games.conspiranoicos.name", "lobby.bot",
          "levels.normal", "motion.cardsIn", "motion.cardsOut", "cardNames.plain", "cardNames.special",
          "capitol.roles.hacker", "capitol.actions.hacker", "capitol.roles.mafia", "capitol.actions.mafia",
          "conspiranoicos.factions.I", "conspiranoicos.total", "lobby.link", "status.online",
          "common.dropped"},
    "pt": {"replay.title"},
    "fr": {"lobby.code", "talk.pause", "pip.open", "replay.mark.bluff", "standings.figures.bluffs",
           "recap.colGroup.bluffs", "capitol.summary.bluffs", "standings.figures.points", "rowPlan.points",
           "rowPlan.onePoint", "capitol.roles.police", "conspiranoicos.factions.G"},
    "de": {"lobby.code", "ext.options", "talk.pause", "replay.hand", "conspiranoicos.hand",
           "standings.figures.bluffs", "capitol.summary.bluffs", "recap.colGroup.bluffs",
           "capitol.roles.reporter", "capitol.actions.reporter",
           "conspiranoicos.factions.A", "rules.capitol.4.title", "rowPlan.at"},
    "it": {"common.home", "a11y.brand", "lobby.host", "ext.options", "ext.optionsTitle", "replay.title",
           "replay.mark.bluff", "replay.round", "recap.roundCol", "conspiranoicos.banner.watch"},
    "pl": {"capitol.roles.reporter", "capitol.actions.reporter"},
}  # fmt: skip


def test_no_language_leaves_a_string_in_english(page: Page, server: WebServer) -> None:
    """What the screen check cannot see: a string copied from en.js into another language is that
    language's own text to the page. Every string equal to its English is one the language shares."""
    page.goto(server.url + "/")
    same = page.evaluate("""async () => {
      const { LANGUAGES } = await import('/js/i18n.js');
      const leaves = (o, p = '') => Object.entries(o).flatMap(([k, v]) => {
        if (Array.isArray(v)) return v.flatMap((s, i) => [[`${p}${k}.${i}.title`, s.title],
          ...s.items.map((it, j) => [`${p}${k}.${i}.${j}`, it])]);
        if (v && typeof v === 'object') return leaves(v, `${p}${k}.`);
        return [[p + k, v]];
      });
      const counts = (n) => ({ n, chosen: n, games: n, wins: n, bluffs: n, caught: n, won: n, lost: n });
      const said = (v) => (typeof v === 'function'
        ? Array.from({ length: 13 }, (_, n) => v(counts(n))).join('|') : String(v));
      const en = new Map(leaves(LANGUAGES.en).map(([k, v]) => [k, said(v)]));
      const out = {};
      for (const [code, dict] of Object.entries(LANGUAGES)) {
        if (code === 'en') continue;
        out[code] = leaves(dict).filter(([k, v]) => !/^(keys|meta)\\./.test(k) && en.get(k) === said(v))
          .map(([k]) => k);
      }
      return out;
    }""")
    assert sorted(same) == ["de", "es", "fr", "it", "pl", "pt", "tr"]
    for code, keys in same.items():
        allowed = SAME_AS_ENGLISH["*"] | SAME_AS_ENGLISH.get(code, set())
        assert set(keys) <= allowed, (code, sorted(set(keys) - allowed))


# ---- keyboard letters, plurals and money ---------------------------------------------------------------

# The buttons shown together (js/keys.js): each prompt's letters must differ, and each be a letter of
# its button's word in that language (accents aside), a plain a–z (an accented letter or a dotless ı
# needs AltGr or a national layout, and a modifier leaves the key to the browser).
PROMPTS = {
    "turn": {"capitol.income": "capitol.actions.income", "capitol.foreign_aid": "capitol.actions.foreign_aid",
             "capitol.scandal": "capitol.actions.scandal", "capitol.banker": "capitol.actions.banker",
             "capitol.mafia": "capitol.actions.mafia", "capitol.hacker": "capitol.actions.hacker",
             "capitol.reporter": "capitol.actions.reporter",
             "capitol.police_investigate": "capitol.actions.police_investigate",
             "capitol.police_swap": "capitol.actions.police_swap"},
    "respond": {"capitol.challenge": "capitol.actions.challenge", "capitol.block": "capitol.actions.blockAs",
                "capitol.pass": "capitol.actions.pass"},
    "blocked": {"capitol.challenge": "capitol.actions.challenge",
                "capitol.acceptBlock": "capitol.actions.acceptBlock"},
    "police": {"capitol.let_keep": "capitol.actions.let_keep",
               "capitol.force_redraw": "capitol.actions.force_redraw"},
    "send": {"conspiranoicos.pyramid": "conspiranoicos.sendTo.pyramid",
             "conspiranoicos.zone": "conspiranoicos.sendTo.zone"},
    "swap": {"conspiranoicos.noSwap": "conspiranoicos.noSwap"},
}  # fmt: skip


def test_keys_plurals_and_money_per_language(page: Page, server: WebServer) -> None:
    page.goto(server.url + "/")
    got = page.evaluate(
        """async (prompts) => {
          const { LANGUAGES } = await import('/js/i18n.js');
          const get = (d, key) => key.split('.').reduce((o, k) => o && o[k], d);
          const plain = (s) => s.normalize('NFD').replace(/\\p{M}/gu, '').toLowerCase();
          const out = {};
          for (const [code, d] of Object.entries(LANGUAGES)) {
            const call = (key, params) => {
              const v = get(d, key);
              return typeof v === 'function' ? v(params) : v.replace(/\\{(\\w+)\\}/g, (m, k) => params[k]);
            };
            const keys = {};
            for (const [prompt, group] of Object.entries(prompts)) {
              keys[prompt] = Object.entries(group).map(([k, word]) => {
                const letter = get(d, `keys.${k}`);
                const words = plain(get(d, word).replace(/\\{\\w+\\}/g, ''));
                return [letter, words.includes(letter.toLowerCase())];
              });
            }
            out[code] = { keys, money: call('capitol.money', { n: 3 }),
              points: [1, 2, 5, 22].map((n) => call('conspiranoicos.points', { n })),
              cards: [2, 5].map((n) => call('capitol.nCards', { n })),
              left: [1, 3, 12].map((n) => call('capitol.cardsLeft', { n })),
              bluffs: [0, 1, 2].map((n) => call('recap.bluffLine',
                { bluffs: n, caught: n, won: n, lost: n })),
            };
          }
          return out;
        }""",
        PROMPTS,
    )
    for code, found in got.items():
        for prompt, keys in found["keys"].items():
            letters = [letter for letter, _ in keys]
            assert all(re.fullmatch("[A-Z]", letter) for letter in letters), (code, prompt, letters)
            assert len(set(letters)) == len(letters), (code, prompt, letters)
            assert all(in_word for _, in_word in keys), (code, prompt, keys)
    money = {code: found["money"] for code, found in got.items()}
    nb = "\u00a0"  # a no-break space: "3 M$" never breaks over two lines
    assert money == {"en": "$3M", "es": "3 M$", "pt": f"${nb}3{nb}mi", "fr": f"3{nb}M$",
                     "de": f"3{nb}Mio.{nb}$", "it": f"3{nb}mln{nb}$", "pl": f"3{nb}mln{nb}$",
                     "tr": f"3{nb}mn{nb}$"}
    # Polish: 1 punkt, 2 punkty, 5 punktów, 22 punkty; the others one form for 1, another for more.
    assert got["pl"]["points"] == ["1 punkt", "2 punkty", "5 punktów", "22 punkty"]
    assert got["pl"]["cards"] == ["2 karty", "5 kart"]
    assert got["pl"]["left"] == ["1 zakryta karta", "3 zakryte karty", "12 zakrytych kart"]
    assert got["de"]["points"] == ["1 Punkt", "2 Punkte", "5 Punkte", "22 Punkte"]
    assert got["fr"]["left"] == ["1 carte face cachée", "3 cartes face cachée", "12 cartes face cachée"]
    # Turkish keeps the noun singular after a number.
    assert got["tr"]["points"] == ["1 puan", "2 puan", "5 puan", "22 puan"]
    # The recap's line per player (shared as text): one bluff, one challenge, in each language's
    # forms (French's 0 is singular; Polish and Turkish say the count after a label or keep the noun).
    assert {code: found["bluffs"][1:] for code, found in got.items()} == {
        "en": ["1 bluff told (1 caught), 1 challenge won, 1 lost",
               "2 bluffs told (2 caught), 2 challenges won, 2 lost"],
        "es": ["1 farol (1 pillado), 1 desafío ganado, 1 perdido",
               "2 faroles (2 pillados), 2 desafíos ganados, 2 perdidos"],
        "pt": ["1 blefe (1 pego), 1 desafio vencido, 1 perdido",
               "2 blefes (2 pegos), 2 desafios vencidos, 2 perdidos"],
        "fr": ["1 bluff (1 démasqué), 1 contestation gagnée, 1 perdue",
               "2 bluffs (2 démasqués), 2 contestations gagnées, 2 perdues"],
        "de": ["1 Bluff (1 entlarvt), 1 Anzweiflung gewonnen, 1 verloren",
               "2 Bluffs (2 entlarvt), 2 Anzweiflungen gewonnen, 2 verloren"],
        "it": ["1 bluff (1 scoperto), 1 sfida vinta, 1 persa",
               "2 bluff (2 scoperti), 2 sfide vinte, 2 perse"],
        "pl": ["blefy: 1 (przyłapane: 1), wyzwania wygrane: 1, przegrane: 1",
               "blefy: 2 (przyłapane: 2), wyzwania wygrane: 2, przegrane: 2"],
        "tr": ["1 blöf (1 yakalandı), 1 itiraz kazanıldı, 1 kaybedildi",
               "2 blöf (2 yakalandı), 2 itiraz kazanıldı, 2 kaybedildi"],
    }  # fmt: skip
    assert got["fr"]["bluffs"][0] == "0 bluff (0 démasqué), 0 contestation gagnée, 0 perdue"


def test_card_names_in_capitals_and_no_clicking(page: Page, server: WebServer) -> None:
    """A role card's name is put in capitals by the rules of the reader's language (Turkish Polis is
    POLİS, with its dot); and no language asks to click (players tap on a phone, 17.x: "tap a card")."""
    page.goto(server.url + "/")
    got = page.evaluate("""async () => {
      const i18n = await import('/js/i18n.js');
      const { roleCard } = await import('/js/cards.js');
      const caps = {};
      for (const code of ['tr', 'de']) {
        i18n.setLang(code);
        caps[code] = roleCard('police', i18n.t('capitol.roles.police')).querySelector('text').textContent;
      }
      const clicks = [];
      const walk = (o, p) => { for (const [k, v] of Object.entries(o)) {
        const click = /\\b(click|clic|clique|cliqu|klick|klik|tıkla)/i;
        if (typeof v === 'string' && click.test(v)) clicks.push(p + k);
        else if (v && typeof v === 'object') walk(v, p + k + '.'); } };
      for (const [code, dict] of Object.entries(i18n.LANGUAGES)) walk(dict, code + ':');
      return { caps, clicks };
    }""")
    assert got == {"caps": {"tr": "POLİS", "de": "POLIZEI"}, "clicks": []}
