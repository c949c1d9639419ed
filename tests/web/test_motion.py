"""Motion that tells the story (issue 26, js/motion.js): real engine views drawn one after another by the
table screen itself (screens/table.js in a page of the real client), as app.js draws each state
message, and what moved measured in the page: coins from the Treasury and from victim to thief, the
claim plaque, a revealed card and a lost influence turning over, cards to and from the deck by count
only, a Conspiranoicos play turning over, the latest-event strip in English and Spanish; and nothing
at all on a first view, after a jump, under reduced motion or with the switch off (remembered)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from browser_helpers import WebServer, api_room, api_start, open_seat, run_server, watch_errors
from capitol_helpers import B, H, J, M, P, R, table
from conflictology.games.capitol import CapitolState
from conflictology.games.conspiranoicos import GAME as CONSPIRANOICOS

pytestmark = pytest.mark.browser

NAMES = ["Ana", "Ben", "Cat"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    with run_server(tmp_path_factory.mktemp("motion")) as running:
        yield running


# The table screen drawn from state messages as app.js draws them, and what moves.
HARNESS = (Path(__file__).parent / "web_checks" / "motion_table.js").read_text()


def open_table(page: Page, server: WebServer) -> None:
    page.goto(server.url + "/")
    page.wait_for_selector("main.screen-home")  # the client's own first drawing is done
    page.evaluate(HARNESS, NAMES)


def msg(view: dict[str, Any], you: int | None, **extra: Any) -> dict[str, Any]:
    return {"view": json.loads(json.dumps(view)), "you": you, **extra}


def draw(page: Page, state_msg: dict[str, Any]) -> dict[str, Any]:
    return page.evaluate("(m) => window.motionTest.draw(m)", state_msg)


def steps(s: CapitolState, seat: int | None, moves: list[tuple[int, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The views of ``seat`` before the moves and after each one."""
    views = [json.loads(json.dumps(s.view(seat)))]
    for who, action in moves:
        s.apply(who, action)
        views.append(json.loads(json.dumps(s.view(seat))))
    return views


def near(a: dict[str, int], b: dict[str, int], slack: int = 2) -> bool:
    return abs(a["x"] - b["x"]) <= slack and abs(a["y"] - b["y"]) <= slack


def gone(page: Page) -> None:
    """Every flight lands and leaves the layer (the next step starts from a still table)."""
    page.wait_for_function("""() => { const l = document.getElementById('motion-layer');
      return (!l || !l.children.length) && !document.getAnimations().some((a) =>
        !(a instanceof CSSAnimation) && !(a instanceof CSSTransition) && a.playState === 'running'); }""")


def assert_short(got: dict[str, Any]) -> None:
    assert got["anims"], "something should move"
    assert all(a["length"] <= 400 for a in got["anims"]), got["anims"]


def test_income_coin_flies_from_the_treasury_to_the_seat_and_the_strip_says_it(
    page: Page, server: WebServer,
) -> None:
    errors = watch_errors(page)
    open_table(page, server)
    s = table([[B, M], [H, J], [R, P]])
    before, after = steps(s, 0, [(0, {"type": "income"})])
    first = draw(page, msg(before, 0))
    assert first["anims"] == [] and first["layerKids"] == 0, "a first view moves nothing"
    assert first["strip"] == "Ana plays first." and first["stripAfterBanner"] and first["stripLive"] == "off"
    assert first["toggle"] == {"pressed": "true", "disabled": False, "label": "Motion on: turn it off"}

    got = draw(page, msg(after, 0))
    assert_short(got)
    assert [(c["from"], c["to"], c["amount"], c["text"]) for c in got["coins"]] == [
        ("treasury", "0", 1, "$1M")]
    coin = got["coins"][0]
    assert near(coin["start"], got["treasury"]) and near(coin["end"], got["seats"]["me"]["purse"])
    assert coin["pointer"] == "none" and got["layerPointer"] == "none"
    assert got["strip"] == "Ana takes $1M from the Treasury."
    assert any(a["strip"] for a in got["anims"]), "the strip's words slide in when they change"
    gone(page)

    # Seen from another seat, the coin lands on Ana's panel.
    s = table([[B, M], [H, J], [R, P]])
    before, after = steps(s, 1, [(0, {"type": "income"})])
    draw(page, msg(before, 1, code="OTHER"))
    got = draw(page, msg(after, 1, code="OTHER"))
    coin = got["coins"][0]
    assert (coin["from"], coin["to"]) == ("treasury", "0")
    assert near(coin["end"], got["seats"]["0"]["purse"])
    gone(page)
    assert errors == []


