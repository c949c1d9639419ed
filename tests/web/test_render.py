"""The client's game modules fed real engine views in a real browser (no server game): the Capitol end
summary in English and Spanish, and Conspiranoicos cards drawn from the view's own catalogue."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from browser_helpers import DRAW_TABLE, WebServer, open_table_harness, run_server
from capitol_helpers import B, H, J, M, P, R, table
from conflictology.games.capitol import GAME as CAPITOL
from conflictology.games.conspiranoicos import GAME as CONSPIRANOICOS

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DECK = ROOT / "src/conflictology/games/conspiranoicos/decks/default.json"


@pytest.fixture
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    # The probes below are strings evaluated in the page (the test's harness, not the client's code),
    # which the server's Content-Security-Policy rightly refuses: this context bypasses it.
    return {**browser_context_args, "bypass_csp": True}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    with run_server(tmp_path_factory.mktemp("render")) as running:
        yield running


# Renders one module's function into the page with a context like app.js's ctx(); returns facts about it.
RENDER = """async ({module, fn, view, you, lang, probe, legal}) => {
  const i18n = await import('/js/i18n.js');
  i18n.setLang(lang);
  const m = await import(module);
  const names = ['Ana', 'Ben', 'Cat', 'Dan', 'Eva', 'Fay'];
  const c = { view, legal: legal || [], deadline: null, you, room: null, name: (s) => names[s],
    act: () => {}, busy: false, ui: {}, rerender: () => {}, t: i18n.t, lang };
  const el = m[fn](c);
  document.body.replaceChildren(el);
  const AsyncFunction = (async () => {}).constructor;
  return new AsyncFunction('el', probe)(el);
}"""


def render(page: Page, module: str, fn: str, view: dict[str, Any], probe: str, you: int | None = 0,
           lang: str = "en", legal: list[dict[str, Any]] | None = None) -> Any:
    return page.evaluate(RENDER, {"module": module, "fn": fn, "view": view, "you": you, "lang": lang,
                                  "probe": probe, "legal": legal})


def finished_capitol(players: int, seed: int) -> dict[str, Any]:
    """A random game played to its end with at least one bluff caught and one that got away."""
    rng = random.Random(seed)
    while True:
        s = CAPITOL.new_game(players=players, seed=rng.getrandbits(32))
        while not s.is_over():
            seat = rng.choice(s.waiting_for())
            s.apply(seat, rng.choice(s.legal_actions(seat)))
        view = s.view(None)
        claims = view["summary"]["claims"]
        if any(c["caught"] for c in claims) and any(not c["honest"] and not c["challenged"] for c in claims):
            return view


def test_capitol_end_summary_lists_every_claim_with_its_mark(page: Page, server: WebServer) -> None:
    page.goto(server.url + "/")
    view = finished_capitol(3, seed=4)
    summary = view["summary"]
    probe = """return {
      rows: el.querySelectorAll('tbody tr[data-seat]').length,
      lists: [...el.querySelectorAll('tbody')].map((b) => b.querySelectorAll('.claims-row .claim').length),
      claims: el.querySelectorAll('.claim').length,
      bluffs: el.querySelectorAll('.claim.bluff').length,
      caught: el.querySelectorAll('.claim.caught').length,
      counts: [...el.querySelectorAll('tbody tr[data-seat]')].map(
        (tr) => [...tr.querySelectorAll('td.num')].map((td) => +td.textContent)),
      caption: el.querySelector('caption').textContent,
      labels: [...el.querySelectorAll('.claim')].map((li) => li.getAttribute('aria-label')),
      marks: [...el.querySelectorAll('.claim .mark')].map((m) => m.textContent),
    };"""
    got = render(page, "/js/capitol.js", "endDetail", view, probe, you=None)
    assert got["rows"] == 3
    # Each player's claims on the row under theirs.
    assert got["lists"] == [sum(c["seat"] == s for c in summary["claims"]) for s in range(3)]
    assert got["claims"] == len(summary["claims"])
    assert got["bluffs"] == sum(summary["bluffs"]) and got["caught"] == sum(summary["caught"]) > 0
    assert got["counts"] == [[summary["bluffs"][s], summary["caught"][s]] for s in range(3)]
    assert got["caption"] == "Claims and bluffs"
    # Each player's row lists their claims in order, each marked and told in full in its label.
    in_rows = [c for s in range(3) for c in summary["claims"] if c["seat"] == s]
    for claim, label, mark in zip(in_rows, got["labels"], got["marks"], strict=True):
        assert mark == ("✓" if claim["honest"] else "✗")
        assert label.startswith("held the " if claim["honest"] else "bluffed the ")
        if claim["caught"]:
            assert "caught by " in label
        elif claim["challenged"]:
            assert "challenged by " in label
        else:
            assert " by " not in label or "blocking" in label

    es = render(page, "/js/capitol.js", "endDetail", view, probe, you=0, lang="es")
    assert es["caption"] == "Declaraciones y faroles"
    assert any(label.startswith("farol: no tenía ") for label in es["labels"])
    assert not any("capitol.summary" in label for label in es["labels"])

    # Before the end a view has no summary, and the end detail draws nothing.
    live = CAPITOL.new_game(players=3, seed=1).view(0)
    assert render(page, "/js/capitol.js", "endDetail", live, "return el;") is None


def test_capitol_target_gets_one_prompt_and_its_sealed_answer_is_its_own(
    page: Page, server: WebServer,
) -> None:
    """Ruling 6a in the client: the target of a Hacker sees challenge, block as Judge and let it pass in one
    prompt, labelled in English and Spanish; once it sealed a block, its own banner says so and nobody
    else's does."""
    page.goto(server.url + "/")
    s = table([[H, M], [B, J], [R, P]])
    s.money[0] += 1
    s.treasury -= 1
    s._lseat = -1
    s.apply(0, {"type": "hacker", "target": 1})
    probe = """return {
      keys: [...el.querySelectorAll('.controls button')].map((b) => b.dataset.k),
      labels: [...el.querySelectorAll('.controls button')].map((b) => b.textContent),
      hint: (el.querySelector('[data-k=sealed-hint]') || {}).textContent || null,
    };"""
    for lang, labels, hint in (
        ("en", ["Challenge", "Block as Judge", "Let it pass"], "A block stays secret"),
        ("es", ["Desafiar", "Bloquear como Juez", "Dejar pasar"], "El bloqueo queda en secreto"),
    ):
        got = render(page, "/js/capitol.js", "renderTable", s.view(1), probe, you=1, lang=lang,
                     legal=s.legal_actions(1))
        assert got["keys"] == ["act-challenge", "act-block-judge", "act-pass"]
        assert got["labels"] == labels
        assert got["hint"].startswith(hint)
    # A bystander's prompt is the old one: challenge or let it pass, no hint.
    got = render(page, "/js/capitol.js", "renderTable", s.view(2), probe, you=2, legal=s.legal_actions(2))
    assert got["keys"] == ["act-challenge", "act-pass"] and got["hint"] is None
    text = banner_of(page, s.view(1), s.legal_actions(1), 1)
    assert text.endswith("Challenge it, block it, or let it pass.")
    s.apply(1, {"type": "block", "card": J})
    assert "Your answer: block as Judge" in banner_of(page, s.view(1), [], 1)
    for seat in (0, 2):
        assert "answer" not in banner_of(page, s.view(seat), s.legal_actions(seat), seat)
    assert "Tu respuesta: bloquear como Juez" in banner_of(page, s.view(1), [], 1, "es")


