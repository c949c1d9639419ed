"""The client's store (js/store.js) and what it reads of GET /api/info (js/info.js), run in Chromium
against a real server: the reducer is fed a seat's recorded socket messages (a lobby renumbered under
it, the game's states, a stale act's error) and must land on the same screen and seat as the UI does,
without changing the state it was given; the forms built from /api/info offer what the client
offered when it kept its own copy."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page
from websockets.sync.client import connect

from browser_helpers import WebServer, run_server

pytestmark = pytest.mark.browser


@pytest.fixture
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    # The waits below are strings evaluated in the page (the test's harness, not the client's code),
    # which the server's Content-Security-Policy rightly refuses: the `page` fixture's context bypasses it.
    return {**browser_context_args, "bypass_csp": True}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    with run_server(tmp_path_factory.mktemp("store")) as running:
        yield running


def record(server: WebServer) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Ana's seat and the messages her socket brings: seated third, renumbered to the second seat when
    Cat leaves the lobby, then the game with a bot, then an act quoting an old `seq`."""
    http = server.api()
    ben = http.post(
        "/api/rooms", json={"game": "capitol", "name": "Ben", "settings": {"timers": False}}
    ).json()
    code = ben["code"]
    host = {"Authorization": f"Bearer {ben['token']}"}
    cat = http.post(f"/api/rooms/{code}/join", json={"name": "Cat"}).json()
    ana = http.post(f"/api/rooms/{code}/join", json={"name": "Ana"}).json()
    ws_url = server.url.replace("http://", "ws://") + f"/ws/{code}?token={ana['token']}"
    got: list[dict[str, Any]] = []
    with connect(ws_url) as ws:

        def until(kind: str, test: Any = lambda m: True) -> dict[str, Any]:
            while True:
                msg = json.loads(ws.recv(timeout=10))
                got.append(msg)
                if msg["type"] == kind and test(msg):
                    return msg

        until("lobby")
        http.post(f"/api/rooms/{code}/leave", headers={"Authorization": f"Bearer {cat['token']}"})
        until("lobby", lambda m: len(m["room"]["seats"]) == 2)
        assert http.post(
            f"/api/rooms/{code}/bots", json={"count": 1, "level": "random"}, headers=host
        ).is_success
        until("lobby", lambda m: len(m["room"]["seats"]) == 3)
        assert http.post(f"/api/rooms/{code}/start", headers=host).is_success
        state = until("state")
        ws.send(json.dumps({"type": "act", "action": {"type": "income"}, "seq": state["seq"] - 1}))
        until("error")
    seat = {"code": code, "token": ana["token"], "seat": ana["seat"], "name": "Ana"}
    return seat, got


REPLAY = """async ({seat, messages}) => {
  const { initialState, reduce, Screen } = await import('/js/store.js');
  let state = { ...initialState(), code: seat.code, token: seat.token, seat: seat.seat,
    screen: Screen.CONNECTING, saved: { token: seat.token, seat: seat.seat, name: seat.name } };
  const steps = [];
  for (const msg of messages) {
    const before = JSON.stringify(state);
    const next = reduce(state, msg, 1000);
    steps.push({ type: msg.type, untouched: JSON.stringify(state) === before, same: next === state,
      screen: next.screen, seat: next.seat, saved: next.saved && next.saved.seat, seq: next.seq,
      busy: next.busy });
    state = next;
  }
  const unknown = reduce(state, { type: 'no-such-message' });
  const busy = reduce({ ...state, busy: true }, { type: 'error', code: 'stale' });
  const left = reduce(state, { type: 'left' });
  const leftByThisBrowser = reduce({ ...state, saved: { ...state.saved, left: true } }, { type: 'left' });
  return { steps, screens: Object.values(Screen), frozen: Object.isFrozen(Screen),
    unknownSame: unknown === state, busyCleared: busy.busy === false, leftSaved: left.saved,
    keptWhenLeftHere: leftByThisBrowser.saved && leftByThisBrowser.saved.left };
}"""


