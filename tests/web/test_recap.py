"""Issue 27's recap cards: a Capitol and a Conspiranoicos game played in the page to their end show
the recap, every figure on its cards equal to those recomputed here from the archived game
(recap.build over GET /api/games/{id}), and it is shared as a PNG and as text: through the browser's
share sheet where it takes files, else downloaded (the picture) and copied (the text). The text links
the replay only for a public room's game (a private one's opens for its players alone)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from browser_helpers import (
    Seen,
    WebServer,
    api_room,
    api_start,
    capitol_step,
    conspiranoicos_step,
    open_seat,
    play_until_over,
    run_server,
    watch_errors,
)
from conflictology import recap

pytestmark = pytest.mark.browser

PNG = b"\x89PNG\r\n\x1a\n"
# How the recap names the two seats: Ana (seat 0) reads herself as "you"; the bot is named by its number
# and level (the API adds bots at the server's default level).
WHO = ["you", "Bot 1 · normal"]

# A share sheet that takes files, standing in for a phone's: it keeps what it was given (the
# picture's first bytes, enough for its signature and size).
SHARE_SHEET = """
window.shared = [];
Navigator.prototype.canShare = function (data) { return !!(data && data.files && data.files.length); };
Navigator.prototype.share = async function (data) {
  const files = [];
  for (const f of data.files || []) {
    const head = Array.from(new Uint8Array(await f.arrayBuffer()).slice(0, 24));
    files.push({ name: f.name, type: f.type, head });
  }
  window.shared.push({ text: data.text || '', files });
};
"""
# No share sheet (a desktop browser without one): the picture is downloaded, the text copied.
NO_SHARE_SHEET = "delete Navigator.prototype.share; delete Navigator.prototype.canShare;"

# Everything the recap cards show, read in one go.
CARDS = """() => {
  const text = (sel) => { const el = document.querySelector(sel); return el ? el.textContent.trim() : null; };
  const cells = (tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent.trim());
  const rows = (sel) => [...document.querySelectorAll(sel)];
  const keyed = (sel, key, value) => Object.fromEntries(rows(sel).map((tr) => [tr.dataset[key], value(tr)]));
  const figures = (tr) => Object.fromEntries([...tr.querySelectorAll('td [data-k]')]
    .map((el) => [el.dataset.k, el.textContent.trim()]));
  return {
    order: rows('[data-testid=recap] .recap-hand').map((li) => Number(li.dataset.seat)),
    cards: rows('[data-testid=recap] .recap-card').map((a) => a.dataset.card),
    chance: text('[data-testid=recap-chance]'),
    step: text('[data-testid=recap] .recap-decisive .muted'),
    swing: text('[data-testid=recap-swing]'),
    bluffs: keyed('[data-testid=recap-bluffs] tbody tr', 'seat', figures),
    round: text('[data-testid=recap-round]'),
    rounds: keyed('[data-testid=recap-rounds] tbody tr', 'round',
      (tr) => ({ score: cells(tr), decisive: tr.classList.contains('decisive') })),
    criteria: keyed('[data-testid=recap-criteria] tbody tr', 'criterion', cells),
    final: text('[data-testid=recap-final]'),
  };
}"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    with run_server(tmp_path_factory.mktemp("recap"), extra=("--grace", "3600")) as running:
        yield running


def money(n: int) -> str:
    """js/capitol.js's signed amount in English (i18n en.js capitol.money)."""
    return f"+${n}M" if n > 0 else f"−${-n}M"


def check_capitol(shown: dict[str, Any], story: dict[str, Any]) -> None:
    who = WHO
    winners = " & ".join(who[w] for w in story["winners"])
    decisive = story["decisive"]
    assert shown["chance"] == f"{winners}: chance to win {decisive['before']}% → {decisive['after']}%"
    assert shown["step"] == f"Move {decisive['step']} of {story['steps']}"
    swing = story["swing"]
    if swing is None:
        assert shown["swing"] is None and "swing" not in shown["cards"]
    else:
        assert shown["swing"] == f"{who[swing['seat']]} {money(swing['amount'])}", (shown["swing"], swing)
    for seat, mine in enumerate(story["per_seat"]):
        row = shown["bluffs"][str(seat)]
        for key in ("bluffs", "bluffs_caught", "challenges_won", "challenges_lost"):
            assert row[key] == str(mine[key]), (seat, key, row, mine)


def check_conspiranoicos(shown: dict[str, Any], story: dict[str, Any]) -> None:
    who = WHO
    decisive = story["decisive"]
    if decisive is None:
        assert shown["round"] == "Tied on points with no tie-break: a shared victory."
    elif decisive["round"] is not None:
        name = who[story["winners"][0]]
        assert shown["round"] == f"From round {decisive['round']} on, {name} had the stronger evidence."
    elif decisive["at"] == "sort":
        assert shown["round"] == f"{who[story['winners'][0]]} pulled ahead in Sort Evidence."
    else:
        assert shown["round"].startswith("Tied on points: the "), shown["round"]
    assert len(shown["rounds"]) == len(story["rounds"]) + 1  # and the total
    for r in story["rounds"]:
        row = shown["rounds"][str(r["round"])]
        assert row["score"] == [str(n) for n in r["score"]], (r, row)
        assert row["decisive"] == (decisive is not None and decisive["round"] == r["round"]), (r, row)
    assert shown["rounds"]["total"]["score"] == [str(n) for n in story["totals"]]
    assert shown["criteria"] == {c["criterion"]: [str(n) for n in c["points"]] for c in story["criteria"]}
    final = story["final_challenge"]["winner"]
    assert shown["final"] == (f"{who[final]} won the Final Challenge." if final >= 0
                              else "Nobody won the Final Challenge.")  # fmt: skip