def test_mafia_claim_plaque_then_coins_from_victim_to_thief(page: Page, server: WebServer) -> None:
    open_table(page, server)
    s = table([[B, M], [H, J], [R, P]])
    views = steps(s, 2, [(0, {"type": "income"}), (1, {"type": "mafia", "target": 0}),
                         (0, {"type": "pass"}), (2, {"type": "pass"})])
    draw(page, msg(views[0], 2))
    draw(page, msg(views[1], 2))
    gone(page)
    claimed = draw(page, msg(views[2], 2))
    # The claim the view holds, on the claimant's panel, popping up once (not again at the next step).
    plaque = {"seat": 1, "text": "claims Mafia", "kind": "claim", "after": True}
    assert claimed["plaques"] == [{**plaque, "popped": True}]
    assert_short(claimed)
    still = draw(page, msg(views[3], 2))
    assert still["plaques"] == [{**plaque, "popped": False}]
    gone(page)
    stolen = draw(page, msg(views[4], 2))
    assert stolen["plaques"] == [], "the claim goes once the action stands"
    assert [(c["from"], c["to"], c["amount"]) for c in stolen["coins"]] == [("0", "1", 2)]
    coin = stolen["coins"][0]
    assert near(coin["start"], stolen["seats"]["0"]["purse"])
    assert near(coin["end"], stolen["seats"]["1"]["purse"])
    assert stolen["strip"] == "Ben steals $2M from Ana."
    assert_short(stolen)
    gone(page)


# Ana holds the Banker she claims; Ben challenges, loses and gives up his Hacker.
BANKER_CHALLENGED = [(0, {"type": "banker"}), (1, {"type": "challenge"}), (1, {"type": "lose", "card": H})]


def test_a_challenge_won_turns_the_card_over_and_the_loser_flips_an_influence(
    page: Page, server: WebServer,
) -> None:
    open_table(page, server)
    # Ana holds the Banker; Ben challenges and loses. Cat watches.
    s = table([[B, M], [H, J], [R, P]])
    views = steps(s, 2, BANKER_CHALLENGED)
    draw(page, msg(views[0], 2))
    draw(page, msg(views[1], 2))
    gone(page)
    shown = draw(page, msg(views[2], 2))
    assert shown["reveals"] == [{"seat": 0, "card": "banker"}]
    assert any(a["inLayer"] and a["rotate"] for a in shown["anims"]), "the revealed card turns over"
    assert {(p["seat"], p["text"], p["kind"]) for p in shown["plaques"]} == {(0, "shows Banker ✓", "shown")}
    assert shown["strip"] == "Ana reveals the Banker: the challenge fails."
    assert_short(shown)
    gone(page)
    lost = draw(page, msg(views[3], 2))
    # Ben's Hacker turns face up on his panel; the card Ana showed goes back to the deck and a new one
    # comes (by count); the Banker's $3M fly to her.
    flips = [a for a in lost["anims"] if a["rotate"]]
    assert [(a["seat"], a["lost"]) for a in flips] == [(1, True)]
    assert {(t["kind"], t["seat"]) for t in lost["trips"]} == {("replace", 0)}
    assert [(c["from"], c["to"], c["amount"]) for c in lost["coins"]] == [("treasury", "0", 3)]
    assert_short(lost)
    gone(page)

    # Ben's own page: the influence he lost turns over in his own hand.
    s = table([[B, M], [H, J], [R, P]])
    views = steps(s, 1, BANKER_CHALLENGED)
    draw(page, msg(views[2], 1, code="BEN"))
    got = draw(page, msg(views[3], 1, code="BEN"))
    assert [(a["seat"], a["lost"]) for a in got["anims"] if a["rotate"]] == [("me", True)]
    gone(page)


