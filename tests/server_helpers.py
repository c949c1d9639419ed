"""Fixtures for the server tests: a real uvicorn on 127.0.0.1 (in a thread or a subprocess), real
WebSocket players, and a leak check that replays the archived game to compare every view received
against the game's own view for that seat."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from websockets.sync.client import ClientConnection, connect

from conflictology import games
from conflictology.engine import Game, GameState
from conflictology.server.app import create_app
from conflictology.server.config import ServerConfig
from conflictology.server.guarded_protocols import uvicorn_options


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(url: str, timeout: float = 120.0, proc: subprocess.Popen[bytes] | None = None) -> None:
    """Waits for ``/healthz`` to answer 200. The bound is generous (a loaded CI machine starts a server
    slowly, and a server that is up answers at once); a process that exits first fails at once."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise RuntimeError(f"the server at {url} exited before it was healthy: {err}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/healthz", timeout=5).status_code == 200:
                return
        time.sleep(0.05)
    raise TimeoutError(f"server at {url} did not become healthy in {timeout:.0f} s")


@dataclass
class Server:
    url: str
    app: Any = None

    @property
    def ws(self) -> str:
        return "ws://" + self.url.removeprefix("http://")

    def http(self) -> httpx.Client:
        # Patient: on a loaded machine (CI at load 30) a first replay or archive export, built in a
        # process of its own, took more than 10 s to answer; a refused or wrong answer fails at once.
        return httpx.Client(base_url=self.url, timeout=60)


def seat_named(http: httpx.Client, code: str, seat: int) -> dict[str, object]:
    """A kick's body for ``seat`` as the room shows it now: its number and its stable id."""
    return {"seat": seat, "seat_id": http.get(f"/api/rooms/{code}").json()["seats"][seat]["id"]}


def auth(token: str) -> dict[str, str]:
    """The header a seat's HTTP requests carry."""
    return {"Authorization": f"Bearer {token}"}


@contextlib.contextmanager
def thread_server(tmp_path: Path, *, uvicorn_http: str = "auto", **overrides: Any) -> Iterator[Server]:
    """uvicorn in a thread of this process, on a free loopback port, with a SQLite file in tmp_path
    (``uvicorn_http``: uvicorn's HTTP implementation, httptools or h11)."""
    port = free_port()
    config = replace(
        ServerConfig(port=port, db_url=f"sqlite:///{tmp_path / 'server.sqlite3'}", bot_delay=0.0),
        **overrides,
    )
    app = create_app(config)
    # The same uvicorn settings as `serve` (timeouts, connection caps, WebSocket limits).
    server = uvicorn.Server(
        uvicorn.Config(app, **uvicorn_options(app, log_level="warning", http=uvicorn_http))
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url)
        yield Server(url, app)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def _set_soft_open_files(limit: int) -> None:
    import resource

    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))


class ServerProcess:
    """``python -m conflictology.cli serve`` as a child process (for the SIGKILL test)."""

    def __init__(
        self, db_url: str, port: int | None = None, *extra: str, open_files: int | None = None
    ) -> None:
        """``open_files``: the soft open-file limit the process starts with (its hard one unchanged)."""
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "conflictology.cli",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--db",
                db_url,
                "--log-level",
                "warning",
                *extra,
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=None if open_files is None else lambda: _set_soft_open_files(open_files),
        )
        try:
            wait_healthy(self.url, proc=self.proc)
        except (TimeoutError, RuntimeError):
            self.kill()
            raise

    @property
    def server(self) -> Server:
        return Server(self.url)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        # Generous: a killed process is torn down at its own (nice) priority, which took over 10 s
        # at load 50.
        self.proc.wait(timeout=60)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


