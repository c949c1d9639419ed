"""Several processes started together on a fresh database (the usual way a scaled deployment
boots): each creates the tables if they are missing, and none fails because another one won."""

from __future__ import annotations

import threading
from pathlib import Path

from conflictology.server.store import Store


def _boot(url: str, barrier: threading.Barrier, stores: list[Store], errors: list[BaseException]) -> None:
    barrier.wait()
    try:
        stores.append(Store(url))
    except BaseException as exc:  # collected: the test's assertion names it
        errors.append(exc)


def test_stores_created_at_the_same_moment_on_a_fresh_database(tmp_path: Path) -> None:
    for attempt in range(5):
        url = f"sqlite:///{tmp_path / f'fresh{attempt}.sqlite3'}"
        barrier = threading.Barrier(6)
        errors: list[BaseException] = []
        stores: list[Store] = []
        threads = [threading.Thread(target=_boot, args=(url, barrier, stores, errors)) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        assert errors == []
        stores[0].save_rooms([{"code": "AAAAA", "version": 1, "status": "lobby", "updated": 1.0}])
        assert [s["code"] for s in stores[-1].load_rooms()] == ["AAAAA"]
        for s in stores:
            s.close()
