"""The Chrome extension (Manifest V3): the web client packaged as a side panel beside the call.

``build(server, out)`` copies the web client (``conflictology/web``) and the extension's own files
(``template/``: manifest, service worker, options page) into ``out``, points the client at
``server``, draws the toolbar icons, and writes ``out`` + ``.zip`` for the Chrome Web Store.
The side panel (``sidepanel.html``, opened by the toolbar icon) stays open while the player clicks
into the video call, which a popup does not; ``popup.html`` is the same page, used as the toolbar
popup only where the side panel API is missing (background.js).
Manifest V3 forbids inline scripts: every page loads its scripts from files, which the web
client already does.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import zipfile
import zlib
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from pathlib import Path
from urllib.parse import urlsplit

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
TEMPLATE_DIR = Path(__file__).resolve().parent / "template"
ICON_SIZES = (16, 32, 48, 128)

_DEFAULT_LINE = re.compile(r"^export const DEFAULT_SERVER = .*;$", re.MULTILINE)
_INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE)


def normalize_server(server: str) -> str:
    """The server's origin (``scheme://host[:port]``); anything else is a ``ValueError``."""
    parts = urlsplit(server.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"the server must be an http:// or https:// URL, not {server!r}")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError(f"the server URL must be an origin (no path or query), not {server!r}")
    return f"{parts.scheme}://{parts.netloc}"


def _version() -> str:
    try:
        raw = package_version("conflictology")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        raw = "0.1.0"
    # Chrome versions are one to four dot-separated integers.
    numbers = re.findall(r"\d+", raw)[:4] or ["0", "1", "0"]
    return ".".join(numbers)


def build(server: str, out: Path, *, make_zip: bool = True) -> Path:
    """Write the unpacked extension into ``out`` (replacing what was there); return the zip's path,
    or ``out`` when ``make_zip`` is false."""
    origin = normalize_server(server)
    out = Path(out)
    if out.exists():
        if not (out / "manifest.json").is_file() and any(out.iterdir()):
            raise ValueError(f"{out} exists and is not an extension directory; choose an empty one")
        shutil.rmtree(out)
    # The installed web app's worker (sw.js) has no place in an extension, whose pages never
    # register it (js/install.js): the browser's store updates them.
    shutil.copytree(WEB_DIR, out, ignore=shutil.ignore_patterns("__pycache__", "*.py", "sw.js"))
    for item in TEMPLATE_DIR.iterdir():
        if item.is_file():
            shutil.copy2(item, out / item.name)
    # The side panel and the popup are the web client's page itself (app.js tells them apart).
    shutil.copy2(WEB_DIR / "index.html", out / "sidepanel.html")
    shutil.copy2(WEB_DIR / "index.html", out / "popup.html")

    config = out / "js" / "config.js"
    text = config.read_text(encoding="utf-8")
    text, count = _DEFAULT_LINE.subn(f"export const DEFAULT_SERVER = {json.dumps(origin)};", text)
    if count != 1:
        raise RuntimeError("web/js/config.js has no DEFAULT_SERVER line to fill in")
    config.write_text(text, encoding="utf-8")

    icons_dir = out / "icons"
    icons_dir.mkdir(exist_ok=True)
    icons = {}
    for size in ICON_SIZES:
        (icons_dir / f"icon{size}.png").write_bytes(icon_png(size))
        icons[str(size)] = f"icons/icon{size}.png"

    manifest = json.loads((TEMPLATE_DIR / "manifest.json").read_text(encoding="utf-8"))
    manifest["version"] = _version()
    manifest["icons"] = icons
    manifest["action"]["default_icon"] = icons
    manifest["host_permissions"] = [f"{origin}/*"]
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")

    check_no_inline_scripts(out)
    if not make_zip:
        return out
    zip_path = out.with_name(out.name + ".zip")
    with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(out.rglob("*")):
            if path.is_file():
                zf.write(path, path.relative_to(out).as_posix())
    return zip_path


def check_no_inline_scripts(directory: Path) -> None:
    """MV3's content security policy refuses inline scripts and inline event handlers."""
    for page in directory.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        if _INLINE_SCRIPT.search(html) or re.search(r"\son[a-z]+\s*=", html, re.IGNORECASE):
            raise RuntimeError(f"{page.name} has an inline script, which Manifest V3 forbids")


# ---- icons: two tilted cards, drawn without an imaging library ------------------------------------


def _inside_card(
    x: float, y: float, cx: float, cy: float, w: float, h: float, cos: float, sin: float
) -> bool:
    dx, dy = x - cx, y - cy
    u = dx * cos + dy * sin
    v = -dx * sin + dy * cos
    return abs(u) <= w / 2 and abs(v) <= h / 2


def icon_png(size: int) -> bytes:
    """The toolbar icon (the web client's icon.svg, rasterised) as a PNG of ``size`` pixels."""
    # (centre x, centre y, width, height, cos, sin, RGB), in a 32-unit box like icon.svg.
    cards = [
        (11.5, 16.5, 17, 23, 0.985, -0.174, (0xC9, 0xA2, 0x27)),
        (20.5, 15.5, 17, 23, 0.990, 0.139, (0xE0, 0x5D, 0x44)),
    ]
    samples = 4
    rows = bytearray()
    for py in range(size):
        rows.append(0)  # filter type: none
        for px in range(size):
            r = g = b = a = 0.0
            for sy in range(samples):
                for sx in range(samples):
                    x = (px + (sx + 0.5) / samples) * 32 / size
                    y = (py + (sy + 0.5) / samples) * 32 / size
                    colour = None
                    for cx, cy, w, h, cos, sin, rgb in cards:
                        if _inside_card(x, y, cx, cy, w, h, cos, sin):
                            colour = rgb
                    if colour is not None:
                        r += colour[0]
                        g += colour[1]
                        b += colour[2]
                        a += 255
            n = samples * samples
            cover = a / 255
            rows += bytes(
                (
                    round(r / cover) if cover else 0,
                    round(g / cover) if cover else 0,
                    round(b / cover) if cover else 0,
                    round(a / n),
                )
            )

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(bytes(rows), 9))
        + chunk(b"IEND", b"")
    )
