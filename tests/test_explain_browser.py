"""The inspector pages in a real headless Chromium (Debian's ``chromium`` package).

One browser is started for the module. Every shipped example and every corpus case
is explained, written to disk and opened from its ``file://`` URL with scripting
off; each page must make no network request but its own document, lay out the key
figures with the values of its result (budget, used, slack, value; for a refusal
over budget the mandatory closure and its excess), carry no script, and not
screenshot blank. Control pages show that the network and blank checks can fail.

When Chromium is missing these tests fail if the environment variable ``CI`` is set
(``.ci/run`` sets it, after installing the ``chromium`` package), and are skipped
with that message otherwise.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chromium import Browser, BrowserError, Page, figures_in
from conftest import BROWSER_MISSING, audited
from PIL import Image

import assembler
from assembler.explain.explanation import explain
from assembler.explain.html import render_html
from assembler.explain.limits import ExplainLimits
from assembler.ledger.cacheview import tokens

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "models" / "examples").glob("*.json"))
CASES = sorted((ROOT / "corpus").glob("*.json"))
# a rendered result shows its bytes too: one per format
RENDERED = {
    "rendered/review-migration": "text",
    "rendered/shared-resolver": "openai-chat",
    "rendered/agent-tool-call": "anthropic-messages",
}
PAGES = [
    *(f"example/{p.stem}" for p in EXAMPLES),
    *RENDERED,
    *(f"corpus/{p.stem}" for p in CASES),
]


def request_of(name: str) -> dict[str, Any]:
    kind, stem = name.split("/")
    if kind in ("example", "rendered"):
        data: dict[str, Any] = json.loads(
            (ROOT / "models" / "examples" / f"{stem}.json").read_text()
        )
        return data
    case: dict[str, Any] = json.loads((ROOT / "corpus" / f"{stem}.json").read_text())["request"]
    return case


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    try:
        started = Browser()
    except BrowserError as missing:
        message = f"{BROWSER_MISSING}: {missing}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message + " (set CI=1 to make this a failure)")
    try:
        yield started
    finally:
        started.close()


@pytest.fixture(scope="module")
def tab(browser: Browser) -> Iterator[Page]:
    """One tab, scripting off, reused for every page (each load starts a fresh document)."""
    page = browser.page(1280, 900, scripts=False)
    yield page
    page.close()


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, assembler.Result]]:
    """Every page, written once for the module: name -> (file, the result it explains)."""
    folder = tmp_path_factory.mktemp("pages")
    written = {}
    for name in PAGES:
        data = request_of(name)
        result = assembler.assemble(data, render=RENDERED.get(name))
        assert assembler.verify(data, result) == []
        if result.rendering is not None:
            assert assembler.verify_rendering(data, result, result.rendering) == []
        # the examples get the default counterfactuals; the corpus a smaller top
        top = 2 if name.startswith("corpus/") else 5
        explanation = explain(data, result, limits=ExplainLimits(top=top, audit=True))
        audited(explanation.counterfactuals)
        page = render_html(explanation)
        path = folder / (name.replace("/", "-") + ".html")
        path.write_text(page, encoding="utf-8")
        written[name] = (path, result)
    return written


def opened(browser: Browser, path: Path, *, scripts: bool = False) -> Page:
    page = browser.page(1280, 900, scripts=scripts)
    page.load(path.as_uri())
    return page


def blank(png: bytes) -> bool:
    """True when a screenshot shows (next to) nothing: one colour covers 99.5% of it."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    counts = image.getcolors(maxcolors=1 << 24) or []
    commonest = max(n for n, _ in counts)
    return commonest >= 0.995 * image.width * image.height


