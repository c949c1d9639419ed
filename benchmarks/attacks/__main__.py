"""``python -m benchmarks.attacks``: see the package's docstring."""

from benchmarks.attacks.runner import main

main()
