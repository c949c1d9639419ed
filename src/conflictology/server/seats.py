"""A room's seats: who sits where (players with hashed tokens, bots with their level), who hosts,
and how seats are taken, given up, kicked, taken back and claimed on another device.

Every operation checks first and raises :class:`RoomError` before it changes anything.
"""

from __future__ import annotations

import secrets
import uuid

from conflictology import bots
from conflictology.engine import Game
from conflictology.server import standings
from conflictology.server.lifecycle import RoomError, RoomFields, RoomStatus, Seat
from conflictology.server.security import clean_name, distinct_name, hash_token, new_token, same_hash


def seat_level(room: RoomFields, seat: int) -> str:
    """The level that plays ``seat`` of ``room`` now: a bot seat's own, or the default level for a
    player who is away or left (and for a bot seat whose level is not offered, see ``restore``)."""
    s = room.seats[seat]
    game = room.game
    if s.bot and s.level and bots.is_offered(s.level, game):
        return s.level
    return default_level(game)


def default_level(game: Game) -> str:
    """The level seated when the host names none, and the stand-in for absent players: the bots
    package's default when it can play this game, else the random bot (which plays every game)."""
    try:
        bots.check(bots.DEFAULT_LEVEL, game)
    except ValueError:
        return "random"
    return bots.DEFAULT_LEVEL


# A bot whose personality the table learns only at the end of the game (drawn anew at each start).
MYSTERY = "mystery"


def mystery_pool(game: Game) -> list[str]:
    """What a mystery bot may be: the game's named personalities (Capitol's), else its levels."""
    offered = bots.offered(game)
    pool = [name for name in offered if name.startswith("heuristic-")]
    return pool or [lv for lv in ("easy", "normal", "hard") if lv in offered] or [default_level(game)]


def copy_seat(seat: Seat) -> Seat:
    new = object.__new__(Seat)
    new.__dict__.update(seat.__dict__)
    return new


