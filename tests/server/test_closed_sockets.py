"""A closed socket is freed by reference counting alone: nothing of it waits in a cycle for the
collector's full pass, which `serve --gc paced` takes at most every ten minutes (collector.py). Two
cycles did hold it, ~70 objects a socket: the scope's raw send (the protocol's own bound method, in
the scope the protocol holds) and the upgraded HTTP protocol's parser (which holds its callbacks)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from conflictology.server.guarded_protocols import (
    GuardedH11Protocol,
    GuardedHttpToolsProtocol,
    GuardedWebSocketsSansIOProtocol,
)
from server_helpers import Player, eventually, make_table, thread_server

PROTOCOLS = (GuardedHttpToolsProtocol, GuardedH11Protocol, GuardedWebSocketsSansIOProtocol)


def protocols_alive() -> int:
    """The server's connections still in memory (a count: a list would keep them alive)."""
    return sum(1 for o in gc.get_objects() if issubclass(type(o), PROTOCOLS))  # (a dead proxy has no class)


def protocols_alive_after_a_pass() -> int:
    gc.collect()
    return protocols_alive()


@pytest.mark.parametrize("http", ["httptools", "h11"])
def test_a_closed_socket_leaves_nothing_for_the_collector(tmp_path: Path, http: str) -> None:
    was = gc.isenabled()
    with thread_server(tmp_path, uvicorn_http=http) as server:
        table = make_table(server, "capitol", humans=2)
        # The HTTP requests' connections, and any earlier test's left in cycles.
        eventually(protocols_alive_after_a_pass, lambda n: n == 0, timeout=30)
        gc.disable()  # from here on only reference counting frees anything
        try:
            player = Player(server, table.code, table.host_token, 0)
            player.next()  # the socket is open and served
            assert protocols_alive() >= 1
            player.close()
            eventually(protocols_alive, lambda n: n == 0, timeout=30)
        finally:
            if was:
                gc.enable()