def banner_of(
    page: Page, view: dict[str, Any], legal: list[dict[str, Any]], you: int, lang: str = "en",
) -> str:
    return str(page.evaluate("""async ({view, legal, you, lang}) => {
      const i18n = await import('/js/i18n.js');
      i18n.setLang(lang);
      const m = await import('/js/capitol.js');
      return m.banner({ view, legal, you, name: (s) => ['Ana', 'Ben', 'Cat'][s], t: i18n.t, lang }).text;
    }""", {"view": view, "legal": legal, "you": you, "lang": lang}))


def test_conspiranoicos_cards_come_from_the_views_catalogue(
    page: Page, server: WebServer, tmp_path: Path
) -> None:
    """A room on another deck file: its cards (other ids, values and challenges) are drawn from the view,
    and a later view of the default deck replaces them (no copy of a deck lives in the client)."""
    deck = json.loads(DEFAULT_DECK.read_text())
    deck["name"] = "mirror"
    for card in deck["cards"]:
        card["id"] = "X" + card["id"]
        card["value"] = 7 - card["value"]
        card["challenge"] = "lowest_value" if card["challenge"] == "highest_value" else card["challenge"]
    path = tmp_path / "mirror.json"
    path.write_text(json.dumps(deck))
    state = CONSPIRANOICOS.new_game(players=2, seed=3, options={"deck_file": str(path)})
    view = state.view(0)
    by_id = {c["id"]: c for c in view["cards"]}
    hand = view["players"][0]["hand"]
    assert all(cid.startswith("X") for cid in hand)
    page.goto(server.url + "/")
    probe = """return [...el.querySelectorAll('.consp-player.mine .hand .card-art')]
      .map((e) => e.getAttribute('aria-label'));"""
    labels = render(page, "/js/conspiranoicos.js", "renderTable", view, probe)
    assert len(labels) == len(hand)
    for cid, label in zip(hand, labels, strict=True):
        assert f"value {by_id[cid]['value']}" in label, (cid, label)
        # The deck's own challenge, in the client's words (the engine's text less its "(G)" hint).
        assert label.endswith(by_id[cid]["challenge_text"].split(" (")[0]), (cid, label)
        assert "?" not in label

    default_view = CONSPIRANOICOS.new_game(players=2, seed=3).view(0)
    default_cards = {c["id"]: c for c in default_view["cards"]}
    labels = render(page, "/js/conspiranoicos.js", "renderTable", default_view, probe)
    for cid, label in zip(default_view["players"][0]["hand"], labels, strict=True):
        assert f"value {default_cards[cid]['value']}" in label
    # The mirror deck's cards are gone: an id of it is unknown to the client now.
    unknown = render(page, "/js/conspiranoicos.js", "renderTable", default_view,
                     f"return (await import('/js/conspiranoicos.js')).cardInfo('{hand[0]}').value;")
    assert unknown == "?"


