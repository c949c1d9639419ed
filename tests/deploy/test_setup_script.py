"""scripts/setup, the first thing a newcomer runs: a Python it cannot use is refused with a reason."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _copy_of_the_scripts(tmp_path: Path) -> Path:
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "setup", tmp_path / "scripts" / "setup")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path / "scripts" / "setup"


def test_a_python_without_venv_support_is_refused_and_leaves_no_venv(tmp_path: Path) -> None:
    setup = _copy_of_the_scripts(tmp_path)
    # A Python ≥ 3.11 whose ensurepip is missing, as Debian's python3 without python3-venv.
    fake = tmp_path / "python-no-venv"
    fake.write_text(
        "#!/bin/sh\n"
        'case "$*" in *ensurepip*) exit 1 ;; esac\n'
        f'exec {sys.executable} "$@"\n'
    )
    fake.chmod(0o755)
    done = subprocess.run(
        ["bash", str(setup)], cwd=tmp_path, env={**os.environ, "PYTHON": str(fake)},
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 1
    assert "python3-venv" in done.stderr
    assert not (tmp_path / ".venv").exists()


def test_a_python_older_than_311_is_refused(tmp_path: Path) -> None:
    setup = _copy_of_the_scripts(tmp_path)
    fake = tmp_path / "python-old"
    fake.write_text("#!/bin/sh\nexit 1\n")  # the version check fails as an old Python's would
    fake.chmod(0o755)
    done = subprocess.run(
        ["bash", str(setup)], cwd=tmp_path, env={**os.environ, "PYTHON": str(fake)},
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 1 and "3.11" in done.stderr
    assert not (tmp_path / ".venv").exists()