def test_a_caught_bluff_flips_the_bluffers_lost_card(page: Page, server: WebServer) -> None:
    open_table(page, server)
    s = table([[B, M], [H, J], [R, P]])
    bluff = [(0, {"type": "reporter"}), (1, {"type": "challenge"}), (0, {"type": "lose", "card": M})]
    views = steps(s, 1, bluff)
    draw(page, msg(views[1], 1))
    caught = draw(page, msg(views[2], 1))
    assert caught["reveals"] == [], "a bluff has no card to show"
    assert caught["strip"] == "Ana does not have the Reporter: bluff caught!"
    gone(page)
    lost = draw(page, msg(views[3], 1))
    assert [(a["seat"], a["lost"]) for a in lost["anims"] if a["rotate"]] == [(0, True)]
    gone(page)


def test_an_exchange_shows_counts_never_roles(page: Page, server: WebServer) -> None:
    open_table(page, server)
    s = table([[B, M], [H, J], [R, P]])
    moves: list[tuple[int, dict[str, Any]]] = [
        (0, {"type": "income"}), (1, {"type": "income"}), (2, {"type": "reporter"}),
        (0, {"type": "pass"}), (1, {"type": "pass"})]
    for seat in (0, 2):
        s = table([[B, M], [H, J], [R, P]])
        views = steps(s, seat, moves)
        code = f"EX{seat}"
        for view in views[:-1]:
            draw(page, msg(view, seat, code=code))
        gone(page)
        drawn = draw(page, msg(views[-1], seat, code=code))
        hand = drawn["seats"]["me" if seat == 2 else "2"]["hand"]
        assert [(t["kind"], t["seat"], t["text"]) for t in drawn["trips"]] == [("draw", 2, "+2")]
        trip = drawn["trips"][0]
        assert near(trip["start"], drawn["deck"]) and near(trip["end"], hand)
        assert drawn["layerFaces"] == 0 and drawn["reveals"] == []
        assert_short(drawn)
        gone(page)
        keep = s.legal_actions(2)[0]
        s.apply(2, keep)
        back = draw(page, msg(s.view(seat), seat, code=code))
        assert [(t["kind"], t["seat"], t["text"]) for t in back["trips"]] == [("exchange", 2, "−2")]
        # From where the hand is now: one's own hand is drawn smaller once its choice is made.
        hand = back["seats"]["me" if seat == 2 else "2"]["hand"]
        assert near(back["trips"][0]["start"], hand) and near(back["trips"][0]["end"], back["deck"])
        # Nothing in the layer names a role: only backs and counts (Cat's roles are hers alone).
        assert back["layerFaces"] == 0
        for role in ("Banker", "Mafia", "Hacker", "Judge", "Reporter", "Police"):
            assert role not in back["layerText"]
        gone(page)


def test_nothing_moves_on_a_first_view_a_jump_or_another_room(page: Page, server: WebServer) -> None:
    open_table(page, server)
    s = table([[B, M], [H, J], [R, P]])
    views = steps(s, 2, [(0, {"type": "income"}), (1, {"type": "income"}), (2, {"type": "income"}),
                         (0, {"type": "mafia", "target": 1})])
    # A page opened mid-claim: the plaque is there, still; no coin flies.
    first = draw(page, msg(views[4], 2))
    assert first["anims"] == [] and first["layerKids"] == 0
    assert [(p["seat"], p["popped"]) for p in first["plaques"]] == [(0, False)]
    # The same step in another room, or another game of this room, is a first view again.
    draw(page, msg(views[0], 2, code="ROOM1"))
    assert draw(page, msg(views[1], 2, code="ROOM2"))["anims"] == []
    draw(page, msg(views[0], 2, code="ROOM3", gameId="a"))
    assert draw(page, msg(views[1], 2, code="ROOM3", gameId="b"))["anims"] == []
    # A jump of many entries (a reconnect that caught up) is drawn, not replayed.
    s2 = table([[B, M], [H, J], [R, P]])
    start = json.loads(json.dumps(s2.view(2)))
    for _ in range(5):
        for seat in range(3):
            s2.apply(seat, {"type": "income"})
    draw(page, msg(start, 2, code="JUMP"))
    jumped = draw(page, msg(s2.view(2), 2, code="JUMP"))
    assert jumped["anims"] == [] and jumped["layerKids"] == 0
    # A rematch (a log that does not go on from the last one) neither.
    draw(page, msg(views[3], 2, code="REMATCH"))
    assert draw(page, msg(views[1], 2, code="REMATCH"))["anims"] == []


