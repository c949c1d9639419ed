"""The web client's pages: a room's join link (``/r/CODE``), the replay viewer (``/replay/ID``),
the installed app's worker and manifest (``/sw.js``, ``/manifest.webmanifest``), and the static
files — or a placeholder where the web client is not installed.

Every file of the client is served with ``Cache-Control: no-cache``: a browser asks again (a 304 when
nothing changed) rather than guess from the file's age, so a page never mixes modules of two
versions after the server is updated. Each says which version served it (``X-Client-Version``): the
worker keeps a copy the browser already holds only when it is of the worker's own version.
"""

from __future__ import annotations

import os
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from conflictology.server.webclient import VERSION_MODULE, WORKER, WebClient

_PLACEHOLDER = """<!doctype html><meta charset="utf-8"><title>Conflictology</title>
<h1>Conflictology</h1><p>The web client is not installed; the API is at <code>/api</code>
(see docs/protocol.md).</p>"""
MANIFEST = "manifest.webmanifest"


def _headers(client: WebClient) -> dict[str, str]:
    return {"cache-control": "no-cache", "x-client-version": client.version or ""}


def _page(path: Path, headers: dict[str, str]) -> Response:
    if path.is_file():
        return FileResponse(path, headers=headers)
    return HTMLResponse(_PLACEHOLDER, status_code=200)


class ClientFiles(StaticFiles):
    """The web dir's files, each to be revalidated before it is used again (a 304 says the version
    too: the browser's copy then carries the version that last confirmed it)."""

    def __init__(self, *, directory: Path, headers: dict[str, str]) -> None:
        super().__init__(directory=directory, html=True)
        self.headers = headers

    def file_response(
        self,
        full_path: str | os.PathLike[str],
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        response.headers.update(self.headers)
        return response


def page_routes(web_dir: Path, client: WebClient | None = None) -> list[BaseRoute]:
    """After the API's routes: the pages, then every other path as a static file of ``web_dir``."""
    index = web_dir / "index.html"
    viewer = web_dir / "replay.html"
    client = client or WebClient.read(web_dir)
    headers = _headers(client)

    async def join_link(request: Request) -> Response:
        # /r/CODE is the same page as /?room=CODE: the client reads the code from the path.
        return _page(index, headers)

    async def replay_page(request: Request) -> Response:
        # /replay/GAME_ID: the replay viewer (its own page and module; it reads the id from the path).
        return _page(viewer, headers)

    routes: list[BaseRoute] = [Route("/r/{code}", join_link), Route("/replay/{game_id}", replay_page)]
    if not web_dir.is_dir():
        routes.append(Route("/", join_link))
        return routes

    worker_file = web_dir / WORKER
    # Read with the version, at start: the worker served always names the files it was read with.
    worker = client.worker(worker_file.read_text(encoding="utf-8")) if worker_file.is_file() else None
    version_module = client.version_module()

    async def service_worker(request: Request) -> Response:
        if worker is None:
            return Response("not found", status_code=404, media_type="text/plain")
        return Response(worker, media_type="text/javascript", headers=headers)

    async def client_version(request: Request) -> Response:
        return Response(version_module, media_type="text/javascript", headers=headers)

    async def manifest(request: Request) -> Response:
        path = web_dir / MANIFEST
        if not path.is_file():
            return Response("not found", status_code=404, media_type="text/plain")
        return FileResponse(path, media_type="application/manifest+json", headers=headers)

    routes += [
        Route(f"/{WORKER}", service_worker),
        Route(f"/{VERSION_MODULE}", client_version),
        Route(f"/{MANIFEST}", manifest),
        Mount("/", app=ClientFiles(directory=web_dir, headers=headers), name="web"),
    ]
    return routes
