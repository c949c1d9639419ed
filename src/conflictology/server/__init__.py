"""The multiplayer server: rooms, live play over WebSocket, persistence.

A flat package, one module per concept: ``config`` (settings of a server process), ``protocol``
(msgspec schemas of every message), ``security`` (tokens, Origin allow-list, limits), ``rooms`` (a room
and its lifecycle, pure and synchronous), ``backend`` (where live rooms are kept: the one small
interface), ``redis_backend`` (the same interface on Redis, for several processes: docs/scaling.md;
composed of ``redis_storage``, ``redis_saves``, ``redis_pubsub``, ``redis_presence``, ``redis_leases``,
``redis_outage``, ``redis_budget``, with every key in ``redis_keys`` and every script in
``redis_scripts``), ``store`` (SQLAlchemy snapshots and the archive), ``hub`` (connections, timers and
bots around the rooms), ``app`` (the Starlette application and its route table), ``routes`` (the HTTP
API by resource), ``transport`` (the WebSocket endpoint), ``middleware`` (what every request passes
first), ``refusals`` (how the server says no), ``connections`` and ``guarded_protocols`` (connections
below the application: caps, timeouts, eviction; ``open_files``, ``log_caps``) and ``cli`` (the ``serve``
command). Its clients (the network bot, the load test) are in :mod:`conflictology.clients`.

The server knows games only through the engine contract and bots only through ``conflictology.bots``.
"""