class Seats(RoomFields):
    """The seats' part of a room (``rooms.Room`` is made of it)."""

    def seat_index(self, seat_id: str) -> int | None:
        for i, s in enumerate(self.seats):
            if s.id == seat_id:
                return i
        return None

    def seat_of_token(self, token: str | None) -> int | None:
        if not token:
            return None
        h = hash_token(token)
        found = None
        for i, s in enumerate(self.seats):
            if s.token_hash is not None and same_hash(s.token_hash, h):
                found = i
        return found

    def host_index(self) -> int | None:
        return None if self.host is None else self.seat_index(self.host)

    def require_host(self, token: str | None) -> int:
        if not token:
            raise RoomError(401, "no_token", "this needs the host's token (Authorization: Bearer …)")
        seat = self.seat_of_token(token)
        if seat is None:
            raise RoomError(401, "bad_token", "unknown token for this room")
        if self.seats[seat].id != self.host:
            raise RoomError(403, "not_host", "only the host may do this")
        return seat

    def require_seat(self, token: str | None) -> int:
        if not token:
            raise RoomError(401, "no_token", "this needs your seat's token (Authorization: Bearer …)")
        seat = self.seat_of_token(token)
        if seat is None:
            raise RoomError(401, "bad_token", "unknown token for this room")
        return seat

    def _require_room_for(self, count: int) -> None:
        if len(self.seats) + count > self.game.max_players:
            raise RoomError(409, "full", f"{self.game.title} seats at most {self.game.max_players} players")

    def _add_human(self, name: str) -> str:
        shown = clean_name(name)
        if not shown:
            raise RoomError(400, "bad_name", "a name needs at least one visible character")
        taken = [s.name for s in self.seats]
        if self.settings.standing:
            # A name of the standing table is its holder's (who claims it back with a token): a
            # newcomer under it is someone else until they prove otherwise, and is named apart.
            taken += standings.known_names(self.standings)
        shown = distinct_name(shown, taken)
        token = new_token()
        self.seats.append(Seat(id=uuid.uuid4().hex, name=shown, token_hash=hash_token(token)))
        return token

    def join(self, name: str) -> tuple[int, str]:
        self._require_lobby()
        self._require_room_for(1)
        token = self._add_human(name)
        return len(self.seats) - 1, token

    def add_bots(self, count: int, level: str | None) -> list[int]:
        self._require_lobby()
        game = self.game
        level = level or default_level(game)
        mystery = level == MYSTERY
        if not mystery and not bots.is_offered(level, game):
            # A closed list: a spec with parameters ("ismcts:seconds=1e9") would let anyone set
            # what a bot costs the server (the library and the command line still take them).
            raise RoomError(
                400,
                "unknown_level",
                f"unknown bot level {level!r} for {game.title}; offered: {', '.join(bots.offered(game))}",
            )
        self._require_room_for(count)
        added = []
        for _ in range(count):
            n = sum(1 for s in self.seats if s.bot) + 1
            if mystery:
                name = distinct_name(f"Mystery bot {n}", (s.name for s in self.seats))
                chosen = secrets.choice(mystery_pool(game))
                self.seats.append(
                    Seat(id=uuid.uuid4().hex, name=name, bot=True, level=chosen, mystery=True, number=n)
                )
                added.append(len(self.seats) - 1)
                continue
            # The name is a plain fallback: its level is the seat's `level`, never an id in the name
            # ("Bot 2 (heuristic-bluffer)" read as English jargon at a Spanish table).
            name = distinct_name(f"Bot {n}", (s.name for s in self.seats))
            self.seats.append(Seat(id=uuid.uuid4().hex, name=name, bot=True, level=level, number=n))
            added.append(len(self.seats) - 1)
        return added

    def kicked_seat(self, seat_id: str | None, seat: int | None) -> int:
        """The seat a kick names: by its stable id; a number only together with the id of the seat
        it still holds (a number alone is refused: since the host saw it, a seat before it may have
        left and the number now names the next one)."""
        if seat_id is None:
            message = "name the seat by its id (seat_id, from the room's seats): seat numbers shift"
            raise RoomError(400, "seat_id_needed", message)
        index = self.seat_index(seat_id)
        if index is None:
            raise RoomError(409, "seat_moved", "no seat with this id in this room (it has left)")
        if seat is not None and seat != index:
            message = f"seat {seat} is no longer that seat (it is now seat {index}): look again"
            raise RoomError(409, "seat_moved", message)
        return index

    def kick(self, seat: int) -> Seat:
        """The host removes a seat: in the lobby it is gone; in a game a bot plays it on; after the
        game it is marked left and gone at the rematch."""
        if not 0 <= seat < len(self.seats):
            raise RoomError(400, "bad_seat", f"no seat {seat} in this room")
        target = self.seats[seat]
        if target.id == self.host:
            raise RoomError(400, "bad_seat", "the host cannot kick themselves (leave instead)")
        if target.token_hash is not None and self.standings is not None:
            # No device of theirs claims a seat here again (``claim``); their games still count.
            self.standings = standings.without_holder(self.standings, target.token_hash)
        if self._holds_game():
            if self.status is RoomStatus.PLAYING and target.bot:
                raise RoomError(409, "bad_seat", "a bot already plays this seat")
            if target.left and target.token_hash is not None:
                # A player who left mid-game keeps a way back (rejoin) until the host kicks them.
                target.token_hash = None
                return target
            if target.left:
                raise RoomError(409, "bad_seat", "this seat has already left")
            target.left = True
            target.token_hash = None
        else:
            del self.seats[seat]
        return target

    def _holds_game(self) -> bool:
        """Seats index the game state while it is playing and while a finished one is still shown
        (its views and ``winners`` are by seat): a seat leaving then is marked, not removed, until
        the rematch rebuilds the lobby."""
        return self.status in (RoomStatus.PLAYING, RoomStatus.OVER)

    def leave(self, seat: int) -> None:
        target = self.seats[seat]
        if self.status is RoomStatus.PLAYING:
            # A bot plays on, and the token still names the seat: the same browser may take it back
            # while this game lasts (rejoin). A kick clears the token; the rematch drops the seat.
            target.left = True
        elif self._holds_game():
            target.left = True
            target.token_hash = None
        else:
            del self.seats[seat]
        if target.id == self.host:
            # Host role passes to the next human still seated, in seat order.
            self.host = next((s.id for s in self.seats if not s.bot and not s.left), None)

    def rejoin(self, token: str | None) -> int:
        """A player who left this game takes their seat back from the bot (their own token, while
        the game is being played); returns the seat."""
        seat = self.require_seat(token)
        if self.status is not RoomStatus.PLAYING:
            message = f"the room is {self.status.value}: a seat is taken back only mid-game"
            raise RoomError(409, "not_playing", message)
        target = self.seats[seat]
        if not target.left:
            raise RoomError(409, "not_left", "this seat is still yours: there is nothing to take back")
        target.left = False
        target.afk = False
        if self.host is None:
            self.host = target.id
        return seat

    def claim(self, token: str) -> tuple[int, str, str]:
        """A player on a new device takes their name back with the token of a seat they played a
        game of this room with: the seat itself if it is still here (``token`` is returned), else a
        new seat under exactly that name (lobby only; the new token counts as theirs from now on)."""
        key = hash_token(token)
        seat = self.seat_of_token(token)
        if seat is not None:
            return seat, token, self.seats[seat].name
        name = standings.claimed_name(self.standings, key)
        if name is None:
            raise RoomError(403, "bad_claim", "no game of this room's standings was played with that token")
        self._require_lobby()
        if any(standings.name_key(s.name) == standings.name_key(name) for s in self.seats):
            raise RoomError(409, "name_taken", f"{name} is already seated at this table")
        self._require_room_for(1)
        new = new_token()
        self.seats.append(Seat(id=uuid.uuid4().hex, name=name, token_hash=hash_token(new)))
        assert self.standings is not None  # a name was found in it
        self.standings = standings.with_key(self.standings, key, hash_token(new))
        return len(self.seats) - 1, new, name
