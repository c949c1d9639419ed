"""Clients of the multiplayer server that speak only its public protocol (HTTP and the WebSocket).

``netbot`` (a bot that plays over the network, and an example for bot writers), ``loadtest`` (many
rooms of network bots, measured) and ``cli`` (the ``bot`` command; ``loadtest`` registers its own).
They stand outside ``conflictology.server``: the server never imports them, so what they measure is
what any outside client would see.
"""
