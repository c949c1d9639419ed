"""The PostgreSQL of the tests: POSTGRES_URL, or the local trust-auth server; None where none answers."""

from __future__ import annotations

import os

LOCAL = "postgresql://postgres@127.0.0.1:5432/test"


def plain_postgres_url() -> str | None:
    url = os.environ.get("POSTGRES_URL") or LOCAL
    try:
        import psycopg

        psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"), connect_timeout=2).close()
    except Exception:
        return None
    return url
