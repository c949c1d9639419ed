"""Benchmarks and attack tools, run from the repository root as ``python -m benchmarks.NAME`` (see
README.md here); a package so that a test can import their pieces (``benchmarks.attacks.kill9``)."""
