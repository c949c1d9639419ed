"""``serve``'s configuration from flags and the environment (issue 14): every flag has a
``CONFLICTOLOGY_<FLAG>`` variable, ``PORT`` is honoured, flags win, lists are comma-separated, and
``serve --check`` prints what is in effect (passwords masked) and whether the stores answer."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from conflictology.cli import app
from conflictology.server.cli import env_name


def check(tmp_path: Path, *args: str, **env: str) -> tuple[int, dict[str, str], str]:
    """Run ``serve --check``; returns the exit status, the printed settings and the whole output."""
    db = f"sqlite:///{tmp_path / 'check.sqlite3'}"
    result = CliRunner().invoke(app, ["serve", "--check", "--db", db, *args], env=env)
    settings = {}
    for line in result.output.splitlines():
        match = re.match(r"^([a-z_]+) +(.*)$", line)
        if match:
            settings[match.group(1)] = match.group(2)
    return result.exit_code, settings, result.output


def test_every_flag_has_its_environment_variable_in_the_help() -> None:
    result = CliRunner().invoke(app, ["serve", "--help"], env={"COLUMNS": "250"})
    assert result.exit_code == 0
    flags = set(re.findall(r"(--[a-z][a-z-]+)", result.output)) - {"--help", "--check"}
    flags = {f for f in flags if not f.startswith("--no-")}
    assert {"--db", "--redis", "--allow-origin", "--public-url", "--proxy-headers", "--port"} <= flags
    for flag in flags:
        assert env_name(flag) in result.output, flag
    assert env_name("--allow-origin") == "CONFLICTOLOGY_ALLOW_ORIGIN"
    assert env_name("--ws-compression/--no-ws-compression") == "CONFLICTOLOGY_WS_COMPRESSION"


def test_the_environment_configures_and_flags_win(tmp_path: Path) -> None:
    status, settings, _ = check(
        tmp_path,
        "--grace",
        "12",
        CONFLICTOLOGY_GRACE="45",
        CONFLICTOLOGY_BOT_DELAY="0.25",
        CONFLICTOLOGY_ALLOW_ORIGIN="https://a.example, https://b.example",
        CONFLICTOLOGY_WS_COMPRESSION="false",
        CONFLICTOLOGY_HOST="0.0.0.0",
    )
    assert status == 0
    assert settings["grace_seconds"] == "12.0"  # the flag, not the variable
    assert settings["bot_delay"] == "0.25"
    assert settings["allow_origins"] == "['https://a.example', 'https://b.example']"
    assert settings["host"] == "0.0.0.0"


def test_port_comes_from_the_flag_then_its_variable_then_port(tmp_path: Path) -> None:
    assert check(tmp_path)[1]["port"] == "8000"
    assert check(tmp_path, PORT="9100")[1]["port"] == "9100"
    assert check(tmp_path, PORT="9100", CONFLICTOLOGY_PORT="9200")[1]["port"] == "9200"
    assert check(tmp_path, "--port", "9300", PORT="9100", CONFLICTOLOGY_PORT="9200")[1]["port"] == "9300"
    status, _, output = check(tmp_path, PORT="http")
    assert status == 2 and "PORT" in output


def test_a_public_url_sets_the_host_and_origin_in_one_place(tmp_path: Path) -> None:
    status, settings, _ = check(
        tmp_path, "--public-url", "https://Play.Example/", "--allowed-host", "b.example"
    )
    assert status == 0
    assert settings["public_url"] == "https://Play.Example"
    assert settings["allowed_hosts"] == "['b.example', 'play.example']"
    assert settings["allow_origins"] == "['https://play.example']"
    status, _, output = check(tmp_path, "--public-url", "https://play.example/game")
    assert status == 2 and "origin" in output


def test_check_masks_passwords_and_says_what_does_not_answer(tmp_path: Path) -> None:
    status, settings, output = check(
        tmp_path, CONFLICTOLOGY_REDIS="redis://user:hunter2@127.0.0.1:1/0", CONFLICTOLOGY_PROXY_HEADERS="1"
    )
    assert "hunter2" not in output
    assert settings["redis_url"] == "redis://user:***@127.0.0.1:1/0"
    assert settings["proxy_headers"] == "True"
    assert "database: answers" in output and "redis: does not answer" in output
    from conflictology import native

    assert f"rules: {native.running}" in output  # the same build as this process's (scripts/test's)
    assert status == 1


def test_replays_are_built_in_one_process_unless_told_otherwise(tmp_path: Path) -> None:
    assert check(tmp_path)[1]["replay_workers"] == "1"
    assert check(tmp_path, "--replay-workers", "0")[1]["replay_workers"] == "0"
    assert check(tmp_path, CONFLICTOLOGY_REPLAY_WORKERS="2")[1]["replay_workers"] == "2"
    status, _, output = check(tmp_path, "--replay-workers", "-1")
    assert status == 2 and "replay-workers" in output


def test_serve_says_where_it_listens_and_how_the_rules_run(tmp_path: Path) -> None:
    """The first line a host reads names the address, the database and whether the rules run
    compiled (docs/architecture.md, "The compiled rules")."""
    from conflictology import native
    from server_helpers import free_port

    port = free_port()
    db = f"sqlite:///{tmp_path / 'first-line.sqlite3'}"
    argv = [sys.executable, "-m", "conflictology.cli", "serve", "--port", str(port), "--db", db]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # printed before the server starts listening
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert first.startswith(f"Conflictology on http://127.0.0.1:{port}/"), first
    assert f"the rules {native.running})" in first, first
