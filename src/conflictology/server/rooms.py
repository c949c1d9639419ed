"""A room: lobby → playing → over (→ lobby again on a rematch).

Everything here is synchronous and pure apart from the clock passed in: each operation checks
everything first and raises :class:`RoomError` (carrying the HTTP status and an error code) before
it changes anything, so a refused request leaves the room exactly as it was. The hub wraps these
operations with saving, broadcasting, timers and bots.

:class:`Room` is made of pieces: its seats (``seats.py``), its clocks (``clocks.py``) and what is
saved of it (``snapshots.py``); here are its lobby, its game and its standings. The names other
modules import from here (``RoomError``, ``RoomStatus``, ``Seat``, ``seat_level``…) stay importable
from here.
"""

from __future__ import annotations

import secrets
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from conflictology import bots, games
from conflictology.engine import Action, Game, GameState, IllegalAction
from conflictology.server import practice, standings
from conflictology.server.clocks import Clocks
from conflictology.server.lifecycle import RoomError, RoomStatus, Seat
from conflictology.server.protocol import RoomSettings
from conflictology.server.seats import MYSTERY, Seats, default_level, mystery_pool, seat_level
from conflictology.server.snapshots import Snapshots

__all__ = [
    "CODE_ALPHABET",
    "CODE_LENGTH",
    "MYSTERY",
    "Room",
    "RoomError",
    "RoomStatus",
    "Seat",
    "check_file_options",
    "check_options_safe",
    "default_level",
    "mystery_pool",
    "new_code",
    "normalize_code",
    "plausible_code",
    "seat_level",
]

# Room codes: short and unambiguous when read aloud or copied by hand (no 0/O, no 1/I). Six of 32
# characters make 2^30 codes: with 10,000 live rooms a guess finds one with probability 9.3e-6, and
# an address is allowed about 730 wrong guesses a day (server/app.py), under 1 % a day in all
# (docs/protocol.md, "Limits"). Rooms made with five-character codes before keep them.
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6


# The rule option naming the seat that plays first (Capitol): accepted up to max_players - 1 while
# the table fills, and checked against the seats taken at the start.
FIRST_PLAYER_OPTION = "first_player"


# A room's earlier games named in its snapshot (for their replays), the newest this many.
MAX_PAST_GAMES = 50


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalize_code(code: str) -> str:
    return code.strip().upper()


_CODE_CHARS = frozenset(CODE_ALPHABET)


