"""A room's clocks: the decision clock (Capitol ruling 19: a turn, a response window, any other
choice), kept running while the same decision goes on, and every clock stopped for a player's hold
(table talk, once per game) or the host's pause (bounded too), resumed with what it had left.

Deadlines are wall-clock epoch seconds (clients show them); ``now`` is always passed in.
"""

from __future__ import annotations

from typing import Any

import msgspec

from conflictology.engine import Action
from conflictology.server.lifecycle import RoomError, RoomFields


class Clocks(RoomFields):
    """The clocks' part of a room (``rooms.Room`` is made of it)."""

    def _seconds(self, kind: str) -> float:
        s = self.settings
        return {"turn": s.turn_seconds, "response": s.response_seconds}.get(kind, s.choice_seconds)

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

    def answers_current(self, seat: int, seq: int) -> bool:
        """Whether an action quoting the older state ``seq`` still answers what ``seat`` faces now:
        the same decision has gone on since (others in its response window passed meanwhile; the
        other player's card went down in a simultaneous play), so the seat has faced exactly these
        choices all along, and it has not acted since. Such an answer means what its player meant,
        and refusing it as stale would only make them press again."""
        if not self.decision_since <= seq < self.seq or seat not in self.decision:
            return False
        for record in reversed(self.actions):
            if record["seq"] <= seq:  # (a record's seq is the state its action made)
                return True
            if record["seat"] == seat:
                return False
        return True

    def _set_clock(self, now: float, force_new_clock: bool = False) -> None:
        """After a move that did not end the game: the clock goes on if the same decision does
        (some seats of a response window passed), else the new decision gets its whole clock."""
        assert self.state is not None
        now_deciding = self._current_decision()
        # While the clocks are stopped the running clock is kept as the seconds it has left.
        running = self.deadline is not None or (self.pause is not None and self.pause["left"] is not None)
        goes_on = not force_new_clock and self._continues(self.decision, now_deciding)
        if not goes_on:
            self.decision_since = self.seq
        if goes_on and running:
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
        """The host stops every clock until they resume, or for the room's ``pause_seconds`` at most
        (a host who walks away does not stop the table for good). A hold running then becomes the
        host's pause (its clock keeps the seconds it had left; the holder's one hold is spent)."""
        self._require_playing()
        if self.pause is not None and self.pause["kind"] == "host":
            raise RoomError(409, "paused", "the game is already paused")
        until = now + self.settings.pause_seconds
        if self.pause is not None:
            self.pause.update(kind="host", seat=seat, until=until)
            return
        self._stop_clocks("host", seat, now, until)

    def require_resumer(self, seat: int, host_here: bool) -> None:
        """Who may start the clocks again: the host; or, while the host is away (no socket open, or
        no host at all), any seated player, of the host's pause only (a hold ends by itself)."""
        if self.seats[seat].id == self.host:
            return
        if self.seats[seat].left:
            raise RoomError(403, "no_seat", "you no longer hold a seat in this room")
        if host_here:
            raise RoomError(403, "not_host", "only the host may resume while they are here")
        if self.pause is None or self.pause["kind"] != "host":
            raise RoomError(403, "not_host", "a player's hold ends by itself; only the host ends it early")

    def resume(self, now: float, hold_until: float | None = None) -> None:
        """Start the clocks again: the decision clock gets back the seconds it had left, so its
        deadline moves by exactly as long as the clocks were stopped. ``hold_until``: only end the
        hold that ends then (the hub's timer; a newer pause is left alone). A hold ends at its
        ``until`` even when its timer runs late (a restart), and sooner when the host resumes it.
        The host's pause ends the same way at its ``until`` (the room's ``pause_seconds``)."""
        self._require_playing()
        pause = self.pause
        if pause is None:
            raise RoomError(409, "not_paused", "the clocks are not stopped")
        if hold_until is not None and pause["until"] != hold_until:
            raise RoomError(409, "no_change", "this stop has already ended")
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


def _decision_text(legal: list[Action]) -> str:
    return _decision_encoder.encode({"legal": legal}).decode()  # action_key's text (non-ASCII unescaped)


_decision_encoder = msgspec.json.Encoder(order="sorted")
