"""A room and its lifecycle: lobby → playing → over (→ lobby again on a rematch).

Everything here is synchronous and pure apart from the clock passed in: each operation checks
everything first and raises :class:`RoomError` (carrying the HTTP status and an error code) before
it changes anything, so a refused request leaves the room exactly as it was. The hub wraps these
operations with saving, broadcasting, timers and bots.
"""

from __future__ import annotations

import importlib
import secrets
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import msgspec

from conflictology import bots, games
from conflictology.engine import Action, Game, GameState, IllegalAction
from conflictology.server import standings
from conflictology.server.protocol import RoomSettings
from conflictology.server.security import clean_name, distinct_name, hash_token, new_token, same_hash

# Room codes: short and unambiguous when read aloud or copied by hand (no 0/O, no 1/I). Six of 32
# characters make 2^30 codes: with 10,000 live rooms a guess finds one with probability 9.3e-6, and
# an address is allowed about 730 wrong guesses a day (server/app.py), under 1 % a day in all
# (docs/protocol.md, "Limits"). Rooms made with five-character codes before keep them.
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6


# The rule option naming the seat that plays first (Capitol): accepted up to max_players - 1 while
# the table fills, and checked against the seats taken at the start.
FIRST_PLAYER_OPTION = "first_player"


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalize_code(code: str) -> str:
    return code.strip().upper()


_CODE_CHARS = frozenset(CODE_ALPHABET)


def plausible_code(code: str) -> bool:
    """Whether ``code`` (normalized) could be a room's: 4 to 8 characters of the alphabet (earlier
    servers made 5; an unknown one is refused without a look in the rooms' store)."""
    return 4 <= len(code) <= 8 and _CODE_CHARS.issuperset(code)


def seat_level(room: Room, seat: int) -> str:
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


class RoomStatus(StrEnum):
    LOBBY = "lobby"
    PLAYING = "playing"
    OVER = "over"


