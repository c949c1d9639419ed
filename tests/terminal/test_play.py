"""The terminal player, driven as a person would: lines typed into its input stream.

The person sees only their own view: the table shows everyone else's cards face down; bad answers
are refused with a message and asked again; the game always ends (or the person leaves).
"""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from conflictology import games
from conflictology.cli import app
from conflictology.engine import Rng
from conflictology.games.capitol import data
from conflictology.terminal import TerminalGame, render
from conflictology.terminal.cli import parse_options

CAPITOL_ROLES = ("Banker", "Mafia", "Hacker", "Judge", "Reporter", "Police")


class Person(io.TextIOBase):
    """A player at the keyboard: answers prompts with a seeded mix of numbers and mistakes."""

    def __init__(self, seed: int, mistakes: float = 0.2) -> None:
        self.rng = Rng(seed)
        self.mistakes = mistakes
        self.lines = 0

    def readable(self) -> bool:
        return True

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        self.lines += 1
        if self.lines == 1:
            return "abc\n"  # everyone fumbles their first answer
        if self.rng.random() < self.mistakes:
            return self.rng.choice(["", "abc", "0", "-1", "999", "1.5", "t", "l", "h"]) + "\n"
        return f"{1 + self.rng.randrange(4)}\n"


def console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=120, color_system=None, force_terminal=False), out


def capitol_deck(human: list[str], others: list[str]) -> list[str]:
    """A full Capitol deck: the human's two cards, then the others', then the rest."""
    pool = [r.lower() for r in CAPITOL_ROLES for _ in range(3)]
    for card in human + others:
        pool.remove(card)
    return human + others + pool


@pytest.mark.parametrize(
    ("game", "players", "seed"), [("capitol", 2, 1), ("capitol", 4, 2), ("capitol", 6, 3)]
)
def test_a_whole_game_with_typing_mistakes_ends(game: str, players: int, seed: int) -> None:
    con, out = console()
    person = Person(seed)
    session = TerminalGame(
        games.get(game), players, ["random"] * (players - 1), human_seat=seed % players, seed=seed,
        console=con, stream=person,
    )
    winners = session.run()
    text = out.getvalue()
    assert winners == session.state.winners() and winners, "the game ended"
    assert "game over" in text
    assert re.search(r"Please type a number from 1 to \d+ \(you typed [^)]+\)", text)
    assert ("You win!" in text) == (winners == [session.human])


def test_capitol_end_shows_every_claim_with_the_bluffs_marked() -> None:
    con, out = console()
    session = TerminalGame(
        games.get("capitol"), 3, ["random", "random"], human_seat=0, seed=7, console=con,
        stream=Person(7, 0.0),
    )
    assert session.run()
    during, end = out.getvalue().split("game over", 1)
    assert "Claims and bluffs" not in during  # secret while the game goes on
    assert "Claims and bluffs" in end
    summary = session.state.view(0)["summary"]
    honest = sum(1 for c in summary["claims"] if c["honest"])
    assert sum(summary["bluffs"]) > 0 and honest > 0
    # One mark per claim (the title's legend has one of each).
    assert end.count("✗") - 1 == sum(summary["bluffs"]) and end.count("✓") - 1 == honest
    assert end.count("caught by") == sum(summary["caught"])


def test_bad_input_is_asked_again_and_changes_nothing() -> None:
    con, out = console()
    lines = io.StringIO("banker\n0\n12\n\n1\nq\n")
    session = TerminalGame(
        games.get("capitol"), 2, ["random"], seed=4, console=con, stream=lines,
        options={"first_player": 0},
    )
    before = session.state.to_json()
    assert session.step()  # reads four bad answers, then "1"
    text = out.getvalue()
    for typed in ("banker", "0", "12", "nothing"):
        assert f"(you typed {typed})" in text
    assert text.count("Your choice (1–") == 5
    assert session.state.to_json() != before
    log = session.view()["log"]
    assert any(e["type"] == "action" and e["seat"] == 0 and e["action"] == "income" for e in log)


def test_end_of_input_leaves_the_game() -> None:
    con, out = console()
    session = TerminalGame(
        games.get("capitol"), 3, ["random", "random"], seed=5, console=con, stream=io.StringIO(""),
        options={"first_player": 0},
    )
    assert session.run() is None
    assert "You left the game." in out.getvalue()
    assert not session.state.is_over()


def test_the_table_hides_every_other_hand() -> None:
    """Seat 0 holds two Bankers; the others hold Judges and Polices, which must never be shown."""
    deck = capitol_deck(["banker", "banker"], ["judge", "judge", "police", "police"])
    con, out = console()
    session = TerminalGame(
        games.get("capitol"), 3, ["random", "random"], seed=6, console=con,
        stream=io.StringIO("1\n"), options={"first_player": 0}, deck=deck,
    )
    session.step()
    first_prompt = out.getvalue().split("Your choice")[0]
    table = first_prompt.split("Your turn")[0]
    assert "Banker, Banker" in table
    assert "Judge" not in table and "Police" not in table
    assert table.count("▮ ▮ (2)") == 2