def test_reducer_follows_a_recorded_seat_to_the_table(page: Page, server: WebServer) -> None:
    seat, messages = record(server)
    assert seat["seat"] == 2
    page.goto(server.url + "/")
    out = page.evaluate(REPLAY, {"seat": seat, "messages": messages})
    steps = out["steps"]
    assert all(s["untouched"] for s in steps), "the reducer changed the state it was given"
    lobbies = [s for s in steps if s["type"] == "lobby"]
    assert lobbies[0]["screen"] == "lobby" and lobbies[0]["seat"] == 2
    # Cat left: the server renumbered Ana, and the store follows (the stored seat too).
    assert lobbies[-1]["seat"] == 1 and lobbies[-1]["saved"] == 1
    first_state = next(s for s in steps if s["type"] == "state")
    assert first_state["screen"] == "table" and first_state["seat"] == 1 and first_state["seq"] >= 1
    last = steps[-1]
    assert last["type"] == "error" and last["screen"] == "table" and not last["busy"]
    assert out["frozen"] and {"home", "join", "connecting", "lobby", "table", "gone"} == set(out["screens"])
    assert out["unknownSame"] and out["busyCleared"]
    assert out["leftSaved"] is None and out["keptWhenLeftHere"] is True


FORMS = """async () => {
  const info = await import('/js/info.js');
  info.setInfo(await (await fetch('/api/info')).json());
  const tables = { capitol: {}, conspiranoicos: {} };
  return {
    games: info.gameNames(tables),
    limits: [info.seatLimits('capitol'), info.seatLimits('conspiranoicos')],
    options: [info.formOptions('capitol'), info.formOptions('conspiranoicos')],
    settings: info.formSettings(),
    bots: [info.botChoices('capitol'), info.botChoices('conspiranoicos')],
  };
}"""


def test_forms_from_api_info_offer_what_the_client_offered(page: Page, server: WebServer) -> None:
    page.goto(server.url + "/")
    got = page.evaluate(FORMS)
    assert got["games"] == ["capitol", "conspiranoicos"]
    assert got["limits"] == [{"min": 2, "max": 10}, {"min": 2, "max": 2}]
    capitol, conspiranoicos = got["options"]
    assert [(o["key"], o["kind"], o["default"]) for o in capitol] == [
        ("forced_scandal", "bool", True),
        ("anyone_challenges_block", "bool", False),
        ("steal_blockers", "set", []),
        ("copies", "count", None),
        ("stalemate_turns", "count", None),
    ]
    assert capitol[2]["choices"] == ["mafia", "police", "reporter"]
    assert capitol[3]["choices"] == [3, 4, 5] and capitol[4]["choices"] == [10, 20, 40, 80, 200]
    assert conspiranoicos == []
    assert [(s["key"], s["default"], s.get("max")) for s in got["settings"]] == [
        ("timers", True, None),
        ("turn_seconds", 60, 3600),
        ("response_seconds", 12, 3600),
        ("choice_seconds", 30, 3600),
        ("hold_seconds", 30, 300),
        ("spectators", True, None),
        ("standing", False, None),
    ]
    personalities = ["heuristic-honest", "heuristic-bluffer", "heuristic-sceptic", "heuristic-aggressive"]
    assert got["bots"] == [
        ["", "easy", "normal", "hard", "random", *personalities, "mystery"],
        ["", "easy", "normal", "hard", "random", "mystery"],
    ]


def test_no_client_module_copies_the_servers_lists() -> None:
    web = Path(__file__).resolve().parents[2] / "src/conflictology/web/js"
    assert not (web / "games.js").exists()
    for path in web.rglob("*.js"):
        text = path.read_text(encoding="utf-8")
        assert "heuristic-honest" not in text and "forced_scandal" not in text, path


