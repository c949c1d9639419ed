"""Draw the installed app's icons (src/conflictology/web/icons/*.png) from icon.svg's two cards.

Run once when the icon changes: ``.venv/bin/python scripts/app_icons.py``. Chromium draws them
(Debian's, through Playwright, as the browser tests do), so the PNGs are the SVG exactly; the
PNGs are committed, and the server has nothing to draw.

- ``app-192.png``, ``app-512.png`` ("any"): the cards on a rounded square of the page's background;
- ``maskable-512.png`` ("maskable"): the background to the edges and the cards inside the central
  circle of 40 % radius that every launcher's mask keeps.
"""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import sync_playwright

WEB = Path(__file__).resolve().parent.parent / "src" / "conflictology" / "web"
CHROMIUM = "/usr/bin/chromium"
BACKGROUND = "#121829"  # style.css's --bg


def cards() -> str:
    svg = (WEB / "icon.svg").read_text(encoding="utf-8")
    match = re.search(r"<svg[^>]*>(.*)</svg>", svg, re.DOTALL)
    if match is None:
        raise SystemExit("icon.svg has no <svg> element")
    return match.group(1)


def icon(maskable: bool) -> str:
    # In a 100-unit box: icon.svg's 32 units scaled to 76 (on a rounded square), or to 62 (the cards'
    # farthest corner is 20 of its units from the middle: 38.75 of 100 fit the mask's 40).
    if maskable:
        back, scale = f'<rect width="100" height="100" fill="{BACKGROUND}"/>', 62 / 32
    else:
        back, scale = f'<rect width="100" height="100" rx="22" fill="{BACKGROUND}"/>', 76 / 32
    offset = (100 - 32 * scale) / 2
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100" width="100%" height="100%">{back}'
        f'<g transform="translate({offset} {offset}) scale({scale})">{cards()}</g></svg>'
    )


def main() -> None:
    out = WEB / "icons"
    out.mkdir(exist_ok=True)
    wanted = [("app-192.png", 192, False), ("app-512.png", 512, False), ("maskable-512.png", 512, True)]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        for name, size, maskable in wanted:
            page = browser.new_page(viewport={"width": size, "height": size})
            page.set_content(f'<body style="margin:0">{icon(maskable)}</body>')
            page.screenshot(path=str(out / name), omit_background=True)
            page.close()
            print(name, (out / name).stat().st_size, "bytes")
        browser.close()


if __name__ == "__main__":
    main()