def test_a_jump_clears_what_still_flies_and_no_flight_takes_a_click(page: Page, server: WebServer) -> None:
    """A coin caught mid-flight (held where it starts) lets the pointer through to the table under it;
    then the client jumps far ahead (a reconnect that caught up): the flight is gone at once, not left
    to land on a table that tells another story."""
    open_table(page, server)
    s = table([[B, M], [H, J], [R, P]])
    before, after = steps(s, 2, [(0, {"type": "income"})])
    draw(page, msg(before, 2, code="HELD"))
    held = page.evaluate("(m) => window.motionTest.hold(m)", msg(after, 2, code="HELD"))
    assert held["layerKids"] == 1 and held["held"] >= 1, held
    assert held["under"] and all(u not in (None, "motion-layer") for u in held["under"]), held["under"]
    for _ in range(12):
        s.apply(s.waiting_for()[0], {"type": "income"})
    jumped = page.evaluate("(m) => window.motionTest.hold(m)", msg(s.view(2), 2, code="HELD"))
    assert jumped["layerKids"] == 0 and jumped["anims"] == [] and jumped["held"] == 0, jumped


def test_reduced_motion_moves_nothing_and_the_switch_is_off(page: Page, server: WebServer) -> None:
    page.emulate_media(reduced_motion="reduce")
    open_table(page, server)
    s = table([[B, M], [H, J], [R, P]])
    views = steps(s, 2, [(0, {"type": "income"}), (1, {"type": "mafia", "target": 0})])
    draw(page, msg(views[0], 2))
    for view in views[1:]:
        got = draw(page, msg(view, 2))
        assert got["anims"] == [] and got["layerKids"] == 0 and got["coins"] == [] and got["plaques"] == []
    # The words are still told; the switch says why motion is off and cannot turn it on.
    assert got["strip"] == "Ben claims the Mafia to steal from Ana."
    assert got["toggle"] == {"pressed": "false", "disabled": True,
                             "label": "Motion off: your system asks for reduced motion"}


def test_the_switch_turns_motion_off_and_is_remembered(page: Page, server: WebServer) -> None:
    open_table(page, server)
    s = table([[B, M], [H, J], [R, P]])
    views = steps(s, 2, [(0, {"type": "income"}), (1, {"type": "income"}),
                         (2, {"type": "mafia", "target": 0})])
    draw(page, msg(views[0], 2))
    off = page.evaluate("() => window.motionTest.click('motion')")
    assert off["toggle"] == {"pressed": "false", "disabled": False, "label": "Motion off: turn it on"}
    assert page.evaluate("() => localStorage.getItem('conflictology:motion')") == "0"
    got = draw(page, msg(views[1], 2))
    assert got["anims"] == [] and got["layerKids"] == 0 and got["strip"] == "Ana takes $1M from the Treasury."

    page.reload()
    page.wait_for_selector("main.screen-home")
    page.evaluate(HARNESS, NAMES)
    draw(page, msg(views[1], 2))
    for view in views[2:]:
        got = draw(page, msg(view, 2))
        assert got["anims"] == [] and got["layerKids"] == 0 and got["plaques"] == []
    assert got["toggle"]["pressed"] == "false"

    on = page.evaluate("() => window.motionTest.click('motion')")
    assert on["toggle"]["pressed"] == "true"
    assert page.evaluate("() => localStorage.getItem('conflictology:motion')") == "1"
    s.apply(0, {"type": "pass"})
    s.apply(1, {"type": "pass"})
    got = draw(page, msg(s.view(2), 2))
    assert [(c["from"], c["to"]) for c in got["coins"]] == [("0", "2")]
    gone(page)


