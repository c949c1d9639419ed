"""A game in the terminal: one person against bots, one decision at a time.

The loop asks the first awaited seat (as ``bots.play_game`` does). A bot seat decides from its own
view; the person's seat is shown its own view only (``state.view(human)``): the table, the new log
entries, what is being decided and the numbered legal choices. A bad answer is refused with a message
saying what was expected, and asked again; nothing changes until a legal choice is made.

Input is read line by line from a text stream (standard input by default), so tests and scripts can
drive a game exactly as a person types it.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.rule import Rule

from conflictology import bots
from conflictology.engine import Action, Game, GameState, View
from conflictology.terminal import render

HELP = (
    "Type the number of your choice and press Enter. Other commands: "
    "[bold]t[/bold] shows the table again, [bold]l[/bold] the whole log, [bold]q[/bold] leaves the game."
)


class Quit(Exception):
    """The person left the game (typed q, or the input ended)."""


class TerminalGame:
    """One game between a person (``human_seat``) and bots (``bot_specs``, one per other seat)."""

    def __init__(
        self,
        game: Game,
        players: int,
        bot_specs: Sequence[str],
        human_seat: int = 0,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
        deck: Sequence[str] | None = None,
        console: Console | None = None,
        stream: TextIO | None = None,
        bot_delay: float = 0.0,
    ) -> None:
        game.check_players(players)
        if not 0 <= human_seat < players:
            raise ValueError(f"your seat must be between 0 and {players - 1}, got {human_seat}")
        if len(bot_specs) != players - 1:
            raise ValueError(f"need one bot per other seat: {players - 1} bots, got {len(bot_specs)}")
        for spec in bot_specs:
            bots.check(spec, game)
        self.game = game
        self.human = human_seat
        self.state: GameState = game.new_game(players, seed=seed, options=options, deck=deck)
        self.console = console or Console()
        self.stream = stream if stream is not None else sys.stdin
        self.bot_delay = bot_delay
        specs = iter(bot_specs)
        self.bots: dict[int, bots.Bot] = {}
        self.names: list[str] = []
        for seat in range(players):
            if seat == human_seat:
                self.names.append(f"Seat {seat} (you)")
                continue
            spec = next(specs)
            # Bot seeds follow from the game seed, so a seeded game replays identically.
            bot_seed = None if seed is None else seed * 1_000_003 + seat
            self.bots[seat] = bots.make(spec, game, seat, seed=bot_seed)
            self.names.append(f"Seat {seat}")
        self._log_shown = 0
        self.decisions = 0
        # The engines' log texts name seats ("Seat 2 …"); the person's own seat is marked as theirs.
        self._you = re.compile(rf"\bSeat {human_seat}\b")

    # -- the human's window on the game -----------------------------------------------------------
    def view(self) -> View:
        """The person's view: the only thing this class ever shows."""
        return self.state.view(self.human)

    def show_table(self) -> None:
        self.console.print(render.render_table(self.view(), self.names))

    def show_new_log(self) -> None:
        log = self.view().get("log") or []
        if len(log) < self._log_shown:  # a log that was trimmed: start again from its end
            self._log_shown = len(log)
        for entry in log[self._log_shown :]:
            line = self._you.sub(f"Seat {self.human} (you)", render.log_line(entry, self.names))
            self.console.print(f"  [dim]•[/dim] {escape(line)}")
        self._log_shown = len(log)

    def show_whole_log(self) -> None:
        log = self.view().get("log") or []
        self.console.print(Panel(render.render_log(log, self.names), title="log"))

    # -- playing ----------------------------------------------------------------------------------
    def run(self) -> list[int] | None:
        """Play to the end; the winners, or None if the person left."""
        self.console.print(Rule(f"{self.game.title}: {len(self.names)} players"))
        self.console.print(f"You are [bold]seat {self.human}[/bold]. " + HELP)
        for seat, bot in self.bots.items():
            self.console.print(f"  Seat {seat}: bot [bold]{escape(bot.name)}[/bold]")
        self.show_new_log()
        try:
            while self.step():
                pass
        except (Quit, KeyboardInterrupt):  # q, the end of the input, or Ctrl-C
            self.console.print("\n[yellow]You left the game.[/yellow]")
            return None
        self.show_end()
        return self.state.winners()

    def step(self) -> bool:
        """One decision (a bot's or the person's); False once the game is over."""
        waiting = self.state.waiting_for()
        if not waiting:
            return False
        seat = waiting[0]
        if seat == self.human:
            action = self.ask(self.state.legal_actions(seat))
        else:
            if self.bot_delay > 0:
                time.sleep(self.bot_delay)
            action = self.bots[seat].act(self.state.view(seat), self.state.legal_actions(seat))
        self.state.apply(seat, action)
        self.decisions += 1
        self.show_new_log()
        return True

    def ask(self, legal: list[Action]) -> Action:
        """Show the table and the numbered legal choices; read until a valid number arrives."""
        view = self.view()
        self.console.print()
        self.show_table()
        self.show_new_log()
        pending = render.describe_pending(view, self.names)
        if pending:
            self.console.print(f"[bold]{escape(pending)}[/bold]")
        self.print_choices(legal, view)
        while True:
            answer = self.read(f"Your choice (1–{len(legal)}): ")
            if answer in ("q", "quit", "exit"):
                raise Quit
            if answer in ("t", "table"):
                self.show_table()
                self.print_choices(legal, view)
                continue
            if answer in ("l", "log"):
                self.show_whole_log()
                continue
            if answer in ("h", "help", "?"):
                self.console.print(HELP)
                continue
            try:
                number = int(answer)
            except ValueError:
                number = 0
            if not 1 <= number <= len(legal):
                shown = answer if answer else "nothing"
                self.console.print(
                    f"[red]Please type a number from 1 to {len(legal)}[/red] (you typed {escape(shown)}); "
                    "h for help."
                )
                continue
            return legal[number - 1]

    def print_choices(self, legal: list[Action], view: View) -> None:
        for i, action in enumerate(legal, 1):
            label = render.label_action(action, view, self.names)
            self.console.print(f"  [bold cyan]{i:>2}[/bold cyan]  {escape(label)}")

    def read(self, prompt: str) -> str:
        self.console.print(prompt, end="")
        line = self.stream.readline()
        if not line:  # end of input: the person is gone
            self.console.print()
            raise Quit
        if not getattr(self.stream, "isatty", lambda: False)():
            self.console.print(line.rstrip("\n"), highlight=False, markup=False)  # echo scripted input
        return line.strip().lower()

    def show_end(self) -> None:
        view = self.view()
        self.console.print()
        self.console.print(Rule("game over"))
        self.console.print(render.render_table(view, self.names))
        winners = self.state.winners()
        if self.human in winners and len(winners) == 1:
            self.console.print("[bold green]You win![/bold green]")
        elif self.human in winners:
            others = ", ".join(self.names[w] for w in winners if w != self.human)
            self.console.print(f"[bold green]A shared victory[/bold green] with {escape(others)}.")
        else:
            who = " and ".join(self.names[w] for w in winners)
            verb = "wins" if len(winners) == 1 else "share the victory"
            self.console.print(f"[bold]{escape(who)}[/bold] {verb}. Better luck next time.")

