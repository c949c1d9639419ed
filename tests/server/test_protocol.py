"""What a client may send (server/protocol.py): every known message decodes to its struct; anything
else (not JSON, an unknown type or field, a wrong type, a value out of range, JSON nested too deep)
is refused before anything is looked at."""

from __future__ import annotations

import msgspec
import pytest

from conflictology.server.protocol import (
    MAX_DEPTH,
    Act,
    CreateRoom,
    Empty,
    Hold,
    Kick,
    Ping,
    React,
    RoomSettings,
    SettingsPatch,
    Sync,
    decode_body,
    decode_client,
)


def test_every_client_message_decodes_to_its_struct() -> None:
    assert decode_client(b'{"type": "act", "action": {"type": "block", "card": "banker"}, "seq": 7}') == Act(
        {"type": "block", "card": "banker"}, 7
    )
    assert decode_client(b'{"type": "act", "action": {"type": "income"}}') == Act({"type": "income"}, None)
    assert decode_client(b'{"type": "ping"}') == Ping()
    assert decode_client(b'{"type": "sync"}') == Sync()
    assert decode_client('{"type": "react", "emoji": "👍"}'.encode()) == React("👍")
    assert decode_client(b'{"type": "hold"}') == Hold()


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"not json",
        b"[]",
        b'{"action": {"type": "income"}}',  # no type
        b'{"type": "shout"}',  # an unknown type
        b'{"type": "ping", "extra": 1}',  # an unknown field
        b'{"type": "act"}',  # no action
        b'{"type": "act", "action": "income"}',  # an action is an object
        b'{"type": "act", "action": {}, "seq": -1}',  # seq out of range
        b'{"type": "act", "action": {}, "seq": "7"}',  # seq of the wrong type
        b'{"type": "react", "emoji": "' + b"x" * 17 + b'"}',  # over 16 characters
        b'{"type": "react"}',
    ],
)
def test_a_malformed_client_message_is_refused(raw: bytes) -> None:
    with pytest.raises((msgspec.ValidationError, msgspec.DecodeError)):
        decode_client(raw)


def test_json_nested_too_deep_is_refused_before_decoding_and_brackets_in_strings_do_not_count() -> None:
    deep = b'{"type": "act", "action": {"type": "x", "a": ' + b"[" * MAX_DEPTH + b"]" * MAX_DEPTH + b"}}"
    with pytest.raises(msgspec.DecodeError, match="nested deeper"):
        decode_client(deep)
    text = "[" * 500
    shallow = b'{"type": "react", "emoji": "x", "pad": "' + text.encode() + b'"}'
    with pytest.raises(msgspec.ValidationError):  # refused for its unknown field, not its depth
        decode_client(shallow)
    ok = b'{"type": "act", "action": {"type": "x", "note": "' + b"{" * 100 + b'"}}'
    assert isinstance(decode_client(ok), Act)


def test_bodies_decode_with_defaults_and_refuse_what_is_out_of_range() -> None:
    assert decode_body(b"", Empty) == Empty()
    body = decode_body(b'{"game": "capitol", "name": "Ada", "settings": {"turn_seconds": 45}}', CreateRoom)
    assert isinstance(body.settings, SettingsPatch)
    assert body.settings.apply_to(RoomSettings()) == RoomSettings(turn_seconds=45.0)
    for bad, kind in [
        (b'{"seat": 64}', Kick),
        (b'{"game": "capitol", "name": ""}', CreateRoom),
        (b'{"game": "capitol", "name": "Ada", "settings": {"bot_delay": 0.1}}', CreateRoom),  # the floor
        (b'{"game": "capitol", "name": "Ada", "settings": {"hold_seconds": 301}}', CreateRoom),
        (b'{"game": "capitol", "name": "Ada", "colour": "red"}', CreateRoom),
    ]:
        with pytest.raises(msgspec.ValidationError):
            decode_body(bad, kind)