@pytest.mark.parametrize("name", PAGES)
def test_the_page_shows_its_figures_without_scripts_or_network(
    tab: Page, pages: dict[str, tuple[Path, assembler.Result]], name: str
) -> None:
    path, result = pages[name]
    tab.load(path.as_uri())
    assert tab.requests() == [path.as_uri()], "the page fetched something"
    dom = tab.dom()
    expected = {"budget": str(result.budget)}
    if result.status is assembler.Status.BUNDLE:
        expected |= {
            "used": str(result.cost),
            "slack": str(result.slack),
            "value": str(result.value),
        }
    refusal = result.refusal
    if refusal is not None and refusal.mandatory_cost is not None:
        expected |= {"mandatory": str(refusal.mandatory_cost), "excess": str(refusal.excess)}
    if result.rendering is not None:
        expected["rendered-bytes"] = str(len(result.rendering.data))
    expected |= cache_figures(name, result)
    assert figures_in(dom) == expected
    # laid out, not merely present: each figure has a box with an area
    boxes = tab.rendered("[data-figure]")
    assert len(boxes) == len(expected) and all(b["width"] > 0 < b["height"] for b in boxes)
    assert "<script" not in dom.lower()
    assert "does not establish that the material was" in dom
    assert not blank(tab.screenshot())


def cache_figures(name: str, result: assembler.Result) -> dict[str, str]:
    """A cache case's figures: what the page shows of the result's cache record, and the
    first previous block not kept (its index is the record's count of kept blocks)."""
    record = result.to_dict()["cache"]
    if record is None:
        return {}
    shown = {
        "cache-kept": f"{record['kept']} of {record['previous']}",
        "cache-read": str(record["read_tokens"]),
        "cache-written": str(record["written_tokens"]),
        "cache-uncached": str(record["uncached_tokens"]),
        "cache-price": tokens(record["price_micro"]),
        "blind-price": tokens(record["blind_price_micro"]),
        "value-given-up": str(record["value_given_up"]),
    }
    if not record["appended"]:
        shown["first-divergence"] = f"block {record['kept']}"
    return shown


def test_a_cache_case_shows_its_price_and_first_divergence(
    tab: Page, pages: dict[str, tuple[Path, assembler.Result]]
) -> None:
    path, _ = pages["corpus/cache-rewrite-medium"]
    tab.load(path.as_uri())
    dom = tab.dom()
    assert figures_in(dom)["cache-price"] == "2113.2"
    assert figures_in(dom)["first-divergence"] == "block 2"
    # the block the rewrite starts at, and why: the stale design document left out
    assert "not-selected" in dom and "doc-checkout-design" in dom
    assert tab.rendered("#cache") and not blank(tab.screenshot())


def test_a_page_reads_the_same_with_scripts_on(
    browser: Browser, pages: dict[str, tuple[Path, assembler.Result]]
) -> None:
    path, _ = pages["example/review-migration"]
    quiet, lively = opened(browser, path), opened(browser, path, scripts=True)
    try:
        assert figures_in(quiet.dom()) == figures_in(lively.dom())
        assert lively.requests() == [path.as_uri()]
    finally:
        quiet.close()
        lively.close()


def test_the_network_check_sees_a_fetch(browser: Browser, tmp_path: Path) -> None:
    # a control: the same check on a page that does fetch must fail
    path = tmp_path / "fetches.html"
    path.write_text('<!doctype html><p>x</p><img src="http://127.0.0.1:9/pixel.png">')
    page = opened(browser, path)
    try:
        assert "http://127.0.0.1:9/pixel.png" in page.requests()
    finally:
        page.close()


def test_the_blank_check_sees_a_blank_page(browser: Browser, tmp_path: Path) -> None:
    path = tmp_path / "blank.html"
    path.write_text("<!doctype html><title>nothing</title>")
    page = opened(browser, path)
    try:
        assert blank(page.screenshot())
    finally:
        page.close()


def test_the_page_escapes_what_the_request_says(browser: Browser, tmp_path: Path) -> None:
    hostile = '<img src="http://127.0.0.1:9/x.png" onerror="document.title=1">'
    data = {
        "task": {"id": "escape </title><b>", "budget": 100},
        "candidates": [
            {"id": hostile, "cost": 10, "relevance": 0.5, "content": "</style><script>x</script>"}
        ],
    }
    path = tmp_path / "hostile.html"
    explanation = explain(data, limits=ExplainLimits(top=1, audit=True))
    audited(explanation.counterfactuals)
    path.write_text(render_html(explanation), encoding="utf-8")
    page = opened(browser, path, scripts=True)
    try:
        assert page.requests() == [path.as_uri()]
        dom = page.dom()
        assert "<img" not in dom and "<b>" not in dom and "<script" not in dom
        assert page.call("Runtime.evaluate", {"expression": "document.title"})["result"][
            "value"
        ].startswith("explain escape </title><b>")
    finally:
        page.close()


