"""The checked-in playthroughs (corpus/playthroughs/) are what the code plays now: any change of
behaviour (a rule, a view, an information state, an action's name or number) is a diff that fails
here until the files are renewed on purpose."""

from __future__ import annotations

import difflib

import pyspiel  # noqa: F401 (the test extra installs open-spiel: a missing one fails, not skips)
import pytest

from conflictology.openspiel.playthrough import DIRECTORY, PLAYTHROUGHS, Playthrough, main, render

RENEW = "python -m conflictology.openspiel.playthrough --write"


@pytest.mark.parametrize("spec", PLAYTHROUGHS, ids=[p.file for p in PLAYTHROUGHS])
def test_playthrough_is_current(spec: Playthrough) -> None:
    path = DIRECTORY / spec.file
    assert path.exists(), f"{path} is missing: write it with `{RENEW}`"
    expected = path.read_text("utf-8")
    actual = render(spec)
    if actual != expected:
        diff = "".join(list(difflib.unified_diff(
            expected.splitlines(keepends=True), actual.splitlines(keepends=True),
            fromfile=f"{spec.file} (checked in)", tofile=f"{spec.file} (the code now)", n=2,
        ))[:60])
        pytest.fail(
            f"the game now plays differently from corpus/playthroughs/{spec.file}. If the change is "
            f"meant, renew the files with `{RENEW}` and commit them with the change.\n{diff}",
            pytrace=False,
        )


def test_playthroughs_are_modest_and_finish() -> None:
    for spec in PLAYTHROUGHS:
        text = (DIRECTORY / spec.file).read_text("utf-8")
        assert len(text.encode()) < 200_000, spec.file
        assert text.startswith(f"game: {spec.game}(")
        assert "# Cut after" in text or "IsTerminal() = True" in text


def test_write_and_check(tmp_path: object) -> None:
    from pathlib import Path

    directory = Path(str(tmp_path))
    assert main(["--dir", str(directory)]) == 1  # nothing there yet: every file differs
    assert main(["--dir", str(directory), "--write"]) == 0
    assert main(["--dir", str(directory)]) == 0
    first = directory / PLAYTHROUGHS[0].file
    first.write_text(first.read_text("utf-8").replace("action: ", "action:  ", 1), "utf-8")
    assert main(["--dir", str(directory)]) == 1