class RoomError(Exception):
    """A refused request: the HTTP status, a stable error code and a message for people."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def check_options_safe(options: Any, where: str = "options") -> None:
    """Refuse option values that look like file paths (a Conspiranoicos ``deck_file`` must name a
    bundled deck): a remote player must never make the server read one of its files."""
    if isinstance(options, str):
        if "/" in options or "\\" in options or options.startswith((".", "~")) or "\x00" in options:
            raise RoomError(400, "bad_options", f"{where}: a path is not allowed here ({options!r})")
    elif isinstance(options, Mapping):
        for k, v in options.items():
            check_options_safe(v, f"{where}.{k}")
    elif isinstance(options, list):
        for i, v in enumerate(options):
            check_options_safe(v, f"{where}[{i}]")


def check_file_options(game_name: str, options: Mapping[str, Any]) -> None:
    """An option that names a file (``deck_file``…) may only name something bundled with the game
    (its package's ``bundled_decks()``): the engine would otherwise open any path, even a bare file
    name relative to the server's directory, on a remote player's say-so."""
    for key, value in options.items():
        if not (key.endswith("_file") or key.endswith("_path")) or value is None:
            continue
        allowed: list[str] = []
        package = games._PACKAGES.get(game_name)
        if package is not None:
            listing = getattr(importlib.import_module(package), "bundled_decks", None)
            if callable(listing):
                allowed = list(listing())
        if not isinstance(value, str) or value not in allowed:
            raise RoomError(
                400,
                "bad_options",
                f"option {key}: only a bundled name is accepted on a server "
                f"({', '.join(allowed) or 'none'}), got {value!r}",
            )


@dataclass
class Seat:
    id: str
    name: str
    token_hash: str | None = None  # None for a bot
    bot: bool = False
    level: str | None = None
    afk: bool = False  # a disconnected player past the grace period: a bot plays for them
    left: bool = False  # the player left (or was kicked) mid-game: a bot plays on
    mystery: bool = False  # a mystery bot: its level is shown only once the game is over

    @property
    def bot_controlled(self) -> bool:
        return self.bot or self.afk or self.left


@dataclass
class Room:
    code: str
    game_name: str
    options: dict[str, Any]
    settings: RoomSettings
    seats: list[Seat] = field(default_factory=list)
    host: str | None = None  # the host's seat id
    status: RoomStatus = RoomStatus.LOBBY
    created: float = field(default_factory=time.time)
    updated: float = field(default_factory=time.time)
    version: int = 0  # every change; a shared backend compares it before saving
    seq: int = 0  # every change of the game state; clients quote it to avoid stale actions
    game_id: str | None = None
    state: GameState | None = None
    initial_json: str | None = None
    actions: list[dict[str, Any]] = field(default_factory=list)
    started: float | None = None
    finished: float | None = None
    deadline: float | None = None
    deadline_kind: str | None = None
    # The awaited seats and their legal actions when the clock was set (see _update_deadline).
    decision: dict[int, str] = field(default_factory=dict)
    past_games: list[str] = field(default_factory=list)
    # A standing room's record of every game played in it (server/standings.py); None before the first.
    standings: dict[str, Any] | None = None
    # Every clock stopped (a player's hold or the host's pause; see stop_clocks), and the seats (ids)
    # that have held the clock in this game (once each).
    pause: dict[str, Any] | None = None
    holds: list[str] = field(default_factory=list)

    # ---- lookups ---------------------------------------------------------------------------------

    @property
    def game(self) -> Game:
        return games.get(self.game_name)

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

    def info(self, connected: set[int] | None = None) -> dict[str, Any]:
        """The public description of the room (GET /api/rooms/{code}); never a token."""
        connected = connected or set()
        seats = []
        for i, s in enumerate(self.seats):
            entry: dict[str, Any] = {
                "seat": i,
                "name": s.name,
                "bot": s.bot,
                "host": s.id == self.host,
                "connected": s.bot or i in connected,
            }
            if s.bot:
                hidden = s.mystery and self.status is not RoomStatus.OVER
                entry["level"] = MYSTERY if hidden else s.level
                if s.mystery:
                    entry["mystery"] = True
            if s.afk:
                entry["afk"] = True
            if s.left:
                entry["left"] = True
            seats.append(entry)
        game = self.game
        out: dict[str, Any] = {
            "code": self.code,
            "game": self.game_name,
            "title": game.title,
            "min_players": game.min_players,
            "max_players": game.max_players,
            "status": self.status.value,
            "options": self.options,
            "settings": msgspec.to_builtins(self.settings),
            "seats": seats,
            "join_url": f"/?room={self.code}",
            "game_id": self.game_id,
        }
        if self.status is RoomStatus.OVER and self.state is not None:
            out["winners"] = self.state.winners()
        return out

    # ---- lobby -----------------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        code: str,
        game_name: str,
        host_name: str,
        options: dict[str, Any] | None,
        settings: RoomSettings,
    ) -> tuple[Room, str]:
        try:
            game = games.get(game_name)
        except ValueError as exc:
            raise RoomError(400, "unknown_game", str(exc)) from None
        opts = dict(options or {})
        cls._check_options(game, opts, game.min_players)
        room = cls(code=code, game_name=game_name, options=opts, settings=settings)
        token = room._add_human(host_name)
        room.host = room.seats[0].id
        return room, token

    @staticmethod
    def _check_options(game: Game, options: dict[str, Any], players: int) -> None:
        check_options_safe(options)
        check_file_options(game.name, options)
        count = max(players, game.min_players)
        first = options.get(FIRST_PLAYER_OPTION)
        if isinstance(first, int) and not isinstance(first, bool) and first >= count:
            # The table may still fill up to max_players before the start, which checks it again
            # against the seats actually taken (409 there).
            count = min(first + 1, game.max_players)
        try:
            # The game is the judge of its own options; a throwaway deal checks them.
            game.new_game(players=count, seed=0, options=options)
        except ValueError as exc:
            raise RoomError(400, "bad_options", str(exc)) from None

    def _require_lobby(self) -> None:
        if self.status is not RoomStatus.LOBBY:
            raise RoomError(409, "not_in_lobby", f"the room is {self.status.value}, not in its lobby")

    def _require_room_for(self, count: int) -> None:
        if len(self.seats) + count > self.game.max_players:
            raise RoomError(409, "full", f"{self.game.title} seats at most {self.game.max_players} players")

    def _add_human(self, name: str) -> str:
        shown = clean_name(name)
        if not shown:
            raise RoomError(400, "bad_name", "a name needs at least one visible character")
        shown = distinct_name(shown, (s.name for s in self.seats))
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
                self.seats.append(Seat(id=uuid.uuid4().hex, name=name, bot=True, level=chosen, mystery=True))
                added.append(len(self.seats) - 1)
                continue
            name = distinct_name(f"Bot {n} ({level})", (s.name for s in self.seats))
            self.seats.append(Seat(id=uuid.uuid4().hex, name=name, bot=True, level=level))
            added.append(len(self.seats) - 1)
        return added

    def kick(self, seat: int) -> Seat:
        """The host removes a seat: in the lobby it is gone; in a game a bot plays it on; after the
        game it is marked left and gone at the rematch."""
        if not 0 <= seat < len(self.seats):
            raise RoomError(400, "bad_seat", f"no seat {seat} in this room")
        target = self.seats[seat]
        if target.id == self.host:
            raise RoomError(400, "bad_seat", "the host cannot kick themselves (leave instead)")
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

    def patch(
        self, options: dict[str, Any] | None, settings: RoomSettings | None, game_name: str | None = None
    ) -> None:
        self._require_lobby()
        if game_name is not None and game_name != self.game_name:
            # Another game at the same table (a standing room's evening goes on): its options start
            # from the defaults unless given, and every seat taken must fit it.
            try:
                game = games.get(game_name)
            except ValueError as exc:
                raise RoomError(400, "unknown_game", str(exc)) from None
            if len(self.seats) > game.max_players:
                seated = f"{game.title} seats at most {game.max_players}; {len(self.seats)} are seated"
                raise RoomError(409, "player_count", seated)
            for s in self.seats:
                if s.bot and not s.mystery and s.level and not bots.is_offered(s.level, game):
                    message = f"{s.name} does not play {game.title}: remove it first"
                    raise RoomError(409, "unknown_level", message)
            opts = dict(options or {})
            self._check_options(game, opts, len(self.seats))
            self.game_name = game_name
            self.options = opts
        elif options is not None:
            self._check_options(self.game, options, len(self.seats))
            self.options = dict(options)
        if settings is not None:
            self.settings = settings

    # ---- the game --------------------------------------------------------------------------------

    def start(self, now: float, seed: int | None = None) -> None:
        self._require_lobby()
        game = self.game
        n = len(self.seats)
        if not game.min_players <= n <= game.max_players:
            raise RoomError(
                409,
                "player_count",
                f"{game.title} needs {game.min_players}–{game.max_players} players, {n} seated",
            )
        first = self.options.get(FIRST_PLAYER_OPTION)
        if isinstance(first, int) and not isinstance(first, bool) and first >= n:
            raise RoomError(
                409,
                "first_player",
                f"first_player is seat {first} but only {n} players are seated (seats 0–{n - 1}): "
                "seat more players or change the option",
            )
        check_options_safe(self.options)
        check_file_options(game.name, self.options)
        try:
            state = game.new_game(players=n, seed=seed, options=self.options)
        except ValueError as exc:
            raise RoomError(400, "bad_options", str(exc)) from None
        for s in self.seats:
            if s.mystery:  # a new mystery each game
                s.level = secrets.choice(mystery_pool(game))
        self.state = state
        self.initial_json = state.to_json()
        self.actions = []
        self.game_id = uuid.uuid4().hex
        self.status = RoomStatus.PLAYING
        self.started = now
        self.finished = None
        self.seq += 1
        self.decision = {}
        self.deadline = None
        self.pause = None
        self.holds = []
        self._after_state_change(now)

    def _record(self, seat: int, action: Action, by: str) -> None:
        self.actions.append({"seq": self.seq, "seat": seat, "action": action, "by": by})

    def act(self, seat: int, action: Any, seq: int | None, now: float, by: str = "player") -> None:
        """Apply one action for ``seat``; refused (nothing changes) if stale, not awaited or illegal."""
        if self.status is not RoomStatus.PLAYING or self.state is None:
            raise RoomError(409, "not_playing", f"the room is {self.status.value}: no game is being played")
        if seq is not None and seq != self.seq:
            code = "stale" if seq < self.seq else "bad_seq"
            raise RoomError(409, code, f"this answers state {seq}, the current state is {self.seq}")
        if not isinstance(action, dict) or not isinstance(action.get("type"), str):
            raise RoomError(400, "bad_action", "an action is an object with a string 'type'")
        if seat not in self.state.waiting_for():
            raise RoomError(409, "not_your_turn", f"seat {seat} is not awaited now")
        # Apply on a copy: even an engine that raised something other than IllegalAction half-way
        # could not leave the room's state changed.
        trial = self.state.clone()
        try:
            trial.apply(seat, action)
        except IllegalAction as exc:
            raise RoomError(409, "illegal", str(exc)) from None
        except (TypeError, KeyError, ValueError, AttributeError, IndexError) as exc:
            raise RoomError(400, "bad_action", f"malformed action: {exc}") from None
        self.state = trial
        self.seq += 1
        self._record(seat, dict(action), by)
        self._after_state_change(now)

    def expire(self, now: float) -> bool:
        """The clock ran out (Capitol ruling 19): every awaited seat takes its timeout action, for
        as long as the same decision goes on. Returns whether anything was applied."""
        if self.status is not RoomStatus.PLAYING or self.state is None:
            return False
        if self.deadline is None or now < self.deadline:
            return False
        applied = False
        before = self._current_decision()
        for seat in sorted(before):
            if self.state.is_over() or seat not in self.state.waiting_for():
                break
            trial = self.state.clone()
            try:
                action = self.state.timeout_action(seat)
                trial.apply(seat, action)
            except Exception:
                # An engine whose timeout action misbehaves must not stall the table forever.
                action = self.state.legal_actions(seat)[0]
                trial = self.state.clone()
                trial.apply(seat, action)
            self.state = trial
            self.seq += 1
            self._record(seat, action, "timeout")
            applied = True
            if self.state.is_over() or not self._continues(before):
                break
            before = self._current_decision()
        self._after_state_change(now, force_new_clock=True)
        return applied

    def _current_decision(self) -> dict[int, str]:
        """What each awaited seat faces: its legal actions as canonical text (keys sorted). Taken on
        every move, so it is encoded with msgspec rather than json.dumps."""
        assert self.state is not None
        return {s: _decision_text(self.state.legal_actions(s)) for s in self.state.waiting_for()}

    def _continues(self, before: dict[int, str], now: dict[int, str] | None = None) -> bool:
        """The same decision goes on when some awaited seats dropped out (a pass in a response
        window, one of two simultaneous plays in) and the others face exactly what they faced."""
        now = self._current_decision() if now is None else now
        return bool(now) and set(now) < set(before) and all(before[s] == k for s, k in now.items())

    def _after_state_change(self, now: float, force_new_clock: bool = False) -> None:
        assert self.state is not None
        if self.state.is_over():
            self.status = RoomStatus.OVER
            self.finished = now
            self.deadline = None
            self.deadline_kind = None
            self.decision = {}
            if self.settings.standing:
                self._count_game(now)
            self.pause = None
            return
        now_deciding = self._current_decision()
        # While the clocks are stopped the running clock is kept as the seconds it has left.
        running = self.deadline is not None or (self.pause is not None and self.pause["left"] is not None)
        if not force_new_clock and running and self._continues(self.decision, now_deciding):
            self.decision = now_deciding
            return
        self.decision = now_deciding
        # Which clock (Capitol ruling 19): the game says what kind of decision each seat faces.
        kinds = [self.state.decision_kind(s) for s in self.decision]
        kind = max(kinds, key=lambda k: self._seconds(k)) if kinds else "choice"
        self.deadline_kind = kind
        seconds = self._seconds(kind) if self.settings.timers else None
        if self.pause is not None:
            # A decision reached while the clocks are stopped gets its whole clock when they start.
            self.pause["left"] = seconds
            self.deadline = None
        else:
            self.deadline = None if seconds is None else now + seconds

    # ---- table talk: every clock stopped (a player's hold, the host's pause) -------------------------

    def _require_playing(self) -> None:
        if self.status is not RoomStatus.PLAYING or self.state is None:
            raise RoomError(409, "not_playing", f"the room is {self.status.value}: no game is being played")

    def _stop_clocks(self, kind: str, seat: int, now: float, until: float | None) -> None:
        """Stop every clock: the decision clock is kept as the seconds it had left, and bots wait
        (the hub schedules no bot turn while ``pause`` is set). Players may still act."""
        left = None if self.deadline is None else max(0.0, self.deadline - now)
        self.pause = {"kind": kind, "seat": seat, "since": now, "until": until, "left": left}
        self.deadline = None

    def hold(self, seat: int, now: float) -> None:
        """A player holds the clock for table talk: once per game, while no clock is stopped."""
        self._require_playing()
        s = self.seats[seat]
        if s.left:
            raise RoomError(403, "no_seat", "you no longer hold a seat in this room")
        if s.id in self.holds:
            raise RoomError(409, "hold_used", "you have already held the clock in this game")
        if self.pause is not None:
            raise RoomError(409, "paused", "the clocks are already stopped")
        self.holds.append(s.id)
        self._stop_clocks("hold", seat, now, now + self.settings.hold_seconds)

    def host_pause(self, seat: int, now: float) -> None:
        """The host stops every clock until they resume. A hold running then becomes the host's
        pause (its clock keeps the seconds it had left; the holder's one hold is spent)."""
        self._require_playing()
        if self.pause is not None and self.pause["kind"] == "host":
            raise RoomError(409, "paused", "the game is already paused")
        if self.pause is not None:
            self.pause.update(kind="host", seat=seat, until=None)
            return
        self._stop_clocks("host", seat, now, None)

    def resume(self, now: float, hold_until: float | None = None) -> None:
        """Start the clocks again: the decision clock gets back the seconds it had left, so its
        deadline moves by exactly as long as the clocks were stopped. ``hold_until``: only end the
        hold that ends then (the hub's timer; a newer pause is left alone). A hold ends at its
        ``until`` even when its timer runs late (a restart), and sooner when the host resumes it."""
        self._require_playing()
        pause = self.pause
        if pause is None:
            raise RoomError(409, "not_paused", "the clocks are not stopped")
        if hold_until is not None and (pause["kind"] != "hold" or pause["until"] != hold_until):
            raise RoomError(409, "no_change", "this hold has already ended")
        end = now if pause["until"] is None else min(now, pause["until"])
        self.pause = None
        self.deadline = None if pause["left"] is None else end + pause["left"]

    def pause_info(self) -> dict[str, Any] | None:
        """What every connection is told of a stop: who, since and until when, and the seconds the
        decision clock will have when it starts again."""
        if self.pause is None:
            return None
        p = self.pause
        return {
            "kind": p["kind"],
            "seat": p["seat"],
            "since": p["since"],
            "until": p["until"],
            "left": p["left"],
            "timer": self.deadline_kind if p["left"] is not None else None,
        }

    # ---- the standing table ----------------------------------------------------------------------

    def _count_game(self, now: float) -> None:
        """Add the game that just ended to the standings: every person who played it, by name (bot
        seats are not players; a person a bot stood in for still played)."""
        assert self.state is not None and self.game_id is not None
        self.standings = standings.added(
            self.standings,
            now=now,
            game_id=self.game_id,
            game=self.game_name,
            seats=[("", None) if s.bot else (s.name, s.token_hash) for s in self.seats],
            winners=self.state.winners(),
            figures=self.game.figures(self.state),
        )

    def reset_standings(self, now: float) -> None:
        self.standings = standings.empty(now)

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
        self.standings = standings.with_key(self.standings, name, hash_token(new))
        return len(self.seats) - 1, new, name

    def _seconds(self, kind: str) -> float:
        s = self.settings
        return {"turn": s.turn_seconds, "response": s.response_seconds}.get(kind, s.choice_seconds)

    def rematch(self) -> None:
        """Back to the lobby with the same table (players who left are gone, bots stay)."""
        if self.status is not RoomStatus.OVER:
            raise RoomError(409, "not_over", "a rematch is offered once the game is over")
        if self.game_id:
            self.past_games.append(self.game_id)
        self.seats = [s for s in self.seats if not s.left]
        for s in self.seats:
            s.afk = False
        self.status = RoomStatus.LOBBY
        self.state = None
        self.initial_json = None
        self.actions = []
        self.game_id = None
        self.deadline = None
        self.deadline_kind = None
        self.decision = {}
        self.pause = None
        self.holds = []
        self.seq += 1

    # ---- the archive ----------------------------------------------------------------------------

    def archive_record(self) -> dict[str, Any]:
        """The finished game, whole: initial deal, every action, final state (ruling: a finished
        game's log may be published whole)."""
        assert self.state is not None and self.game_id is not None
        final_public = self.state.view(None)
        return {
            "id": self.game_id,
            "room": self.code,
            "game": self.game_name,
            # GET /api/games lists only public rooms' games: a private room's code is its only lock.
            "public": self.settings.public,
            "options": self.options,
            "players": [
                {"seat": i, "name": s.name, "bot": s.bot, "level": s.level} for i, s in enumerate(self.seats)
            ],
            "started": self.started,
            "finished": self.finished,
            "winners": self.state.winners(),
            "initial": self.initial_json,
            "actions": self.actions,
            "final": self.state.to_json(),
            "log": final_public.get("log", []),
            # The players' token hashes: a private room's finished games are replayed only for them
            # (never served: GET /api/games/{id} picks its fields).
            "keys": [s.token_hash for s in self.seats if s.token_hash is not None],
        }

    # ---- snapshots -------------------------------------------------------------------------------

    def copy(self) -> Room:
        """A working copy a shared backend changes before its version check: every container is
        new, and the game state is shared because room operations never change it in place
        (``act`` and ``expire`` apply to a clone and swap it in)."""
        # Attribute by attribute rather than dataclasses.replace, which runs __init__ with every
        # field: a shared backend copies on every move, and this is 4x faster.
        room = object.__new__(Room)
        room.__dict__.update(self.__dict__)
        room.options = dict(self.options)
        room.seats = [_copy_seat(s) for s in self.seats]
        room.actions = list(self.actions)
        room.decision = dict(self.decision)
        room.past_games = list(self.past_games)
        room.pause = None if self.pause is None else dict(self.pause)
        room.holds = list(self.holds)
        return room

    def snapshot(self) -> dict[str, Any]:
        # Containers are copied: a snapshot may be encoded on another thread while the room changes
        # (a move appended to the live log must not land in an older snapshot).
        return {
            "code": self.code,
            "game": self.game_name,
            "options": dict(self.options),
            "settings": msgspec.to_builtins(self.settings),
            "seats": [s.__dict__.copy() for s in self.seats],
            "host": self.host,
            "status": self.status.value,
            "created": self.created,
            "updated": self.updated,
            "version": self.version,
            "seq": self.seq,
            "game_id": self.game_id,
            "state": self.state.to_json() if self.state is not None else None,
            "initial": self.initial_json,
            "actions": list(self.actions),
            "started": self.started,
            "finished": self.finished,
            "deadline": self.deadline,
            "deadline_kind": self.deadline_kind,
            "decision": {str(k): v for k, v in self.decision.items()},
            "past_games": list(self.past_games),
            # Replaced, never changed in place (server/standings.py): shared safely with the writer.
            "standings": self.standings,
            "pause": None if self.pause is None else dict(self.pause),
            "holds": list(self.holds),
        }

    @classmethod
    def restore(cls, data: Mapping[str, Any]) -> Room:
        game = games.get(data["game"])
        room = cls(
            code=data["code"],
            game_name=data["game"],
            options=dict(data["options"]),
            settings=msgspec.convert(data["settings"], RoomSettings),
            seats=[Seat(**s) for s in data["seats"]],
            host=data["host"],
            status=RoomStatus(data["status"]),
            created=data["created"],
            updated=data["updated"],
            version=data["version"],
            seq=data["seq"],
            game_id=data["game_id"],
            state=game.from_json(data["state"]) if data["state"] is not None else None,
            initial_json=data["initial"],
            actions=list(data["actions"]),
            started=data["started"],
            finished=data["finished"],
            deadline=data["deadline"],
            deadline_kind=data["deadline_kind"],
            decision={int(k): v for k, v in data["decision"].items()},
            past_games=list(data["past_games"]),
            standings=data.get("standings"),
            # (absent from snapshots saved before clocks could be stopped)
            pause=dict(data["pause"]) if data.get("pause") else None,
            holds=list(data.get("holds", [])),
        )
        for seat in room.seats:
            if seat.bot and seat.level and not bots.is_offered(seat.level, game):
                # Saved before the server offered a closed list (a level such as
                # "ismcts:iterations=999999999"): the seat plays on at the default level, or a
                # restart would resume the bot that stopped every other.
                level = default_level(game)
                seat.name = seat.name.replace(f"({seat.level})", f"({level})")
                seat.level = level
        return room


def _copy_seat(seat: Seat) -> Seat:
    new = object.__new__(Seat)
    new.__dict__.update(seat.__dict__)
    return new


def _decision_text(legal: list[Action]) -> str:
    return _decision_encoder.encode({"legal": legal}).decode()  # action_key's text (non-ASCII unescaped)


_decision_encoder = msgspec.json.Encoder(order="sorted")