def plausible_code(code: str) -> bool:
    """Whether ``code`` (normalized) could be a room's: 4 to 8 characters of the alphabet (earlier
    servers made 5; an unknown one is refused without a look in the rooms' store)."""
    return 4 <= len(code) <= 8 and _CODE_CHARS.issuperset(code)


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
    (its ``Game.file_options()``): the engine would otherwise open any path, even a bare file
    name relative to the server's directory, on a remote player's say-so."""
    file_options = games.get(game_name).file_options()
    for key, value in options.items():
        if not (key in file_options or key.endswith("_file") or key.endswith("_path")) or value is None:
            continue
        allowed = file_options.get(key, [])
        if not isinstance(value, str) or value not in allowed:
            raise RoomError(
                400,
                "bad_options",
                f"option {key}: only a bundled name is accepted on a server "
                f"({', '.join(allowed) or 'none'}), got {value!r}",
            )


@dataclass
class Room(Seats, Clocks, Snapshots):
    """A room: its seats (seats.py), its clocks (clocks.py), what is saved of it (snapshots.py), and
    here its lobby, its game and its standings."""

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
    # The awaited seats and their legal actions when the clock was set (see Clocks._set_clock).
    decision: dict[int, str] = field(default_factory=dict)
    # The seq since which that decision has gone on (an answer quoting any seq since then is still
    # an answer to it: Clocks.answers_current).
    decision_since: int = 0
    past_games: list[str] = field(default_factory=list)
    # A standing room's record of every game played in it (server/standings.py); None before the first.
    standings: dict[str, Any] | None = None
    # Every clock stopped (a player's hold or the host's pause; see stop_clocks), and the seats (ids)
    # that have held the clock in this game (once each).
    pause: dict[str, Any] | None = None
    holds: list[str] = field(default_factory=list)
    # The (seq, seat) of each timeout action in ``actions``, kept as they are recorded: every message
    # names the last ones (master.timeouts), and finding them in the actions took a pass over the
    # whole game at every move. Derived: not saved (``restore`` finds them again).
    timed_out: list[tuple[int, int]] = field(default_factory=list, compare=False, repr=False)
    # The game state's JSON as last saved, and the length of ``actions`` it was taken at: a snapshot
    # carries it until STATE_EVERY more actions (snapshots.py); None: taken at the next snapshot.
    # The state changes only by start, act, expire and rematch, which keep it true; anything else
    # that replaces the state must set it to None.
    saved_state: tuple[int, str] | None = field(default=None, compare=False, repr=False)
    # Whose share of the bot workers the room's bots take (server/botshares.py): an opaque label of
    # the address that made it; None for a room saved before rooms kept one. Never shown.
    creator: str | None = None

    # ---- what anyone may read -------------------------------------------------------------------

    def info(self, connected: set[int] | None = None) -> dict[str, Any]:
        """The public description of the room (GET /api/rooms/{code}); never a token."""
        connected = connected or set()
        playing = self.status is RoomStatus.PLAYING
        seats = []
        for i, s in enumerate(self.seats):
            entry: dict[str, Any] = {
                "seat": i,
                "id": s.id,  # stable while the seat lasts (numbers shift); a kick names it
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
                if s.number is not None:
                    entry["bot_number"] = s.number
            if s.afk:
                entry["afk"] = True
            elif s.away_until is not None and not s.left and i not in connected and playing:
                entry["away_until"] = s.away_until  # a dropped player's grace: a bot stands in then
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
        creator: str | None = None,
    ) -> tuple[Room, str]:
        try:
            game = games.get(game_name)
        except ValueError as exc:
            raise RoomError(400, "unknown_game", str(exc)) from None
        opts = dict(options or {})
        cls._check_options(game, opts, game.min_players)
        room = cls(code=code, game_name=game_name, options=opts, settings=settings, creator=creator)
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

    def patch(
        self,
        options: dict[str, Any] | None,
        settings: RoomSettings | None,
        game_name: str | None = None,
        option_changes: dict[str, Any] | None = None,
    ) -> None:
        self._require_lobby()
        if option_changes is not None:
            if options is not None:
                raise RoomError(400, "bad_options", "give options (all of them) or option_changes, not both")
            options = {**(self.options if game_name in (None, self.game_name) else {}), **option_changes}
            options = {key: value for key, value in options.items() if value is not None}
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
        if seed is None and self.settings.practice:
            seed = practice.deal_seed(self.game_name)
        try:
            state = game.new_game(players=n, seed=seed, options=self.options)
        except ValueError as exc:
            raise RoomError(400, "bad_options", str(exc)) from None
        for s in self.seats:
            if s.mystery:  # a new mystery each game
                s.level = secrets.choice(mystery_pool(game))
            s.away_until = None  # a grace of the last game, if any, is over
        self.state = state
        self.initial_json = state.to_json()
        self.actions = []
        self.timed_out = []
        self.saved_state = (0, self.initial_json)
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
        if by == "timeout":
            self.timed_out.append((self.seq, seat))

    def act(self, seat: int, action: Any, seq: int | None, now: float, by: str = "player") -> None:
        """Apply one action for ``seat``; refused (nothing changes) if stale, not awaited or illegal."""
        if self.status is not RoomStatus.PLAYING or self.state is None:
            raise RoomError(409, "not_playing", f"the room is {self.status.value}: no game is being played")
        if seq is not None and seq != self.seq and not self.answers_current(seat, seq):
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
        self._set_clock(now, force_new_clock)

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

    # ---- the next game ---------------------------------------------------------------------------

    def rematch(self) -> None:
        """Back to the lobby with the same table (players who left are gone, bots stay)."""
        if self.status is not RoomStatus.OVER:
            raise RoomError(409, "not_over", "a rematch is offered once the game is over")
        if self.game_id:
            # The newest only: the archive keeps every game; the snapshot is written at every change.
            self.past_games = [*self.past_games, self.game_id][-MAX_PAST_GAMES:]
        self.seats = [s for s in self.seats if not s.left]
        for s in self.seats:
            s.afk = False
        self.status = RoomStatus.LOBBY
        self.state = None
        self.initial_json = None
        self.actions = []
        self.timed_out = []
        self.saved_state = None
        self.game_id = None
        self.deadline = None
        self.deadline_kind = None
        self.decision = {}
        self.pause = None
        self.holds = []
        self.seq += 1

    # ---- a snapshot read back (snapshots.py writes them) ---------------------------------------

    @classmethod
    def restore(cls, data: Mapping[str, Any]) -> Room:
        game = games.get(data["game"])
        actions = list(data["actions"])
        state, saved = None, None
        if data["state"] is not None:
            state, saved = _replayed(game, data["state"], data.get("state_at"), actions)
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
            state=state,
            initial_json=data["initial"],
            actions=actions,
            timed_out=[(a["seq"], a["seat"]) for a in actions if a["by"] == "timeout"],
            saved_state=saved,
            started=data["started"],
            finished=data["finished"],
            deadline=data["deadline"],
            deadline_kind=data["deadline_kind"],
            decision={int(k): v for k, v in data["decision"].items()},
            # (absent from snapshots saved before answers to a going decision were taken: none is)
            decision_since=data.get("decision_since", data["seq"]),
            past_games=list(data["past_games"])[-MAX_PAST_GAMES:],
            standings=data.get("standings"),
            # (absent from snapshots saved before clocks could be stopped)
            pause=dict(data["pause"]) if data.get("pause") else None,
            holds=list(data.get("holds", [])),
            creator=data.get("creator"),
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


def _replayed(
    game: Game, state_json: str, at: int | None, actions: list[dict[str, Any]]
) -> tuple[GameState, tuple[int, str]]:
    """A saved game state brought up to date: the state as saved, then the actions recorded after
    it (``at``: how many had been recorded then; absent from snapshots that saved the state at every
    change), applied as they were. The engine is deterministic (its random generator is in the
    state), so this is the state that was shown."""
    if at is None:
        at = len(actions)
    if type(at) is not int or not 0 <= at <= len(actions):
        raise ValueError(f"a saved state taken after action {at!r} of {len(actions)}")
    state = game.from_json(state_json)
    for record in actions[at:]:
        state.apply(record["seat"], record["action"])
    return state, (at, state_json)

