"""The Chrome extension: the builder's output (Manifest V3, no inline scripts, a store zip), and the
extension loaded in Chromium, its popup creating a room that a normal page joins."""

from __future__ import annotations

import json
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Playwright, expect
from typer.testing import CliRunner

from browser_helpers import WebServer, join_by_link, load_extension, run_server, shot
from conflictology.cli import app
from conflictology.extension import build, check_no_inline_scripts, icon_png, normalize_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    with run_server(tmp_path_factory.mktemp("ext")) as running:
        yield running


def test_build_writes_an_mv3_extension_and_a_zip(tmp_path: Path) -> None:
    out = tmp_path / "ext"
    zip_path = build("https://play.example.org/", out)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["manifest_version"] == 3
    # The toolbar icon opens the side panel (background.js); popup.html is its fallback.
    assert "default_popup" not in manifest["action"]
    assert manifest["side_panel"]["default_path"] == "sidepanel.html"
    assert manifest["options_ui"]["page"] == "options.html"
    assert manifest["background"]["service_worker"] == "background.js"
    assert manifest["host_permissions"] == ["https://play.example.org/*"]
    for size in ("16", "32", "48", "128"):
        icon = out / manifest["icons"][size]
        assert icon.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The client inside points at the server given.
    assert 'DEFAULT_SERVER = "https://play.example.org";' in (out / "js" / "config.js").read_text()
    pages = ("sidepanel.html", "popup.html", "options.html", "background.js", "js/app.js", "vendor/qrcode.js")
    for page in pages:
        assert (out / page).is_file(), page
    # The installed web app's worker stays out; the client inside compares no version with the server.
    assert not (out / "sw.js").exists()
    assert "export const CLIENT_VERSION = null;" in (out / "js" / "version.js").read_text()
    with zipfile.ZipFile(zip_path) as zf:
        names = set(zf.namelist())
    assert {"manifest.json", "popup.html", "options.html", "background.js", "js/app.js"} <= names
    assert zip_path == tmp_path / "ext.zip"
    # Building again replaces the old build.
    build("https://other.example.org", out, make_zip=False)
    assert "other.example.org" in (out / "manifest.json").read_text()


def test_build_refuses_bad_servers_and_foreign_directories(tmp_path: Path) -> None:
    for bad in ("ftp://x.org", "play.example.org", "https://x.org/path", "https://x.org/?a=1"):
        with pytest.raises(ValueError):
            normalize_server(bad)
    assert normalize_server("http://127.0.0.1:8000/") == "http://127.0.0.1:8000"
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "cat.jpg").write_bytes(b"meow")
    with pytest.raises(ValueError, match="not an extension directory"):
        build("https://x.org", foreign)
    assert (foreign / "cat.jpg").read_bytes() == b"meow"


def test_inline_scripts_are_caught(tmp_path: Path) -> None:
    (tmp_path / "bad.html").write_text("<html><script>alert(1)</script></html>")
    with pytest.raises(RuntimeError, match="inline script"):
        check_no_inline_scripts(tmp_path)
    (tmp_path / "bad.html").write_text('<button onclick="go()">x</button>')
    with pytest.raises(RuntimeError):
        check_no_inline_scripts(tmp_path)
    (tmp_path / "bad.html").write_text('<script type="module" src="/js/app.js"></script>')
    check_no_inline_scripts(tmp_path)


def test_icons_are_valid_pngs() -> None:
    png = icon_png(16)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(png[16:20], "big") == 16 and int.from_bytes(png[20:24], "big") == 16


def test_cli_command(tmp_path: Path) -> None:
    args = ["extension", "--server", "http://127.0.0.1:9", "--out", str(tmp_path / "e")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "e" / "manifest.json").is_file() and (tmp_path / "e.zip").is_file()
    bad = CliRunner().invoke(app, ["extension", "--server", "nonsense", "--out", str(tmp_path / "f")])
    assert bad.exit_code == 2
    assert not (tmp_path / "f").exists()


