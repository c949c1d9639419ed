"""The web client as this process serves it: its version and the files an installed app keeps.

The version is read once, at start, from the files of the web dir (the package's version and a hash
of every file's path and bytes), so two processes serving the same files agree and a restart with
any file changed announces a new one: ``GET /api/info`` says it, ``/js/version.js`` gives it to the
page, and ``/sw.js`` names its cache after it (docs/web.md, "On the phone").
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from conflictology import __version__

# The worker is not among the files it keeps (the browser fetches and updates it by itself).
WORKER = "sw.js"
# The line of sw.js and of js/version.js the server writes when it serves them.
WORKER_LINE = "const CLIENT = { version: null, files: [] };"
VERSION_MODULE = "js/version.js"


def _served(path: Path, root: Path) -> bool:
    parts = path.relative_to(root).parts
    return not any(p.startswith(".") or p == "__pycache__" for p in parts) and path.suffix != ".py"


@dataclass(frozen=True)
class WebClient:
    """``version``: None where there is no web dir. ``files``: the URL paths of the client's files
    (``/index.html``, ``/js/app.js``…), the worker's own left out."""

    version: str | None
    files: tuple[str, ...]

    @classmethod
    def read(cls, web_dir: Path) -> WebClient:
        if not web_dir.is_dir():
            return cls(None, ())
        digest = hashlib.sha256()
        files = []
        for path in sorted(p for p in web_dir.rglob("*") if p.is_file() and _served(p, web_dir)):
            name = path.relative_to(web_dir).as_posix()
            data = path.read_bytes()
            digest.update(f"{name}\0{len(data)}\0".encode())
            digest.update(data)
            if name != WORKER:
                files.append(f"/{name}")
        return cls(f"{__version__}+{digest.hexdigest()[:16]}", tuple(files))

    def version_module(self) -> str:
        """``/js/version.js`` as served: the version the page was loaded with."""
        return f"export const CLIENT_VERSION = {json.dumps(self.version)};\n"

    def worker(self, source: str) -> str:
        """``/sw.js`` as served: ``source`` with its ``CLIENT`` line naming this version's files."""
        line = f"const CLIENT = {json.dumps({'version': self.version, 'files': list(self.files)})};"
        if WORKER_LINE not in source:
            raise RuntimeError(f"web/{WORKER} has no line {WORKER_LINE!r} to fill in")
        return source.replace(WORKER_LINE, line, 1)
