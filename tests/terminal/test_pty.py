"""``conflictology play`` in a real pseudo-terminal, answered as a person types: the whole program path
(Typer, Rich writing to a TTY, standard input) from the first prompt to "game over"."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time

import pytest

ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.mark.parametrize("game", ["capitol", "conspiranoicos"])
def test_play_in_a_pseudo_terminal(game: str) -> None:
    master, slave = pty.openpty()
    cmd = [sys.executable, "-m", "conflictology.cli", "play", game, "--bots", "random", "--seed", "4",
           "--delay", "0"]
    proc = subprocess.Popen(
        cmd, stdin=slave, stdout=slave, stderr=slave, close_fds=True,
        env={**os.environ, "COLUMNS": "120", "LINES": "40", "TERM": "xterm-256color"},
    )
    os.close(slave)
    raw = b""
    answered = 0
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            raw += chunk
            prompts = ANSI.sub(b"", raw).count(b"Your choice")
            if prompts > answered:
                os.write(master, b"x\n" if answered == 0 else b"1\n")
                answered = prompts
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    text = ANSI.sub(b"", raw).decode("utf-8", "replace")
    assert proc.returncode == 0, text[-2000:]
    assert "Please type a number from 1 to" in text and "(you typed x)" in text
    assert "game over" in text
    assert answered > 3
