"""Clients of the multiplayer server that speak only its public protocol (HTTP and the WebSocket).

``netbot`` (a bot that plays over the network, and an example for bot writers), ``loadtest`` (many
rooms of network bots, measured, and its command), ``loadworker`` (one client process of a load test:
its rooms and seats) and ``cli`` (the ``bot`` command).
They stand outside ``conflictology.server``: the server never imports them, so what they measure is
what any outside client would see.
"""
