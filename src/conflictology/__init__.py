"""Conflictology: an online table for games of bluffing and deduction.

>>> from conflictology import games, IllegalAction
>>> games.names()
['capitol', 'conspiranoicos']
"""

# First: the compiled rules, when they are built and fresh, are found before their source (native.py).
from conflictology import native  # noqa: F401

# isort: split
from conflictology import games
from conflictology.engine import IllegalAction

__all__ = ["IllegalAction", "__version__", "games"]
__version__ = "0.1.0"