# The end's claims table at each width from a phone's to the side panel's: each cell whole inside its
# column and the table inside its box and the window (a sideways scroll hid "Caught" behind the side
# panel's edge, "Caug" showing). The longest name the server takes sits at the table.
CLAIMS_FIT = """() => {
  const box = document.querySelector('.claims-summary');
  const table = box.querySelector('table');
  const cut = [...box.querySelectorAll('th, td, .claim')]
    .filter((el) => el.scrollWidth > el.clientWidth + 1
      || el.getBoundingClientRect().right > innerWidth + 0.5)
    .map((el) => el.textContent.trim().slice(0, 40));
  return { cut, over: table.getBoundingClientRect().width - box.clientWidth,
    scroll: box.scrollWidth - box.clientWidth, page: document.documentElement.scrollWidth - innerWidth,
    claims: box.querySelectorAll('.claim').length };
}"""


@pytest.mark.parametrize("players", [3, 10])
def test_capitol_claims_fit_every_width_from_320_to_480_in_every_language(
    browser: Browser, server: WebServer, players: int
) -> None:
    names = ["Ana", "Benedetta Carolina de la Fuente y Montes", "Cat", "Dan", "Eva", "Fay", "Gus", "Hal",
             "Ivy", "Jo"]  # fmt: skip
    view = finished_capitol(players, seed=players)
    seats = [{"seat": s, "name": names[s], "connected": True} for s in range(players)]
    room = {"code": "ABCD", "game": "capitol", "status": "playing", "game_id": "g", "options": {},
            "settings": {}, "seats": seats}  # fmt: skip
    msg = {"type": "state", "seq": 1, "view": view, "legal": [], "deadline": None, "room": room}
    problems = []
    for width in (320, 360, 420, 480):
        page = browser.new_context(viewport={"width": width, "height": 800}, bypass_csp=True).new_page()
        open_table_harness(page, server)
        for lang in ("en", "es", "pt", "fr", "de", "it", "pl", "tr"):
            page.evaluate(DRAW_TABLE, {"msg": msg, "room": room, "lang": lang, "ui": {}})
            got = page.evaluate(CLAIMS_FIT)
            assert got["claims"] == len(view["summary"]["claims"]), (width, lang)
            if got["cut"] or got["over"] > 0.5 or got["scroll"] > 0 or got["page"] > 0:
                problems.append(f"{width} {lang}: {got}")
        page.context.close()
    assert not problems, "\n".join(problems)
