"""The README's and the engine guide's Python examples run as they are written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ["README.md", "docs/engine.md"]


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)


@pytest.mark.parametrize("doc", DOCS)
def test_python_examples_run(doc: str) -> None:
    blocks = python_blocks(ROOT / doc)
    assert blocks, f"{doc} has no Python example"
    for block in blocks:
        exec(compile(block, doc, "exec"), {"__name__": "__doc_example__"})


def test_readme_opens_with_the_two_commands() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    head = "\n".join(lines[:6])
    assert "scripts/serve" in head and "scripts/test" in head
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "scripts/test" in ci
    for script in ("serve", "test"):
        assert (ROOT / "scripts" / script).stat().st_mode & 0o111, f"scripts/{script} must be executable"


def test_readme_puts_players_first_and_says_where_commands_and_rooms_live(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 17: players read first (the browser before hosting, bots and RL); the commands shown
    after `scripts/serve` are in `.venv/bin/`, and the README says so; the default SQLite file is
    where the server really puts it (shared by every clone on the machine)."""
    import platformdirs

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    order = [text.index(h) for h in ("## Play in the browser", "## For hosts", "## For bot and AI writers")]
    assert order == sorted(order)
    assert text.index(".venv/bin/") < text.index("conflictology serve --db")
    assert "source .venv/bin/activate" in text
    # The path the server uses on Linux (config.default_db_url), as the README spells it.
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    data = platformdirs.unix.Unix("conflictology", appauthor=False).user_data_dir
    shown = data.replace(str(Path.home()), "~", 1) + "/conflictology.sqlite3"
    assert shown == "~/.local/share/conflictology/conflictology.sqlite3"
    assert shown in text



LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_the_docs_point_inside_the_project() -> None:
    """Issue 26: README, docs/engine.md and docs/protocol.md linked a contract outside the repository:
    every relative link of the README and docs/ names a file of the project, and the contract is
    docs/contract.md."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "shared/design" not in text and "../shared" not in text, page
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):
                continue  # a web address or mailto:, not a file
            resolved = (page.parent / target).resolve()
            assert resolved.is_relative_to(ROOT) and resolved.exists(), (page.name, target)
    for page in ("README.md", "docs/engine.md", "docs/protocol.md"):
        assert "contract.md" in (ROOT / page).read_text(encoding="utf-8"), page


def test_the_extension_sections_show_how_to_build_for_a_local_server() -> None:
    for page in ("README.md", "docs/web.md"):
        text = (ROOT / page).read_text(encoding="utf-8")
        assert "conflictology extension --server http://127.0.0.1:8000" in text, page
