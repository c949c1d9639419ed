"""The multiplayer server: rooms, live play over WebSocket, persistence, the network bot.

A flat package, one module per concept: ``config`` (settings of a server process), ``protocol``
(msgspec schemas of every message), ``security`` (tokens, Origin allow-list, limits), ``rooms`` (a room
and its lifecycle, pure and synchronous), ``backend`` (where live rooms are kept: the one small
interface a Redis backend can replace), ``store`` (SQLAlchemy snapshots and the archive), ``hub``
(connections, timers and bots around the rooms), ``app`` (the Starlette application), ``netbot`` (a
bot that plays over the network) and ``cli`` (the ``serve`` and ``bot`` commands).

The server knows games only through the engine contract and bots only through ``conflictology.bots``.
"""
