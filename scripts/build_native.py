"""Compile the rules (``conflictology.native.SOURCES``) to C extension modules with mypyc, into
``build/native``, unless the build there is already of the sources as they are.

    .venv/bin/python scripts/build_native.py [--force]

Run by ``scripts/setup``. Needs a C compiler and Python's headers; without them it says so and the
rules run from their source, as before. The build is made in a fresh directory and moved into place
with its stamp last, so an interrupted build is never taken for a fresh one.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conflictology import native


def compile_into(out: Path) -> None:
    """mypyc and setuptools' build_ext, run from ``src`` (mypyc names the modules by their paths)."""
    from mypyc.build import mypycify
    from setuptools import setup

    os.chdir(native.SRC)
    setup(
        name="conflictology-native",
        ext_modules=mypycify(
            # The project's mypy config checks the whole package (and notes unused sections, which
            # mypyc counts as errors): the three files are checked by mypy in CI, not again here.
            ["--config-file=", *native.SOURCES],
            opt_level="3",
            group_name=native.GROUP,
            target_dir=str(out / "c"),
        ),
        script_args=["--quiet", "build_ext", "--build-lib", str(out), "--build-temp", str(out / "temp")],
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--force", action="store_true", help="build even if the build is fresh")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        compile_into(Path(args.child))
        return 0
    if native.fresh() and not args.force:
        print("compiled rules: up to date")
        return 0
    build = native.BUILD
    build.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    stamp = native.stamp()  # of the sources the build starts from
    with tempfile.TemporaryDirectory(prefix="native-", dir=build.parent) as tmp:
        out = Path(tmp) / "native"
        # A child process: mypyc's build changes the directory and leaves its C files behind.
        child = subprocess.run(
            [sys.executable, __file__, "--child", str(out)], capture_output=True, text=True, cwd=native.SRC
        )
        if child.returncode != 0:
            print(child.stdout[-4000:] + child.stderr[-4000:], file=sys.stderr)
            print("compiled rules: the build failed; the rules run from their source", file=sys.stderr)
            return 1
        for scratch in ("temp", "c"):
            shutil.rmtree(out / scratch, ignore_errors=True)
        (out / native.STAMP).write_text(stamp + "\n")
        shutil.rmtree(build, ignore_errors=True)
        out.rename(build)
    print(f"compiled rules: built in {time.monotonic() - started:.0f} s ({build})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