def _recorded_page(tab: Page, ledger_path: Path) -> dict[str, str]:
    """The last compilation of the ledger explained, written, opened: its figures."""
    from assembler.explain.recorded import explain_recorded

    with assembler.Ledger(ledger_path, readonly=True) as ledger:
        explanation = explain_recorded(ledger, "last", limits=ExplainLimits(top=1, audit=True))
    audited(explanation.counterfactuals)
    path = ledger_path.with_suffix(".html")
    path.write_text(render_html(explanation), encoding="utf-8")
    tab.load(path.as_uri())
    assert tab.requests() == [path.as_uri()]
    return figures_in(tab.dom())


def test_a_recorded_page_shows_what_changed_since_the_previous_compilation(
    tab: Page, tmp_path: Path
) -> None:

    data = request_of("example/review-migration")
    results = []
    with assembler.Ledger(tmp_path / "run.db") as ledger:
        for budget in (4000, 3000):
            data["task"]["budget"] = budget
            results.append(assembler.assemble(data, ledger=ledger, render="text"))
            assert assembler.verify(data, results[-1]) == []
    shown = _recorded_page(tab, tmp_path / "run.db")
    before, after = results
    assert before.rendering is not None and after.rendering is not None
    old, new = before.rendering.data, after.rendering.data
    differs = next(i for i, (x, y) in enumerate(zip(old, new, strict=False)) if x != y)
    assert shown["token-delta"] == f"{after.cost - before.cost:+d}"
    assert shown["first-divergent-byte"] == str(differs)
    assert shown["used"] == str(after.cost) and shown["rendered-bytes"] == str(len(new))
    assert not blank(tab.screenshot())


def test_a_recorded_page_shows_what_the_provider_billed_and_where_it_missed(
    tab: Page, tmp_path: Path
) -> None:
    from assembler.cache import CacheSimulator, Call, blocks_of_rendering, cache_rules
    from assembler.cache.usage import record_result_usage

    system = {"id": "sys", "kind": "system", "cost": 1200, "relevance": 1.0,
              "required": True, "channel": "system", "content": "be brief"}  # fmt: skip
    user = {"id": "user", "kind": "user_turn", "turn": 0, "cost": 40, "relevance": 1.0,
            "required": True, "content": "fix it"}  # fmt: skip
    simulator = CacheSimulator(cache_rules("anthropic", "claude-sonnet-4-5"))
    with assembler.Ledger(tmp_path / "billed.db", session="agent") as ledger:
        for at, content in ((0.0, "be brief"), (30.0, "be briefer")):
            data = {"task": {"id": "billed", "budget": 4000},
                    "candidates": [{**system, "content": content}, user]}  # fmt: skip
            result = assembler.assemble(data, ledger=ledger, render="anthropic-messages")
            assert assembler.verify(data, result) == [] and result.rendering is not None
            cost = simulator.call(Call(at, blocks_of_rendering(result.rendering, ttl=300)))
            usage = {"input_tokens": cost.uncached, "cache_read_input_tokens": cost.read,
                     "cache_creation_input_tokens": cost.written}  # fmt: skip
            record_result_usage(ledger, result, usage, model="claude-sonnet-4-5",
                                provider="anthropic", at=at)  # fmt: skip
    shown = _recorded_page(tab, tmp_path / "billed.db")
    assert shown["billed-read"] == "0" and shown["billed-written"] == "1240"
    assert shown["cache-state"] == "miss" and shown["diverged-block"] == "0"
    assert shown["replayed-read"] == "0"
    assert tab.rendered("#billed") and not blank(tab.screenshot())
