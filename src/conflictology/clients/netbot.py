"""A bot that joins a room over the network, exactly as a person's client would.

It speaks only the public protocol (HTTP to join, the WebSocket to play), so it doubles as an
example for bot writers and as a load generator.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import websockets

from conflictology import bots, games

# How long a refused answer waits before it is sent again (the server's message rates are per socket
# and per address: docs/protocol.md, "Limits").
RATE_LIMITED_PAUSE = 0.5


@dataclass
class BotResult:
    seat: int
    winners: list[int]
    decisions: int
    errors: int


def _ws_url(server: str, code: str, token: str) -> str:
    base = server.rstrip("/")
    if base.startswith("https://"):
        base = "wss://" + base[8:]
    elif base.startswith("http://"):
        base = "ws://" + base[7:]
    # v=2: each state message carries only the log entries this socket lacks (docs/protocol.md).
    return f"{base}/ws/{quote(code)}?token={quote(token)}&v=2"


class Answer:
    """Which states a seat answers. While an answer is on its way, a state that still awaits the
    seat in the decision that answer answered (its ``decision_since`` is no later than the state
    answered: another player passed in the window meanwhile) needs no other: the server takes the
    answer in flight (docs/protocol.md, ``act``), and a second one would be refused as stale. An
    error other than a rate limit clears the answer in flight: the newest state is answered then, if
    it is newer than the one answered."""

    def __init__(self) -> None:
        self.seq = -1  # the state answered last
        self.in_flight = False

    def wanted(self, seq: int, legal: list[Any], decision_since: int | None) -> bool:
        """Whether the state ``seq`` offering ``legal`` is to be answered (``decision_since`` None: a
        server that does not send it, whose every newer state is answered)."""
        if self.in_flight and legal and decision_since is not None and self.seq >= decision_since:
            return False
        self.in_flight = False
        return bool(legal) and seq > self.seq

    def sent(self, seq: int) -> None:
        self.seq, self.in_flight = seq, True

    def refused(self) -> None:
        self.in_flight = False


class LogJoin:
    """A socket's game log, joined from the ``log_from`` of each state message (protocol v2): the
    view's ``log`` holds the entries from ``log_from`` on, the earlier ones are those held."""

    def __init__(self) -> None:
        self.log: list[dict[str, Any]] = []

    def join(self, msg: dict[str, Any]) -> dict[str, Any] | None:
        """``msg`` with its view's whole log, or None for a gap (entries never received: ask for a
        ``sync``, whose answer is whole). A message without ``log_from`` is whole already."""
        view = msg["view"]
        start = msg.get("log_from", 0)
        if start > len(self.log):
            return None
        self.log = self.log[:start] + view["log"]
        return {**msg, "view": {**view, "log": self.log}}


async def run_bot(
    server: str,
    code: str,
    level: str | None = None,
    name: str | None = None,
    token: str | None = None,
    seed: int | None = None,
    games_to_play: int = 1,
) -> BotResult:
    """Join ``code`` (or resume with ``token``), play until ``games_to_play`` games have ended."""
    level = level or bots.DEFAULT_LEVEL
    code = code.strip().upper()
    async with httpx.AsyncClient(base_url=server.rstrip("/"), timeout=30) as http:
        info = (await http.get(f"/api/rooms/{code}")).raise_for_status().json()
        game = games.get(info["game"])
        # A name, level or spec with parameters ("ismcts:iterations=300"), checked for this game
        # before taking a seat; raises ValueError with the bots package's message.
        bots.check(level, game)
        if token is None:
            r = await http.post(f"/api/rooms/{code}/join", json={"name": name or f"netbot ({level})"})
            if r.status_code != 201:
                raise RuntimeError(f"could not join room {code}: {r.status_code} {r.text}")
            token = r.json()["token"]
    bot: bots.Bot | None = None
    seat = -1
    decisions = errors = 0
    finished = 0
    winners: list[int] = []
    logs = LogJoin()
    last_act: str | None = None
    answer = Answer()
    latest: dict[str, Any] | None = None  # the newest state, joined

    async def act(ws: Any, msg: dict[str, Any]) -> None:
        nonlocal last_act, decisions
        assert bot is not None  # made from the first state message
        action = await asyncio.to_thread(bot.act, msg["view"], msg["legal"])
        last_act = json.dumps({"type": "act", "action": action, "seq": msg["seq"]})
        answer.sent(msg["seq"])
        await ws.send(last_act)
        decisions += 1

    async with websockets.connect(_ws_url(server, code, token), max_size=2**22) as ws:
        async for raw in ws:
            msg: dict[str, Any] = json.loads(raw)
            kind = msg.get("type")
            if kind == "error":
                errors += 1
                if msg.get("code") == "rate_limited" and last_act is not None:
                    # The refused answer changed nothing: send it again after a pause (if the state
                    # moved on meanwhile, the server says "stale" and the next state is answered).
                    await asyncio.sleep(RATE_LIMITED_PAUSE)
                    await ws.send(last_act)
                    continue
                answer.refused()
                if latest is not None and answer.wanted(
                    latest["seq"], latest["legal"], latest.get("decision_since")
                ):
                    await act(ws, latest)
                continue
            if kind == "left":
                break
            if kind != "state":
                continue
            joined = logs.join(msg)
            if joined is None:
                await ws.send(json.dumps({"type": "sync"}))
                continue
            msg = latest = joined
            view = msg["view"]
            if bot is None or view.get("you") != seat:
                seat = view["you"]
                bot = bots.make(level, game, seat, seed)
            if "winners" in msg and not msg["legal"]:
                winners = list(msg["winners"])
                finished += 1
                if finished >= games_to_play:
                    break
                continue
            if answer.wanted(msg["seq"], msg["legal"], msg.get("decision_since")):
                await act(ws, msg)
    return BotResult(seat=seat, winners=winners, decisions=decisions, errors=errors)
