"""Shared fixtures and helpers for the test suite, and its tiers.

Every test is in one tier, a pytest marker registered in ``pyproject.toml``: a test
marked with a tier keeps it, any other takes its module's (``TIERS``), and a module
not listed is ``unit``. ``python -m pytest -q`` runs every tier (what CI runs);
``python -m pytest -q -m unit --hypothesis-profile dev`` is the quick run while
developing. The Hypothesis profiles are ``tests/profiles.py``.
"""

from __future__ import annotations

from typing import Any

import profiles  # noqa: F401  (registers and loads the Hypothesis profiles)
import pytest

import assembler
from assembler import pipeline
from assembler.strategies import EXACT_STRATEGIES

# Strategies whose every bundle must be legal; the other baselines (top-k, weighted,
# dump) break rules by design, and the corpus table counts how.
_LEGAL_BY_DESIGN = frozenset({*EXACT_STRATEGIES, "greedy"})


def judged_request(request: Any, result: assembler.Result, counter: Any) -> Any:
    """What a result answers: the request, or with a token counter the priced request
    (models/README.md section 14)."""
    if counter is None:
        return request
    from assembler.model.rendering import DEFAULT_HEADERS, Headers
    from assembler.render import priced_request

    parsed = request if isinstance(request, assembler.Request) else assembler.parse_request(request)
    rendering = result.rendering
    framing = DEFAULT_HEADERS if rendering is None else Headers(rendering.manifest.headers)
    return priced_request(parsed, counter, result.budget, headers=framing)


def check(judged: Any, result: assembler.Result, render: Any = None) -> None:
    """The independent verifier on ``result`` (and the render verifier on its rendering);
    ``render``: the format it was assembled for, whose rules its bundle keeps."""
    assert assembler.verify(judged, result, render=render) == [], result.to_dict()
    if result.rendering is not None:
        assert assembler.verify_rendering(judged, result, result.rendering) == []


def judged_by_hook(strategy: str) -> bool:
    """Whether every answer of ``strategy`` already passes ``check`` on its way out."""
    return strategy in _LEGAL_BY_DESIGN


def judge(
    request: assembler.Request, settings: assembler.Settings, result: assembler.Result
) -> None:
    """Every answer the suite produces, from ``assemble()`` or a session, through the
    independent verifier (and its rendering through the render verifier)."""
    if not judged_by_hook(settings.strategy):
        return
    try:
        check(judged_request(request, result, settings.counter), result, settings.render)
    except assembler.RequestTooLarge:
        return  # above the verifier's default size limit: the benchmarks judge those


# module -> tier, for the modules whose every test is in one tier other than unit
TIERS = {
    # real server processes over loopback (JSON lines and HTTP), faults and soaks
    "test_serve": "server",
    "test_serve_faults": "server",
    "test_serve_soak": "server",
    "test_serve_pressure": "server",
    # headless Chromium over the DevTools protocol
    "test_explain_browser": "browser",
    # Dask clusters: LocalCluster and real scheduler / worker processes
    "test_engines": "cluster",
    # the built wheel in a fresh virtual environment outside the checkout
    "test_wheel": "wheel",
    # a real PostgreSQL server (initdb + pg_ctl, or the one .ci/run started)
    "test_ledger_postgres": "postgres",
    "test_fleet": "postgres",
    # real processes and pools, the benchmarks' smoke runs, stages at scale
    "test_scaling": "integration",
    "test_adversarial": "integration",
    "test_explain_cli": "integration",
    "test_hunt": "integration",
    "test_sweep": "integration",
    "test_ledger_cli": "integration",
    "test_ledger_processes": "integration",
    "test_benchmarks": "integration",
    "test_session_benchmark": "integration",
    "test_cache_benchmark": "integration",
    "test_ledger_benchmark": "integration",
    "test_peers_benchmark": "integration",
}
TIER_NAMES = ("unit", "integration", "server", "browser", "cluster", "wheel", "postgres")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if any(item.get_closest_marker(name) for name in TIER_NAMES):
            continue
        module = item.module.__name__ if item.module is not None else ""
        item.add_marker(getattr(pytest.mark, TIERS.get(module.rpartition(".")[2], "unit")))


# what a browser test's skip says when Chromium is missing (test_explain_browser.py)
BROWSER_MISSING = "the browser tests need Chromium"


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> Any:
    """Said aloud, in one line after the summary: the browser tier did not run for want
    of Chromium (with ``CI`` set it fails instead: ``.ci/run`` installs the browser)."""
    yield
    skipped = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if BROWSER_MISSING in str(getattr(report, "longrepr", ""))
    ]
    if skipped:
        terminalreporter.write_line(
            f"THE BROWSER TIER DID NOT RUN: {len(skipped)} browser tests skipped, Chromium is"
            " missing (apt-get install -y chromium, as .ci/run does; CI=1 makes this a"
            " failure)",
            red=True,
            bold=True,
        )


# every answer, from ``assemble()`` or a session, is made by ``pipeline.run``: none
# escapes the verifier, and none is judged twice
pipeline.add_audit_hook(judge)


def request(budget: int = 1000, **task: Any) -> dict[str, Any]:
    """A minimal request dict; add candidates with ``form(...)``."""
    return {"task": {"id": "t", "budget": budget, **task}, "candidates": []}


def form(id: str, cost: int, relevance: float = 0.5, **fields: Any) -> dict[str, Any]:
    return {"id": id, "cost": cost, "relevance": relevance, **fields}


def solve(req: dict[str, Any], strategy: str = "exact", **kw: Any) -> assembler.Result:
    """Assemble and always pass the result through the independent verifier (and its
    rendering, when there is one, through the render verifier)."""
    result = assembler.assemble(req, strategy=strategy, **kw)
    if not judged_by_hook(strategy):
        check(judged_request(req, result, kw.get("counter")), result, kw.get("render"))
    return result


def audited(answers: Any) -> None:
    """Every bundle a counterfactual produced (kept by ``Limits(audit=True)``) passes
    the independent verifier, against the derived request it answers."""
    assert answers.limits.audit, "explain with Limits(audit=True) to verify its bundles"
    for derived, answer in answers.audited:
        assert assembler.verify(derived, answer) == [], answer.to_dict()


@pytest.fixture
def make_request() -> Any:
    return request


@pytest.fixture(scope="session")
def postgres() -> Any:
    """A real PostgreSQL server for the ``postgres`` tier (``tests/pg.py``): skipped
    with its reason where there is none, except under CI."""
    import pg

    yield from pg.servers()


@pytest.fixture
def postgres_url(postgres: Any) -> str:
    """The URL of a fresh, empty database on that server."""
    url: str = postgres.new()
    return url
