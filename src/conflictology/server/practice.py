"""Learn to play: the practice room (docs/web.md, "The coach").

A practice room is private, unwatched and untimed, and its game is the same every time: the deal
comes from a fixed seed and each bot decision from a seed made of the state's number and the seat,
so a player's choices alone decide how it goes (and, where both seats play at once, a
Conspiranoicos round's cards, whether the bot's card was in first: its dice and what it sees
change once the player's is in). The seeds were chosen (scripts/practice_seeds.py) so that every
lesson of the coach arises in a game played the way the tests play it. The rules are the engine's
own: only the deal and the bots' dice are fixed.
"""

from __future__ import annotations

import msgspec

from conflictology.server.protocol import RoomSettings

# The deal of each game's practice room (scripts/practice_seeds.py found them).
DEAL_SEEDS: dict[str, int] = {"capitol": 8, "conspiranoicos": 3}


def practice_settings(settings: RoomSettings) -> RoomSettings:
    """What a practice room is, whatever else was asked: nobody finds it, watches it or times it."""
    return msgspec.structs.replace(
        settings, practice=True, public=False, spectators=False, standing=False, timers=False
    )


def deal_seed(game_name: str) -> int | None:
    return DEAL_SEEDS.get(game_name)


def bot_seed(seq: int, seat: int) -> int:
    """The same state asks the same seat the same question: the same answer (not a secret: a
    practice game has nothing to win)."""
    return seq * 16 + seat