@pytest.mark.browser
def test_extension_popup_creates_a_room_a_page_joins(
    playwright: Playwright, browser: Browser, server: WebServer, tmp_path: Path
) -> None:
    ext = load_extension(playwright, server, tmp_path, {"width": 420, "height": 600})
    ctx, sw, ext_id = ext.context, ext.worker, ext.id
    try:
        popup = ctx.new_page()
        errors: list[str] = []
        popup.on("pageerror", lambda exc: errors.append(str(exc)))
        popup.goto(f"chrome-extension://{ext_id}/popup.html")
        expect(popup.locator("body")).to_have_class("extension popup")
        # The server URL the builder set is what the service worker reports.
        assert popup.evaluate("chrome.runtime.sendMessage({type: 'server'})") == {"server": server.url}
        popup.locator("[data-k=game-capitol]").check(force=True)
        popup.fill("form.create input[name=name]", "Pat")
        popup.click("[data-k=create]")
        popup.wait_for_selector(".lobby .code-big")
        code = popup.locator(".share .code-big").inner_text().strip()
        # The link to share is the server's page, which works in any browser.
        expect(popup.locator(".share .link")).to_have_text(f"{server.url}/?room={code}")
        shot(popup, "extension-popup-lobby", tmp_path)

        guest = browser.new_page()
        join_by_link(guest, server.url, code, "Quinn")
        expect(popup.locator(".seats .seat")).to_have_count(2)
        expect(popup.locator(".seats")).to_contain_text("Quinn")
        popup.click("[data-k=start]")
        popup.wait_for_selector(".capitol-table")
        guest.wait_for_selector(".capitol-table")
        expect(popup.locator(".opponents .player")).to_contain_text("Quinn")

        # "Open in a tab": the same game, full size, from the extension's own pages (same token).
        with ctx.expect_page() as tab_info:
            popup.click("[data-k=open-tab]")
        tab = tab_info.value
        tab.wait_for_selector(".capitol-table")
        expect(tab.locator("body")).to_have_class("extension")
        expect(tab.locator(".me-area .pname")).to_contain_text("Pat")
        # Reloaded, the tab is still a full tab (issue 17.1: the address kept `tab=1`), laid out for
        # its own width rather than the popup's 420 px column.
        tab.set_viewport_size({"width": 1280, "height": 800})
        assert "tab=1" in tab.url
        tab.reload()
        tab.wait_for_selector(".capitol-table")
        assert "tab=1" in tab.url
        expect(tab.locator("body")).to_have_class("extension")
        width = tab.evaluate("document.querySelector('main').getBoundingClientRect().width")
        assert width > 1000, width
        log_box = tab.locator(".log").bounding_box()
        opponents_box = tab.locator(".opponents").bounding_box()
        assert log_box and opponents_box and log_box["x"] >= opponents_box["x"] + opponents_box["width"]

        # The real toolbar popup (no tab of its own: it reports to the service worker) reopens on
        # the game in progress.
        sw.evaluate("globalThis.lastScreen = null")
        # (As where the side panel API is missing: background.js then sets the popup.)
        sw.evaluate("chrome.action.setPopup({popup: 'popup.html'})")
        sw.evaluate("chrome.action.openPopup()")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            last = sw.evaluate("globalThis.lastScreen")
            if last and last["popup"] and last["screen"] == "table":
                break
            tab.wait_for_timeout(100)
        assert last == {"screen": "table", "code": code, "popup": True}

        # The options page stores another server URL.
        options = ctx.new_page()
        options.goto(f"chrome-extension://{ext_id}/options.html")
        expect(options.locator("#server")).to_have_value(server.url)
        options.fill("#server", "https://play.example.org/some/path")
        options.click("#save")
        expect(options.locator("#saved")).not_to_be_empty()
        expect(options.locator("#server")).to_have_value("https://play.example.org")
        stored = options.evaluate("chrome.storage.sync.get('server')")
        assert stored == {"server": "https://play.example.org"}
        # No page of the extension registered the web app's worker: background.js is its only one.
        assert [w.url for w in ctx.service_workers] == [sw.url]
        scripts = "navigator.serviceWorker.getRegistrations().then((rs) => rs.map((r) => r.active.scriptURL))"
        assert popup.evaluate(scripts) == [sw.url]
        assert errors == [], errors
    finally:
        ctx.close()