def test_a_ten_seat_table_shows_every_seat() -> None:
    """A big table (issue 29): a row per seat, the other nine hands face down."""
    con, out = console()
    session = TerminalGame(
        games.get("capitol"), 10, ["random"] * 9, seed=6, console=con,
        stream=io.StringIO("1\n"), options={"first_player": 0},
    )
    session.step()
    table = out.getvalue().split("Your choice")[0]
    assert "Treasury $65M" in table
    assert table.count("▮ ▮ (2)") == 9


def test_only_the_persons_view_reaches_the_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every renderer the session prints through receives the person's own view, never another's."""
    seen: list[Any] = []

    def spy(name: str) -> None:
        original = getattr(render, name)

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            view = args[1] if name == "label_action" else args[0]
            seen.append(view.get("you"))
            return original(*args, **kwargs)

        monkeypatch.setattr(render, name, wrapped)

    for name in ("render_table", "label_action", "describe_pending"):
        spy(name)
    con, _ = console()
    session = TerminalGame(
        games.get("capitol"), 4, ["random"] * 3, human_seat=2, seed=7, console=con, stream=Person(7, 0.0)
    )
    assert session.run()
    assert seen and set(seen) == {2}


def test_cli_play_reads_standard_input() -> None:
    runner = CliRunner()
    result = runner.invoke(
        app,
        ["play", "capitol", "--players", "3", "--bots", "random", "--seed", "9", "--delay", "0"],
        input="x\n" + "1\n" * 400,
    )
    assert result.exit_code == 0, result.output
    assert "game over" in result.output
    assert "Please type a number from 1 to" in result.output
    assert "Seat 1: bot random" in result.output


def test_cli_play_refuses_bad_arguments() -> None:
    runner = CliRunner()
    bad = [
        ["play", "nosuchgame"],
        ["play", "capitol", "--players", "11"],
        ["play", "capitol", "--bots", "nosuchbot"],
        ["play", "capitol", "--players", "3", "--bots", "random,random,random"],
        ["play", "capitol", "--seat", "5"],
        ["play", "capitol", "--option", "nope=1"],
    ]
    for args in bad:
        result = runner.invoke(app, args, input="")
        assert result.exit_code == 2, (args, result.output)
        assert "error:" in result.output


def test_cli_play_leaving_exits_with_one() -> None:
    result = CliRunner().invoke(app, ["play", "capitol", "--delay", "0", "--seed", "1"], input="q\n")
    assert result.exit_code == 1
    assert "You left the game." in result.output


def test_parse_options_reads_json_values() -> None:
    assert parse_options(["forced_scandal=false", "steal_blockers=[\"mafia\"]", "first_player=1"]) == {
        "forced_scandal": False, "steal_blockers": ["mafia"], "first_player": 1,
    }
    with pytest.raises(ValueError, match="key=value"):
        parse_options(["oops"])


def test_every_capitol_action_has_words() -> None:
    """No legal action falls back to the generic label, whatever the phase."""
    g = games.get("capitol")
    rng = Rng(3)
    kinds: set[str] = set()
    for seed in range(60):
        state = g.new_game(3, seed=seed, options={"steal_blockers": ["mafia", "police", "reporter"]})
        while not state.is_over():
            seat = state.waiting_for()[0]
            view = state.view(seat)
            for action in state.legal_actions(seat):
                text = render.label_action(action, view, ["Seat 0", "Seat 1", "Seat 2"])
                assert text != render.generic_label(action, view, ["Seat 0", "Seat 1", "Seat 2"]), action
                kinds.add(action["type"])
            assert render.describe_pending(view, ["Seat 0", "Seat 1", "Seat 2"]) or view["pending"] is None
            state.apply(seat, rng.choice(state.legal_actions(seat)))
    assert {"keep", "show", "let_keep", "return", "block", "lose"} <= kinds


def test_the_target_of_a_hacker_is_offered_challenge_block_and_pass_in_one_prompt() -> None:
    from capitol_helpers import B, H, J, M, P, R, table

    s = table([[H, M], [B, J], [R, P]])
    s.money[0] += 1
    s.treasury -= 1
    s._lseat = -1
    s.apply(0, {"type": "hacker", "target": 1})
    names = ["Ana", "Ben", "Cat"]
    view = s.view(1)
    text = render.describe_pending(view, names)
    assert "Challenge the claim, block it, or let it pass?" in text and "against you" in text
    labels = [render.label_action(a, view, names) for a in s.legal_actions(1)]
    assert labels[2].startswith("Block, claiming Judge (kept secret until everyone answered)")
    assert render.describe_pending(s.view(2), names).endswith("Challenge the claim, or let it pass?")


def _ids_in(view: Any) -> set[str]:
    """Every string anywhere in a view except its card catalogue (which lists the whole deck)."""
    out: set[str] = set()

    def walk(x: Any) -> None:
        if isinstance(x, str):
            out.add(x)
        elif isinstance(x, dict):
            for k, v in x.items():
                if k != "cards":
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
        if isinstance(x, dict) and isinstance(x.get("text"), str):
            out.update(re.findall(r"[A-Z][A-Z0-9]+", x["text"]))

    walk(view)
    return out


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_conspiranoicos_never_prints_a_card_the_person_has_not_seen(seed: int) -> None:
    """A card id (or a special card's name) appears on screen only once the person's view holds it."""
    con, out = console()
    session = TerminalGame(
        games.get("conspiranoicos"), 2, ["random"], human_seat=seed % 2, seed=seed, console=con,
        stream=Person(seed, 0.1),
    )
    catalogue = session.view()["cards"]
    names = {c["id"]: [c["id"], *([c["name"]] if c.get("special") else [])] for c in catalogue}
    known = _ids_in(session.view())
    shown = 0
    steps = 0
    while session.step():
        steps += 1
        known |= _ids_in(session.view())
        text = out.getvalue()[shown:]
        shown = len(out.getvalue())
        for cid, words in names.items():
            if cid in known:
                continue
            for word in words:
                assert not re.search(rf"\b{re.escape(word)}\b", text), f"{word} shown before it was seen"
    assert session.state.is_over() and steps > 20
    session.show_end()
    assert "Scoring" in out.getvalue()


def test_conspiranoicos_whole_game_through_the_cli() -> None:
    result = CliRunner().invoke(
        app, ["play", "conspiranoicos", "--bots", "random", "--seed", "2", "--delay", "0", "--seat", "1"],
        input="1\n" * 200,
    )
    assert result.exit_code == 0, result.output
    assert "game over" in result.output and "total" in result.output


def test_every_conspiranoicos_action_has_words() -> None:
    g = games.get("conspiranoicos")
    rng = Rng(5)
    kinds: set[str] = set()
    names = ["Seat 0", "Seat 1"]
    for seed in range(40):
        state = g.new_game(2, seed=seed)
        while not state.is_over():
            seat = state.waiting_for()[0]
            view = state.view(seat)
            assert render.describe_pending(view, names)
            for action in state.legal_actions(seat):
                assert render.label_action(action, view, names) != render.generic_label(action, view, names)
                kinds.add(action["type"])
            state.apply(seat, rng.choice(state.legal_actions(seat)))
    assert {"play", "send", "keep", "place", "pass"} <= kinds


def test_default_bot_is_one_the_game_can_seat() -> None:
    from conflictology import bots
    from conflictology.terminal.cli import default_bot

    for name in games.names():
        spec, note = default_bot(name)
        bots.check(spec, games.get(name))  # raises if the game cannot seat it
        assert (note is None) == (spec in (bots.DEFAULT_LEVEL, "heuristic"))


def test_a_ten_seat_table_is_legible_at_40_columns() -> None:
    """A phone's terminal or a split pane (issue 29): at 40 columns each of the ten seats' names,
    money, cards (face down, one's own roles, the lost ones) and the turn marker are there whole (no
    word cut to "…", no line past the width), through a whole game to its claims at the end; the
    long names a table may hold wrap inside their column."""
    names = [f"Seat {s}" for s in range(10)]
    names[3] = "Seat 3 (you)"
    names[1] = "Benedetta Carolina de la Fuente y Montes"
    state = games.get("capitol").new_game(10, seed=11)
    rng = Rng(11)
    shown = 0
    while True:
        view = state.view(3)
        out = io.StringIO()
        narrow = Console(file=out, width=40, color_system=None, force_terminal=False)
        narrow.print(render.render_table(view, names))
        text = out.getvalue()
        lines = text.splitlines()
        assert "…" not in text, text
        assert all(len(line) <= 40 for line in lines), text
        words = set(text.split())
        for p in view["players"]:
            seat = p["seat"]
            assert set(names[seat].split()) <= words, (seat, text)
            assert f"${p['money']}M" in words, (seat, text)
            for card in p["revealed"] + (p["hidden"] if isinstance(p["hidden"], list) else []):
                assert data.ROLE_NAME[card] in text, (seat, card, text)
        if isinstance(view.get("turn"), int) and not view.get("winners"):
            marked = [line for line in lines if line.lstrip().startswith("▶")]
            assert len(marked) == 1 and names[view["turn"]].split()[0] in marked[0], text
            assert f"turn: {names[view['turn']]}" in " ".join(text.split())
        if "▮ ▮ (2)" in text:
            shown += 1
        if state.is_over():
            assert "Claims and bluffs" in text and "caught" in text
            break
        seat = state.waiting_for()[0]
        state.apply(seat, rng.choice(state.legal_actions(seat)))
    assert shown > 0
