"""Attacks on a local server from outside, over HTTP and WebSocket only (issue 13).

    python -m benchmarks.attacks                                # every attack, short defaults
    python -m benchmarks.attacks --only bots,guessing --duration 10
    python -m benchmarks.attacks --only kill9 --kills 100       # the full kill -9 run
    python -m benchmarks.attacks --redis                        # rooms in a private Redis; + redis-outage
    python -m benchmarks.attacks --server-src /work/wt/before/src   # the server from another checkout

Each attack starts its own ``python -m conflictology.cli serve`` on 127.0.0.1 (a free port, a
throwaway SQLite file, the default flags an operator would use; with ``--redis`` a private
redis-server, append-only, so an outage is a real stop and restart), runs for a bounded time, stops
everything (also on errors) and prints one row: attempts, requests wrongly accepted, crashes (5xx
answers other than a 503 with Retry-After, sockets dropped without an error message, the server
process dying, tracebacks in its logs), leaks (another seat's hidden cards in a view, a token in a
room description or in the server's logs), seen moves a restart took back, and the p50/p99 of a
*probe* room played meanwhile.

The probe is a separate process (so the attacker's own event loop does not delay it): two scripted
players in a Capitol room of their own, each answering every state that awaits it after a short
pause (``--probe-think``, well under the per-socket message limit), a rematch after each game; a
move's time runs from sending it to the first state with a higher ``seq`` on the same socket. A
move still unanswered when the window closes counts with the time it has waited so far.

Nothing here imports the server: the tool measures what an outsider sees, so the same command
measures the code before and after a fix. Clients come from many loopback addresses (127.x.y.z, all
on ``lo``) where an attacker would use several, and where the tool's own set-up must stay clear of
per-address limits; what a limit refused is counted, never treated as a failure of the tool.

``kill9(kills, rooms, ...)`` (in :mod:`benchmarks.attacks.kill9`) runs the kill -9 attack on its own
server and returns a :class:`Kill9Result`, for a test to assert ``lost_seen_moves == 0``.

The modules: ``common`` (addresses, small helpers), ``clients`` (the attacker's clients and the tally
of what they saw), ``servers`` (the server, its Redis and the probe as child processes), ``context``
(one attack's context and row), one module per attack family (``bots``, ``guessing``,
``slow_clients``, ``spectators``, ``room_flood``, ``kill9``, ``redis_outage``, ``log_flood``,
``defences``) and ``runner`` (the command line and the table; ``python -m benchmarks.attacks``).
"""