def test_the_strip_speaks_spanish(page: Page, server: WebServer) -> None:
    open_table(page, server)
    s = table([[B, M], [H, J], [R, P]])
    views = steps(s, 0, [(0, {"type": "income"}), (1, {"type": "banker"})])
    draw(page, msg(views[0], 0, lang="es"))
    got = draw(page, msg(views[1], 0, lang="es"))
    assert got["strip"] == "Ana toma 1 M$ del Tesoro."
    assert got["toggle"]["label"] == "Movimiento activado: desactivarlo"
    got = draw(page, msg(views[2], 0, lang="es"))
    assert [(p["seat"], p["text"]) for p in got["plaques"]] == [(1, "declara Banquero")]
    gone(page)


def test_conspiranoicos_strip_and_the_plays_turn_over(page: Page, server: WebServer) -> None:
    open_table(page, server)
    s = CONSPIRANOICOS.new_game(players=2, seed=3)
    s.apply(0, s.legal_actions(0)[0])
    submitted = json.loads(json.dumps(s.view(0)))
    s.apply(1, s.legal_actions(1)[0])
    revealed = json.loads(json.dumps(s.view(0)))
    assert submitted["table"]["plays"][1] is None and isinstance(revealed["table"]["plays"][1], str)
    draw(page, msg(submitted, 0, legal=[]))
    got = draw(page, msg(revealed, 0, legal=s.legal_actions(0)))
    assert got["strip"] == "Ana wins round 1 (closer in value)."
    # Ben's card turns over; Ana's own was face up to her already.
    assert [a["slot"] for a in got["anims"] if a["rotate"]] == [1]
    assert_short(got)
    gone(page)
    # The round's cards go down: the one sent to the Pyramid and the one left over arrive in their slots.
    pyramid = [None] * 6
    sent = {"type": "send", "card": revealed["table"]["plays"][0], "to": "pyramid"}
    for seat in (0, 1):
        s.apply(seat, sent if seat == 0 else s.legal_actions(1)[0])
        view = json.loads(json.dumps(s.view(0)))
        placed = draw(page, msg(view, 0, legal=s.legal_actions(0)))
        arrived = [f"pyramid {i + 1}" for i, x in enumerate(view["pyramid"]) if x and x != pyramid[i]]
        assert sorted(a["slot"] for a in placed["anims"] if a["rotate"]) == arrived
        pyramid = view["pyramid"]
        gone(page)
    assert any(pyramid), "a card went to the Pyramid"
    es = draw(page, msg(revealed, 0, lang="es", legal=s.legal_actions(0)))
    assert es["strip"] == "Ana gana la ronda 1 (valor más cercano)."


# Every Web Animation the page starts, from its very first script on (the client's own app.js hook).
RECORD_ANIMATIONS = """(() => {
  const started = [];
  window.__motion = started;
  const animate = Element.prototype.animate;
  Element.prototype.animate = function (...args) {
    const a = animate.apply(this, args);
    const data = this.dataset || {};
    const cls = String(this.getAttribute('class') || '');
    started.push({ cls, to: data.to || null, from: data.from || null });
    return a;
  };
})();"""


def test_the_client_tells_a_real_game_and_remembers_the_switch(page: Page, server: WebServer) -> None:
    """app.js draws the strip and the motion of a real game's state messages; the switch sits in the
    table-talk bar and survives a reload of the page."""
    errors = watch_errors(page)
    page.add_init_script(RECORD_ANIMATIONS)
    room = api_room(server, "capitol", ["Ana"], bots=1, options={"first_player": 0})
    api_start(server, room)
    open_seat(page, server, room, 0, "Ana")
    expect(page.locator("[data-testid=latest]")).to_contain_text("Ana plays first.")
    expect(page.locator(".talk [data-k=motion]")).to_have_attribute("aria-pressed", "true")
    assert page.evaluate("() => window.__motion") == [], "opening the table moves nothing"
    page.click("[data-k=act-income]")
    page.wait_for_function("""() => window.__motion.some(
      (a) => a.cls === 'motion-coin' && a.from === 'treasury' && a.to === '0')""")
    expect(page.locator(".log-list li").nth(2)).to_have_text("Ana takes $1M from the Treasury.")
    page.click(".talk [data-k=motion]")
    expect(page.locator(".talk [data-k=motion]")).to_have_attribute("aria-pressed", "false")
    page.reload()
    expect(page.locator(".talk [data-k=motion]")).to_have_attribute("aria-pressed", "false")
    expect(page.locator("[data-testid=latest]")).not_to_be_empty()
    assert errors == []
