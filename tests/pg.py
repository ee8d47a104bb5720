"""The real PostgreSQL server of the ``postgres`` tier, and a fresh database per test.

CI (``.ci/run``) starts one server with initdb + pg_ctl and exports its URL as
``ASSEMBLER_TEST_POSTGRES``; without it, ``servers()`` starts one the same way in a
temporary folder (``benchmarks/pgserver.py``) and stops it when the tests end. Where
PostgreSQL or psycopg is missing, the tier skips with one line saying why, unless
``CI`` is set: there it fails, since CI must run it. Nothing is mocked: every test
talks to the server over loopback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[1]
if str(CHECKOUT) not in sys.path:
    sys.path.insert(0, str(CHECKOUT))

from benchmarks import pgserver  # noqa: E402


@dataclass
class Databases:
    """A running server: ``url`` to administer it, ``new()`` a fresh database's URL."""

    url: str
    # the server's log file, when it is known (the tests read it for what it must not say)
    log: str | None = None
    made: int = field(default=0)

    def new(self, prefix: str = "t") -> str:
        self.made += 1
        return pgserver.create_database(self.url, f"{prefix}_{os.getpid()}_{self.made}")


def _unavailable(reason: str) -> None:
    message = f"the postgres tier needs a PostgreSQL server: {reason}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message + " (set CI=1 to make this a failure)")


def servers() -> Iterator[Databases]:
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        _unavailable("psycopg is not installed (pip install -e '.[test]')")
    given = os.environ.get(pgserver.ENV)
    if given:
        yield Databases(given, os.environ.get(pgserver.ENV + "_LOG"))
        return
    if pgserver.binaries() is None:
        _unavailable(pgserver.ABSENT)
    try:
        server = pgserver.start()
    except RuntimeError as exc:
        _unavailable(str(exc))
    try:
        yield Databases(server.url, str(server.folder / "log"))
    finally:
        server.stop()
