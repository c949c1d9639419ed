"""The multiplayer server: rooms, live play over WebSocket, persistence.

A flat package, one module per concept: ``config`` (settings of a server process), ``protocol``
(msgspec schemas of every message), ``security`` (tokens, Origin allow-list, limits), ``rooms`` (a room
and its lifecycle, pure and synchronous), ``backend`` (where live rooms are kept: the one small
interface), ``redis_backend`` (the same interface on Redis, for several processes: docs/scaling.md),
``store`` (SQLAlchemy snapshots and the archive), ``hub`` (connections, timers and bots around the
rooms), ``app`` (the Starlette application) and ``cli`` (the ``serve`` command). Its clients (the
network bot, the load test) are in :mod:`conflictology.clients`.

The server knows games only through the engine contract and bots only through ``conflictology.bots``.
"""