def record_deltas(server: WebServer, page: Page) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A bots' game watched by two spectator sockets, one asking for log deltas (``?v=2``) and one
    not, and by the client's own Connection in ``page`` (whose held log is dropped after its first
    state, as if it had missed messages). Returns the two sockets' messages, in order."""
    http = server.api()
    ben = http.post(
        "/api/rooms", json={"game": "capitol", "name": "Ben", "settings": {"timers": False}}
    ).json()
    code, host = ben["code"], {"Authorization": f"Bearer {ben['token']}"}
    assert http.post(f"/api/rooms/{code}/bots", json={"count": 3, "level": "random"}, headers=host).is_success
    ws_url = server.url.replace("http://", "ws://") + f"/ws/{code}"
    page.evaluate(WATCH, {"url": ws_url})
    page.wait_for_function("window.got.length > 0")
    messages: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])
    with connect(ws_url) as whole, connect(ws_url + "?v=2") as deltas:
        for ws in (whole, deltas):
            messages[ws is deltas].append(json.loads(ws.recv(timeout=10)))
        assert http.post(f"/api/rooms/{code}/start", headers=host).is_success
        # Ben leaves: a bot plays his seat, and the game plays itself to its end.
        assert http.post(f"/api/rooms/{code}/leave", headers=host).is_success
        for ws in (whole, deltas):
            while "winners" not in messages[ws is deltas][-1]:
                messages[ws is deltas].append(json.loads(ws.recv(timeout=30)))
    page.wait_for_function("window.got.some((m) => m.winners)", timeout=30000)
    return messages


WATCH = """async ({url}) => {
  const { Connection } = await import('/js/connection.js');
  window.got = [];
  window.sent = [];
  const conn = new Connection(url, { onMessage: (m) => {
    window.got.push(m);
    // After its first state the socket's log is dropped: its next delta is a gap.
    if (m.type === 'state' && window.got.filter((x) => x.type === 'state').length === 1) conn.log = [];
  } });
  const send = conn.send.bind(conn);
  conn.send = (obj) => { window.sent.push(obj); return send(obj); };
  window.conn = conn;
}"""

JOIN = """async ({messages}) => {
  const { joinLog } = await import('/js/store.js');
  let held = [];
  const out = [];
  for (const msg of messages) {
    const joined = joinLog(held, msg);
    if (msg.type !== 'state') continue;
    held = joined.view.log;
    out.push({ seq: msg.seq, log: held, from: msg.log_from, sent: msg.view.log.length });
  }
  const gap = joinLog([], { type: 'state', log_from: 2, view: { log: [{}] } });
  const whole = joinLog([{ a: 1 }], { type: 'state', view: { log: [{ b: 2 }] } });
  return { out, gap, whole: whole.view.log };
}"""


def test_the_client_joins_log_deltas_into_the_seats_whole_log(page: Page, server: WebServer) -> None:
    page.goto(server.url + "/")
    whole, deltas = record_deltas(server, page)
    logs = {m["seq"]: m["view"]["log"] for m in whole if m["type"] == "state"}
    assert len(logs) > 5 and all("log_from" not in m for m in whole)
    got = page.evaluate(JOIN, {"messages": deltas})
    assert got["gap"] is None and got["whole"] == [{"b": 2}]
    joined = got["out"]
    assert joined[0]["from"] == 0 and any(j["from"] > 0 for j in joined)
    for step in joined:  # what the client holds is, at every state, the full view's log
        assert step["log"] == logs[step["seq"]]
    assert sum(j["sent"] for j in joined) < sum(len(log) for log in logs.values()) / 2
    # The client's own socket: asked for v2, found its gap, asked for a sync, and ends whole.
    seen = page.evaluate("({ url: window.conn.url, sent: window.sent, got: window.got })")
    assert "v=2" in seen["url"] and {"type": "sync"} in seen["sent"]
    states = [m for m in seen["got"] if m["type"] == "state"]
    assert all(m["view"]["log"] == logs[m["seq"]] for m in states)
    assert states[-1]["view"]["log"] == logs[max(logs)]