def png_head(head: bytes) -> tuple[int, int]:
    assert head[:8] == PNG, head[:8]
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def play_to_the_recap(page: Page, server: WebServer, room: dict[str, Any], game: str) -> None:
    open_seat(page, server, room, 0, "Ana")
    play_until_over([page], capitol_step if game == "capitol" else conspiranoicos_step, Seen(), timeout=300)
    page.wait_for_selector("[data-testid=recap]", timeout=60_000)


def archived_recap(server: WebServer, room: dict[str, Any]) -> dict[str, Any]:
    """The recap recomputed here from the archived game, once it equals what the server serves."""
    with server.api() as http:
        game_id = http.get(f"/api/rooms/{room['code']}").json()["game_id"]
        auth = {"Authorization": f"Bearer {room['tokens'][0]}"}
        export = http.get(f"/api/games/{game_id}", headers=auth).json()
        served = http.get(f"/api/games/{game_id}/recap", headers=auth).json()
    story = recap.build(export)
    assert served == {**story, "players": served["players"]}
    return story


def test_a_public_games_recap_is_downloaded_and_copied_with_its_replay(
    browser: Browser, server: WebServer
) -> None:
    """Capitol in a public room, in a browser with no share sheet: the hands (the winner's first), the
    decisive moment, the biggest money swing and the bluffs table as the archive says; the picture
    downloaded (a 1200×630 PNG), the text copied with the replay's address."""
    room = api_room(server, "capitol", ["Ana"], bots=1, public=True)
    api_start(server, room)
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, locale="en-US", accept_downloads=True)
    ctx.grant_permissions(["clipboard-read", "clipboard-write"])
    ctx.add_init_script(NO_SHARE_SHEET)
    page = ctx.new_page()
    errors = watch_errors(page)
    play_to_the_recap(page, server, room, "capitol")
    story = archived_recap(server, room)
    shown = page.evaluate(CARDS)
    assert shown["order"][: len(story["winners"])] == story["winners"]
    assert shown["order"] == [r["seat"] for r in story["reveal"]]
    check_capitol(shown, story)
    with page.expect_download() as download:
        page.click("[data-k=share-picture]")
    assert png_head(download.value.path().read_bytes()[:24]) == (1200, 630)
    page.click("[data-k=share-text]")
    page.wait_for_function("() => navigator.clipboard.readText().then((t) => t.includes(' won'))")
    text = page.evaluate("() => navigator.clipboard.readText()")
    assert "Ana" in text and f"/replay/{story['id']}" in text  # a public room's replay is anyone's
    # Each player's line, its words in the singular or the plural as the figures ask.
    lines = text.split("\n")
    assert "Bluffs and challenges:" in lines
    for name, mine in zip(["Ana", WHO[1]], story["per_seat"], strict=True):
        bluffs, won = mine["bluffs"], mine["challenges_won"]
        said = (f"{bluffs} {'bluff' if bluffs == 1 else 'bluffs'} told ({mine['bluffs_caught']} caught), "
                f"{won} {'challenge' if won == 1 else 'challenges'} won, {mine['challenges_lost']} lost")
        assert f"  {name}: {said}" in lines, (name, said, lines)
    assert errors == []
    ctx.close()


def test_a_private_games_recap_goes_to_the_share_sheet_without_its_replay(
    browser: Browser, server: WebServer
) -> None:
    """Conspiranoicos in a private room, in a browser whose share sheet takes files: the rows (the
    winner's first), the round that decided it with each round's evidence, the criteria and the Final
    Challenge as the archive says; the picture and the text go to the share sheet, and the text does
    not link a replay that only the players may open."""
    room = api_room(server, "conspiranoicos", ["Ana"], bots=1)
    api_start(server, room)
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, locale="en-US", accept_downloads=True)
    ctx.add_init_script(SHARE_SHEET)
    page = ctx.new_page()
    errors = watch_errors(page)
    downloads: list[object] = []
    page.on("download", lambda d: downloads.append(d))
    play_to_the_recap(page, server, room, "conspiranoicos")
    story = archived_recap(server, room)
    shown = page.evaluate(CARDS)
    assert shown["order"] == [r["seat"] for r in story["reveal"]]
    assert shown["order"][0] == story["winners"][0]
    check_conspiranoicos(shown, story)
    page.click("[data-k=share-picture]")
    page.wait_for_function("() => window.shared.length === 1")
    page.click("[data-k=share-text]")
    page.wait_for_function("() => window.shared.length === 2")
    picture, text = page.evaluate("() => window.shared")
    assert [(f["name"], f["type"]) for f in picture["files"]] == [
        (f"conflictology-conspiranoicos-{story['id'][:12]}.png", "image/png")]
    assert png_head(bytes(picture["files"][0]["head"])) == (1200, 630)
    assert picture["text"].startswith("Conspiranoicos: ") and picture["text"].endswith(" won")
    assert text["files"] == [] and text["text"].startswith(picture["text"])
    assert "The round that decided it:" in text["text"] and "Final Challenge:" in text["text"]
    assert "/replay/" not in text["text"] and story["id"] not in text["text"]
    assert downloads == []
    assert errors == []
    ctx.close()
