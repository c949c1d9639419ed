"""The names and scripts a running --redis deployment shares between its processes: an upgrade
that renamed a key, a channel or changed a script would split the deployment (old and new processes
no longer seeing each other's rooms, locks or presence). Pinned here byte for byte."""

from __future__ import annotations

import hashlib

import pytest

from conflictology.server import redis_scripts
from conflictology.server.redis_keys import RedisKeys


def test_every_key_and_channel_keeps_its_name() -> None:
    keys = RedisKeys("cfy:")
    assert keys.room("ABC234") == "cfy:room:ABC234"
    assert keys.log("ABC234") == "cfy:log:ABC234"
    assert keys.owner("ABC234") == "cfy:owner:ABC234"
    assert keys.presence("ABC234") == "cfy:presence:ABC234"
    assert keys.followers("ABC234") == "cfy:followers:ABC234"
    assert keys.channel("ABC234") == "cfy:ch:ABC234"
    assert keys.alive("p1") == "cfy:alive:p1"
    assert keys.procrooms("p1") == "cfy:procrooms:p1"
    assert keys.follows("p1") == "cfy:follows:p1"
    assert keys.reap("p1") == "cfy:reap:p1"
    assert keys.rooms == "cfy:rooms"
    assert keys.procs == "cfy:procs"
    assert keys.listed == "cfy:listed"
    assert keys.games == "cfy:games"
    assert keys.control == "cfy:ctl"
    assert keys.budget("guess") == "cfy:budget:guess:"


@pytest.mark.parametrize("prefix", ["cfy:", "", "test-1a2b:"])
def test_a_channel_names_its_room_whatever_the_prefix(prefix: str) -> None:
    keys = RedisKeys(prefix)
    assert keys.code_of(keys.channel("ABC234")) == "ABC234"
    assert keys.room("X").startswith(prefix)


# Redis caches scripts by the SHA-1 of their text (EVALSHA): these are the SHAs every process of a
# deployment sends. A script's text is its stored format.
SCRIPTS = {
    "INSERT": "a9a892d4a021a17b9b4a890171d8c7a274bfcd65",
    "UPDATE": "545d55a16b2329328e7d63ebb5e3001d2f270f3e",
    "CLAIM": "1f844fdf2dd45d97f68fcf0b290829a4779afef4",
    "BUDGET": "19ae671ce50ed5df8180947f67ed525154cc8538",
}


@pytest.mark.parametrize(("name", "sha"), SCRIPTS.items())
def test_every_script_is_the_one_running_deployments_know(name: str, sha: str) -> None:
    assert hashlib.sha1(getattr(redis_scripts, name).encode()).hexdigest() == sha
