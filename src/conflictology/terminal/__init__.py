"""Play in the terminal: ``conflictology play GAME`` — one person against bots, with Rich.

See docs/terminal.md.
"""

from __future__ import annotations

from conflictology.terminal.session import Quit, TerminalGame

__all__ = ["Quit", "TerminalGame"]
