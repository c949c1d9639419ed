"""The web client as the server serves it (routes.pages, server.webclient): its version read from
the web dir's files, the worker and version module written with it, the manifest's media type, and
every file of the client to be revalidated, saying its version."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import httpx

from conflictology.server.config import WEB_DIR
from conflictology.server.webclient import WORKER_LINE, WebClient
from server_helpers import thread_server


def copy_web(tmp_path: Path) -> Path:
    web = tmp_path / "web"
    shutil.copytree(WEB_DIR, web, ignore=shutil.ignore_patterns("__pycache__"))
    return web


def test_the_version_follows_every_file_and_the_files_leave_out_the_worker(tmp_path: Path) -> None:
    web = copy_web(tmp_path)
    (web / ".hidden").write_text("an editor's", encoding="utf-8")
    (web / "__pycache__").mkdir()
    (web / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (web / "notes.py").write_text("", encoding="utf-8")
    first = WebClient.read(web)
    assert first.version is not None and first.version.startswith("0.1.0+")
    assert {"/index.html", "/js/app.js", "/icons/app-512.png"} <= set(first.files)
    assert "/sw.js" not in first.files
    assert not [f for f in first.files if ".hidden" in f or "__pycache__" in f or f.endswith(".py")]
    # What is left out of the files is left out of the version too; any file of the client is not.
    assert WebClient.read(web) == first
    (web / ".hidden").write_text("changed", encoding="utf-8")
    assert WebClient.read(web).version == first.version
    for name in ("i18n/en.js", "sw.js", "icons/app-192.png"):
        path = web / name
        before = path.read_bytes()
        path.write_bytes(before + b"\n")
        assert WebClient.read(web).version != first.version, name
        path.write_bytes(before)
        assert WebClient.read(web).version == first.version, name
    (web / "extra.css").write_text("", encoding="utf-8")
    assert WebClient.read(web).version != first.version
    assert WebClient.read(tmp_path / "missing") == WebClient(None, ())
    # The shipped worker has the line the server fills in.
    assert WORKER_LINE in (WEB_DIR / "sw.js").read_text(encoding="utf-8")


def test_the_worker_the_version_module_and_the_manifest_as_served(tmp_path: Path) -> None:
    web = copy_web(tmp_path)
    client = WebClient.read(web)
    with thread_server(tmp_path, web_dir=web) as srv, httpx.Client(base_url=srv.url, timeout=10) as http:
        info = http.get("/api/info").json()
        assert info["client_version"] == client.version

        worker = http.get("/sw.js")
        assert worker.status_code == 200
        assert worker.headers["content-type"].startswith("text/javascript")
        assert worker.headers["cache-control"] == "no-cache"
        assert "worker-src 'self'" in worker.headers["content-security-policy"]
        line = re.search(r"^const CLIENT = (.*);$", worker.text, re.MULTILINE)
        assert line is not None and WORKER_LINE not in worker.text
        assert json.loads(line.group(1)) == {"version": client.version, "files": list(client.files)}

        module = http.get("/js/version.js")
        assert module.headers["content-type"].startswith("text/javascript")
        assert module.text == f"export const CLIENT_VERSION = {json.dumps(client.version)};\n"
        # (The file itself says nothing: the extension's copy, or any other server.)
        assert "CLIENT_VERSION = null;" in (web / "js" / "version.js").read_text(encoding="utf-8")

        manifest = http.get("/manifest.webmanifest")
        assert manifest.headers["content-type"].startswith("application/manifest+json")
        assert json.loads(manifest.text)["start_url"] == "/"

        for path in ("/", "/index.html", "/js/app.js", "/r/ABCD", "/replay/123", "/icons/app-192.png"):
            r = http.get(path)
            assert r.status_code == 200, path
            assert r.headers["cache-control"] == "no-cache", path
            assert r.headers["x-client-version"] == client.version, path
        # A 304 says the version too (the browser's copy is then known to be this version's).
        etag = http.get("/js/app.js").headers["etag"]
        again = http.get("/js/app.js", headers={"if-none-match": etag})
        assert again.status_code == 304
        assert again.headers["x-client-version"] == client.version
        # The API is not the client's.
        assert "x-client-version" not in http.get("/api/info").headers


def test_without_a_worker_file_there_is_no_worker(tmp_path: Path) -> None:
    web = copy_web(tmp_path)
    (web / "sw.js").unlink()
    with thread_server(tmp_path, web_dir=web) as srv:
        assert httpx.get(srv.url + "/sw.js", timeout=10).status_code == 404
