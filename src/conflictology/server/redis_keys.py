"""The names of everything the Redis backend keeps, under one prefix (``cfy:`` by default).

A running deployment's processes read each other's keys and channels: these names are a contract,
kept byte for byte across upgrades (docs/scaling.md lists them).
"""

from __future__ import annotations


class RedisKeys:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    # ---- per room ------------------------------------------------------------------------------

    def room(self, code: str) -> str:
        """The room's hash: ``v`` (version), ``data`` (snapshot without its log), ``initial``."""
        return f"{self.prefix}room:{code}"

    def log(self, code: str) -> str:
        """The room's action log: a list, one JSON record per move."""
        return f"{self.prefix}log:{code}"

    def owner(self, code: str) -> str:
        return f"{self.prefix}owner:{code}"

    def presence(self, code: str) -> str:
        """A field ``<process>|<seat id>`` per seat connected through that process."""
        return f"{self.prefix}presence:{code}"

    def followers(self, code: str) -> str:
        """The processes that follow the room (subscribed to its channel)."""
        return f"{self.prefix}followers:{code}"

    def channel(self, code: str) -> str:
        return f"{self.prefix}ch:{code}"

    def code_of(self, channel: str) -> str:
        """The room a channel named by :meth:`channel` is for."""
        return channel[len(self.prefix) + 3 :]

    # ---- per process ---------------------------------------------------------------------------

    def alive(self, process: str) -> str:
        """Set with a short expiry, refreshed by the process's heartbeat: its lease."""
        return f"{self.prefix}alive:{process}"

    def procrooms(self, process: str) -> str:
        """The rooms where the process has (or had) presence fields."""
        return f"{self.prefix}procrooms:{process}"

    def follows(self, process: str) -> str:
        """The rooms the process follows."""
        return f"{self.prefix}follows:{process}"

    def reap(self, process: str) -> str:
        """Who reaps a dead process (one of the live ones, not all of them at once)."""
        return f"{self.prefix}reap:{process}"

    # ---- the whole deployment ------------------------------------------------------------------

    @property
    def rooms(self) -> str:
        """Every room's code."""
        return f"{self.prefix}rooms"

    @property
    def procs(self) -> str:
        """Every process that has registered (alive or not yet reaped)."""
        return f"{self.prefix}procs"

    @property
    def listed(self) -> str:
        """The rooms a listing shows, by creation time (a hint, checked against each room)."""
        return f"{self.prefix}listed"

    @property
    def games(self) -> str:
        """Each current game's room (game id → code; a hint likewise)."""
        return f"{self.prefix}games"

    @property
    def archive_records(self) -> str:
        """Finished games waiting for the database (game id → record; redis_archive)."""
        return f"{self.prefix}archive"

    @property
    def archive_queue(self) -> str:
        """The same games by the time they were queued (the oldest is written first)."""
        return f"{self.prefix}archive:queue"

    @property
    def control(self) -> str:
        # Always subscribed, so the subscription connection is set up (and acknowledged) at start
        # even before the first room.
        return f"{self.prefix}ctl"

    def budget(self, name: str) -> str:
        """The prefix of a shared per-address budget's buckets."""
        return f"{self.prefix}budget:{name}:"