class Player:
    """A real WebSocket client; a reader thread files every message it receives."""

    def __init__(
        self,
        server: Server,
        code: str,
        token: str | None,
        seat: int | None,
        *,
        version: int | None = None,
        **headers: str,
    ) -> None:
        """``version``: the protocol version asked for (``v=2``: log deltas); none, the default."""
        self.code = code
        self.token = token
        self.seat = seat
        query = [f"token={token}"] if token else []
        query += [f"v={version}"] if version is not None else []
        url = f"{server.ws}/ws/{code}" + ("?" + "&".join(query) if query else "")
        client = connect(url, additional_headers=headers or None, open_timeout=10)
        self.ws: ClientConnection = client.__enter__()
        self.messages: list[dict[str, Any]] = []
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        try:
            while True:
                msg = json.loads(self.ws.recv())
                self.messages.append(msg)
                self.inbox.put(msg)
        except Exception:
            pass
        self.inbox.put(None)

    def send(self, msg: dict[str, Any]) -> None:
        self.ws.send(json.dumps(msg))

    # Generous default waits: a message on its way is returned as soon as it arrives; the bound only
    # says how late a loaded machine may deliver it (a test that expects silence passes its own).
    def next(self, timeout: float = 60.0) -> dict[str, Any]:
        msg = self.inbox.get(timeout=timeout)
        if msg is None:
            raise ConnectionError("the server closed the connection")
        return msg

    def wait_for(self, pred: Any, timeout: float = 60.0) -> dict[str, Any]:
        deadline = time.time() + timeout
        while True:
            left = deadline - time.time()
            if left <= 0:
                raise TimeoutError("no matching message")
            msg = self.next(timeout=left)
            if pred(msg):
                return msg

    def latest_state(self) -> dict[str, Any] | None:
        for msg in reversed(self.messages):
            if msg.get("type") == "state":
                return msg
        return None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.ws.close()


@dataclass
class Table:
    """A room made over HTTP: the host, joined players and bots."""

    server: Server
    code: str
    tokens: dict[int, str] = field(default_factory=dict)

    @property
    def host_token(self) -> str:
        return self.tokens[0]


def make_table(
    server: Server,
    game: str,
    humans: int,
    bots: int = 0,
    level: str | None = None,
    options: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
) -> Table:
    with server.http() as http:
        body: dict[str, Any] = {"game": game, "name": "Host"}
        if options is not None:
            body["options"] = options
        if settings is not None:
            body["settings"] = settings
        r = http.post("/api/rooms", json=body)
        assert r.status_code == 201, r.text
        table = Table(server, r.json()["code"], {0: r.json()["token"]})
        for i in range(1, humans):
            r = http.post(f"/api/rooms/{table.code}/join", json={"name": f"Player {i}"})
            assert r.status_code == 201, r.text
            table.tokens[r.json()["seat"]] = r.json()["token"]
        if bots:
            body = {"count": bots} if level is None else {"count": bots, "level": level}
            r = http.post(
                f"/api/rooms/{table.code}/bots",
                json=body,
                headers={"Authorization": f"Bearer {table.host_token}"},
            )
            assert r.status_code == 201, r.text
    return table


def eventually(read: Callable[[], Any], want: Callable[[Any], bool], timeout: float = 60.0) -> Any:
    """``read()`` once ``want`` holds of it (what a server writes after it answered: the archive, the
    standings, a room's options); fails after ``timeout`` with what was read last."""
    deadline = time.monotonic() + timeout
    while True:
        got = read()
        if want(got):
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached in {timeout} s: {got!r}"[:2000])
        time.sleep(0.05)


def start(table: Table) -> dict[str, Any]:
    with table.server.http() as http:
        r = http.post(
            f"/api/rooms/{table.code}/start", headers={"Authorization": f"Bearer {table.host_token}"}
        )
        assert r.status_code == 200, r.text
        return dict(r.json())


# A game whose sockets hear nothing for this long has stopped: say where, rather than wait for the
# test's own timeout (every server here answers a move in well under a second, loaded or not).
STALL_SECONDS = 90.0
RATE_LIMITED_BACKOFF = 0.5


