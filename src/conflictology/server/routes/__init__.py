"""The HTTP API, one module per resource: ``rooms`` (a room's lifecycle: make, join, seat bots,
start, host's controls), ``standings`` (a room's standing table), ``games`` (finished and live games,
their replays), ``health`` (liveness, readiness, metrics, what a client needs to build its forms) and
``pages`` (the web client's pages). ``common`` reads what every route reads: the body, the bearer
token, the room code. The WebSocket is ``server.transport``; the table of routes is in ``server.app``."""
