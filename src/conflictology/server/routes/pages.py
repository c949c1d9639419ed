"""The web client's pages: a room's join link (``/r/CODE``), the replay viewer (``/replay/ID``),
and the static files — or a placeholder where the web client is not installed."""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

_PLACEHOLDER = """<!doctype html><meta charset="utf-8"><title>Conflictology</title>
<h1>Conflictology</h1><p>The web client is not installed; the API is at <code>/api</code>
(see docs/protocol.md).</p>"""


def _page(path: Path) -> Response:
    if path.is_file():
        return FileResponse(path)
    return HTMLResponse(_PLACEHOLDER, status_code=200)


def page_routes(web_dir: Path) -> list[BaseRoute]:
    """After the API's routes: the pages, then every other path as a static file of ``web_dir``."""
    index = web_dir / "index.html"
    viewer = web_dir / "replay.html"

    async def join_link(request: Request) -> Response:
        # /r/CODE is the same page as /?room=CODE: the client reads the code from the path.
        return _page(index)

    async def replay_page(request: Request) -> Response:
        # /replay/GAME_ID: the replay viewer (its own page and module; it reads the id from the path).
        return _page(viewer)

    routes: list[BaseRoute] = [Route("/r/{code}", join_link), Route("/replay/{game_id}", replay_page)]
    if web_dir.is_dir():
        routes.append(Mount("/", app=StaticFiles(directory=web_dir, html=True), name="web"))
    else:
        routes.append(Route("/", join_link))
    return routes