def play_randomly(
    players: list[Player], seed: int = 0, timeout: float = 120.0, stop_after: int | None = None
) -> int:
    """Every human answers every state that awaits it with a random legal action (quoting its seq),
    until each has received the final state. Returns how many actions were sent."""
    import random

    rng = random.Random(seed)
    done = [False] * len(players)
    sent = 0
    deadline = time.time() + timeout
    answered: list[int] = [-1] * len(players)
    retry_at: list[float | None] = [None] * len(players)
    # A state already taken from the inbox (by wait_for) may be awaiting an answer, whatever else is
    # still queued behind it (a presence or a seat message is no state to answer). The latest state
    # may also still be queued: its seq is then recorded as answered and the loop leaves it.
    for i, p in enumerate(players):
        latest = p.latest_state()
        if latest is not None and latest["legal"]:
            answered[i] = latest["seq"]
            p.send({"type": "act", "action": rng.choice(latest["legal"]), "seq": latest["seq"]})
            sent += 1
    moved = time.monotonic()
    while not all(done):
        if time.time() > deadline:
            raise TimeoutError(f"the game did not end in time; {_awaited(players, answered)}")
        if time.monotonic() - moved > STALL_SECONDS:
            raise TimeoutError(f"no message in {STALL_SECONDS:.0f} s; {_awaited(players, answered)}")
        progressed = False
        for i, p in enumerate(players):
            if done[i]:
                continue
            due = retry_at[i]
            if due is not None and time.monotonic() >= due:
                # A refused answer is sent again, if its state still awaits one (a newer state is
                # answered as it arrives).
                retry_at[i] = None
                latest = p.latest_state()
                if latest is not None and latest["legal"] and latest["seq"] == answered[i]:
                    p.send({"type": "act", "action": rng.choice(latest["legal"]), "seq": latest["seq"]})
            try:
                msg = p.inbox.get(timeout=0.02)
            except queue.Empty:
                continue
            if msg is None:
                raise ConnectionError(f"player {i} was disconnected")
            progressed = True
            moved = time.monotonic()
            if msg.get("type") == "error" and msg.get("code") == "rate_limited":
                # Five people on one address share its message budget (ServerConfig's
                # ws_address_rate_per_second): the refused answer changed nothing; back off, resend.
                retry_at[i] = time.monotonic() + RATE_LIMITED_BACKOFF
                continue
            if msg.get("type") != "state":
                continue
            if "winners" in msg and not msg["legal"]:
                done[i] = True
                continue
            if msg["legal"] and msg["seq"] > answered[i]:
                answered[i] = msg["seq"]
                p.send({"type": "act", "action": rng.choice(msg["legal"]), "seq": msg["seq"]})
                sent += 1
                if stop_after is not None and sent >= stop_after:
                    return sent
        if not progressed:
            time.sleep(0.005)
    return sent


def _awaited(players: list[Player], answered: list[int]) -> str:
    """What each player last saw, for a game that stopped moving: its latest state's seq, whom that
    state awaits, what the player answered last and the last message it received."""
    said = []
    for p, a in zip(players, answered, strict=True):
        latest = p.latest_state() or {}
        view = latest.get("view") or {}
        said.append(
            f"seat {p.seat}: state {latest.get('seq')} awaits {view.get('awaiting')!r}, legal "
            f"{len(latest.get('legal') or [])}, answered {a}, last message "
            f"{json.dumps(p.messages[-1])[:300] if p.messages else None}"
        )
    return "; ".join(said)


def replay_states(record: dict[str, Any]) -> dict[int, GameState]:
    """The archived game replayed: the true state at each seq (from the initial deal and the actions)."""
    game = games.get(record["game"])
    state = game.from_json(record["initial"])
    states: dict[int, GameState] = {}
    first_seq = record["actions"][0]["seq"] - 1 if record["actions"] else None
    if first_seq is not None:
        states[first_seq] = state.clone()
    for entry in record["actions"]:
        state.apply(entry["seat"], entry["action"])
        states[entry["seq"]] = state.clone()
    assert state.to_json() == game.from_json(record["final"]).to_json()
    return states


def check_no_leaks(record: dict[str, Any], received: list[tuple[int | None, list[dict[str, Any]]]]) -> int:
    """Every state message any connection received must carry exactly the game's view for that
    connection's seat at that seq (so never a card it may not see), and legal actions only for it.
    Returns the number of messages checked."""
    states = replay_states(record)
    checked = 0
    for seat, messages in received:
        for msg in messages:
            if msg.get("type") != "state" or msg["room"].get("game_id") != record["id"]:
                continue
            state = states.get(msg["seq"])
            assert state is not None, f"state message for unknown seq {msg['seq']}"
            expected = state.view(seat)
            view = dict(msg["view"])
            if state.is_over() and "winners" not in expected:
                view.pop("winners", None)
            assert view == json.loads(json.dumps(expected)), f"seat {seat} seq {msg['seq']}: view differs"
            legal = state.legal_actions(seat) if seat is not None else []
            assert msg["legal"] == json.loads(json.dumps(legal))
            checked += 1
    return checked


# ---- a tiny throwaway game for the server's own tests (never registered outside a test) ------------


