"""A finished game's replay, step by step, and its readable text record.

Pure functions over an archived game record (``GET /api/games/{id}``: ``game``, ``initial``,
``actions``, ``players``…): the initial state is rebuilt with ``game.from_json`` and every action
applied in order, exactly as the server played it, so each step is the engine's own state. What a
step shows comes from the game (``Game.open_view``: every card face up, Capitol's claims marked);
nothing here knows a game's rules. Only finished games are ever replayed: the server never calls
this for a game still being played.
"""

from __future__ import annotations

import re
import time
from typing import Any

from conflictology import games

# Parts of an open view that do not change from step to step (sent once, not per step).
_ONCE = ("cards", "options", "deck", "game")


def build(record: dict[str, Any]) -> dict[str, Any]:
    """The replay of a finished game: ``steps[0]`` is the deal, ``steps[k]`` the state after the
    k-th action. Each step has the action (``seat``, ``action``, ``by``, ``seq``; none for the deal),
    ``log`` (how many entries of the final ``log`` had been written by then: the log only grows) and
    ``view`` (the game's open view, without its log, its claims and the parts in ``static``). The log
    and (Capitol) the claims are sent once, at the top: a replay grows with its game's length, not
    with its square."""
    game = games.get(record["game"])
    state = game.from_json(record["initial"])
    steps: list[dict[str, Any]] = []
    static: dict[str, Any] = {}

    def step(entry: dict[str, Any] | None) -> None:
        view, logged = game.replay_step(state)
        view.pop("claims", None)
        for key in _ONCE:
            if key in view:
                static[key] = view.pop(key)
        steps.append(
            {
                "step": len(steps),
                "seq": entry["seq"] if entry else None,
                "seat": entry["seat"] if entry else None,
                "action": entry["action"] if entry else None,
                "by": entry.get("by") if entry else None,
                "log": logged,
                "view": view,
            }
        )

    step(None)
    for entry in record["actions"]:
        state.apply(entry["seat"], entry["action"])
        step(entry)
    whole = game.open_view(state)
    players = record["players"]
    figures = game.figures(state) if state.is_over() else [{} for _ in players]
    return {
        "id": record["id"],
        "room": record["room"],
        "game": record["game"],
        "title": game.title,
        "players": players,
        "started": record.get("started"),
        "finished": record.get("finished"),
        "winners": state.winners(),
        "figures": figures,
        "static": static,
        "log": whole.get("log", []),
        "claims": whole.get("claims", []),
        "steps": steps,
    }


_SEAT = re.compile(r"\bSeat (\d+)\b")


def _named(text: str, names: list[str]) -> str:
    def name(m: re.Match[str]) -> str:
        i = int(m.group(1))
        return names[i] if 0 <= i < len(names) else m.group(0)

    return _SEAT.sub(name, text)


def _when(epoch: Any) -> str:
    if not isinstance(epoch, int | float):
        return "?"
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch))


def text_record(replay: dict[str, Any]) -> str:
    """The game as a plain text record a person reads: who played, every event of the log in order
    with seats named (Capitol claims marked TRUE or BLUFF, challenges WON or LOST), the result."""
    names = [str(p["name"]) + (" (bot)" if p.get("bot") else "") for p in replay["players"]]
    plain = [str(p["name"]) for p in replay["players"]]
    lines = [
        f"{replay['title']} — game {replay['id']}",
        f"Room {replay['room']}, from {_when(replay['started'])} to {_when(replay['finished'])}",
        "Players: " + ", ".join(f"{i}. {n}" for i, n in enumerate(names)),
        "",
    ]
    last = replay["steps"][-1]["view"] if replay["steps"] else {}
    notes: dict[int, list[str]] = {}
    for claim in replay.get("claims", []):
        notes.setdefault(claim["at"], []).append("TRUE" if claim["honest"] else "BLUFF")
        if claim["challenged"]:
            won = "WON" if claim["won"] else "LOST"
            notes.setdefault(claim["challenge_at"], []).append(f"challenge {won}")
    for i, entry in enumerate(replay["log"]):
        text = _named(str(entry.get("text", entry.get("type", ""))), plain)
        private = entry.get("private")
        if isinstance(private, int) and 0 <= private < len(plain):
            text = f"({plain[private]} only) {text}"
        marks = notes.get(i)
        lines.append(f"{i + 1:4d}. {text}" + (f"  [{', '.join(marks)}]" if marks else ""))
    lines.append("")
    winners = replay["winners"]
    lines.append("Winner" + ("s" if len(winners) > 1 else "") + ": " + ", ".join(plain[w] for w in winners))
    for i, figures in enumerate(replay["figures"]):
        if figures:
            shown = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in figures.items())
            lines.append(f"  {plain[i]}: {shown}")
    detail = last.get("score_detail")
    if isinstance(detail, dict):
        lines.append("")
        lines.append("Score:")
        for c in detail.get("criteria", []):
            pts = c.get("points", [])
            shown = ", ".join(f"{plain[s]} {pts[s]}" for s in range(min(len(pts), len(plain))))
            lines.append(f"  {c.get('title', c.get('criterion'))}: {shown}")
        totals = detail.get("totals", [])
        seats = range(min(len(totals), len(plain)))
        lines.append("  Total: " + ", ".join(f"{plain[s]} {totals[s]}" for s in seats))
    return "\n".join(lines) + "\n"