class ToyState(GameState):
    """Each player holds two hidden cards (1–9). On a turn, the player plays one face up; the
    others may challenge (a response window); a challenger must then discard a card (a choice).
    When every hand is empty, the highest sum of played cards wins."""

    def __init__(self, hands: list[list[int]], seed: int) -> None:
        self.hands = hands
        self.played: list[list[int]] = [[] for _ in hands]
        self.turn = 0
        self.phase = "turn"
        self.awaited: list[int] = [0]
        self.challenger: int | None = None
        self.log: list[dict[str, Any]] = []
        self.seed = seed

    @property
    def num_players(self) -> int:
        return len(self.hands)

    def waiting_for(self) -> list[int]:
        return [] if self.is_over() else list(self.awaited)

    def legal_actions(self, seat: int) -> list[dict[str, Any]]:
        if seat not in self.waiting_for():
            return []
        if self.phase == "turn":
            return [{"type": "play", "card": c} for c in sorted(set(self.hands[seat]))]
        if self.phase == "response":
            return [{"type": "pass"}, {"type": "challenge"}]
        return [{"type": "discard", "card": c} for c in sorted(set(self.hands[seat]))]

    def apply(self, seat: int, action: Any) -> None:
        from conflictology.engine import IllegalAction

        if not isinstance(action, dict) or action not in self.legal_actions(seat):
            raise IllegalAction(f"illegal: {action!r}")
        kind = action["type"]
        if kind == "play":
            self.hands[seat].remove(action["card"])
            self.played[seat].append(action["card"])
            self.log.append({"event": "play", "seat": seat, "card": action["card"]})
            self.phase = "response"
            self.awaited = [s for s in range(self.num_players) if s != seat]
        elif kind == "pass":
            self.awaited.remove(seat)
            if not self.awaited:
                self._next_turn()
        elif kind == "challenge":
            self.log.append({"event": "challenge", "seat": seat})
            self.phase = "discard"
            self.awaited = [seat] if self.hands[seat] else []
            if not self.awaited:
                self._next_turn()
        else:
            self.hands[seat].remove(action["card"])
            self.log.append({"event": "discard", "seat": seat})
            self._next_turn()

    def _next_turn(self) -> None:
        n = self.num_players
        for step in range(1, n + 1):
            s = (self.turn + step) % n
            if self.hands[s]:
                self.turn, self.phase, self.awaited = s, "turn", [s]
                return
        self.awaited = []

    def clone(self) -> ToyState:
        return TOY.from_json(self.to_json())

    def is_over(self) -> bool:
        return not any(self.hands)

    def winners(self) -> list[int]:
        if not self.is_over():
            return []
        sums = [sum(p) for p in self.played]
        return [i for i, s in enumerate(sums) if s == max(sums)]

    def view(self, seat: int | None) -> dict[str, Any]:
        return {
            "game": "toy",
            "you": seat,
            "turn": self.turn,
            "phase": self.phase,
            "players": [
                {"hidden": list(h) if i == seat else len(h), "played": list(self.played[i])}
                for i, h in enumerate(self.hands)
            ],
            "log": [dict(e) for e in self.log],
        }

    def to_json(self) -> str:
        return json.dumps({k: v for k, v in self.__dict__.items()})

    def timeout_action(self, seat: int) -> dict[str, Any]:
        legal = self.legal_actions(seat)
        return {"type": "pass"} if self.phase == "response" else legal[0]

    def decision_kind(self, seat: int) -> str:
        return {"turn": "turn", "response": "response"}.get(self.phase, "choice")


class ToyGame(Game):
    name = "toy"
    title = "Toy"
    min_players = 2
    max_players = 4

    @property
    def action_table(self) -> Any:
        raise NotImplementedError

    def default_options(self) -> dict[str, Any]:
        return {"cards": 2}

    def new_game(
        self, players: int, seed: int | None = None, options: Any = None, deck: Any = None
    ) -> ToyState:
        from conflictology.engine import Rng, check_options

        self.check_players(players)
        opts = check_options("toy", options, self.default_options())
        if opts["cards"] not in (1, 2, 3):
            raise ValueError("cards must be 1, 2 or 3")
        rng = Rng(seed if seed is not None else Rng.fresh_seed())
        cards = [1 + rng.randrange(9) for _ in range(players * opts["cards"])]
        k = opts["cards"]
        return ToyState([cards[i * k : (i + 1) * k] for i in range(players)], seed or 0)

    def from_json(self, text: str) -> ToyState:
        data = json.loads(text)
        state = ToyState.__new__(ToyState)
        state.__dict__.update(data)
        return state

    def determinize(self, view: Any, rng: Any) -> ToyState:
        raise NotImplementedError


TOY = ToyGame()
ToyState.game = TOY


def register_toy(monkeypatch: Any) -> None:
    monkeypatch.setitem(games._PACKAGES, "toy", "toy")
    monkeypatch.setitem(games._loaded, "toy", TOY)
