"""The documentation says what the code does.

Checks that the tutorial's request compiles to exactly the table the tutorial shows;
that the README stays a front page (its length, its two set-up commands, the one CI
runs) and its architecture map names every layer ``tests/test_layout.py`` knows, and
the site's map every module; that the site's navigation names every page of
``docs/``; and that every release-note fragment in ``changelog.d/`` is named
``<issue>.<type>.md``; and that the built site browses from ``file://`` (every link
between its pages names a file). ``.ci/run`` builds the site in strict mode too.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_layout import LAYERS

from assembler.cli import main

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _blocks(text: str, language: str) -> list[str]:
    """The fenced blocks of ``text`` opened with ``language`` ("" for a bare fence)."""
    found, current, opened = [], [], None
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            if opened is None:
                opened, current = line[3:].strip(), []
                continue
            if opened == language:
                found.append("".join(current))
            opened = None
        elif opened is not None:
            current.append(line)
    return found


def test_the_tutorial_shows_what_its_request_gives(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = (DOCS / "tutorial.md").read_text(encoding="utf-8")
    request = json.loads(_blocks(page, "json")[0])
    path = tmp_path / "first.json"
    path.write_text(json.dumps(request))
    assert main(["compile", str(path), "--format", "text"]) == 0
    shown = next(block for block in _blocks(page, "") if block.startswith("BUNDLE"))
    assert capsys.readouterr().out == shown
    request["task"]["budget"] = 60
    path.write_text(json.dumps(request))
    assert main(["compile", str(path)]) == 1
    refusal = json.loads(capsys.readouterr().out)["refusal"]
    assert "mandatory closure 90 > budget 60, excess 30" in refusal["message"]


def test_the_adapters_guide_runs_every_format() -> None:
    page = (DOCS / "guides" / "adapters.md").read_text(encoding="utf-8")
    runnable = page.split("<!-- runnable -->\n```python\n")[1:]
    assert len(runnable) == 5  # chat, responses, anthropic, gemini, any model
    for block in runnable:
        exec(compile(block[: block.index("```")], "adapters.md", "exec"), {})


def test_the_readmes_fit_examples_run() -> None:
    (block,) = [b for b in _blocks(README, "python") if b.startswith("chat = [")]
    exec(compile("import assembler\n" + block, "README.md", "exec"), {})


def test_the_readme_is_a_front_page_with_the_set_up_commands() -> None:
    assert 150 <= len(README.splitlines()) <= 250
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    commands = _blocks(README, "sh")
    assert ci + "\n" in commands, "the README's test command is what .ci/run runs"
    # and the browser step before it, which .ci/run takes on a clean machine
    assert "apt-get install -y chromium postgresql\n" in commands
    assert "apt-get install -y -q chromium" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert any("assembler compile models/examples/" in block for block in commands)
    assert "-m unit --hypothesis-profile dev" in README


def test_the_readme_sample_output_is_the_real_output_abridged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = README[README.index("prints, abridged") :]
    sample = sample[sample.index("```\n") + 4 :]
    shown = [line for line in sample[: sample.index("```")].splitlines() if line.strip()]
    path = tmp_path / "review.json"
    path.write_text((ROOT / "models/examples/review-migration.json").read_text())
    assert main(["compile", str(path), "--format", "text"]) == 0
    real = iter(capsys.readouterr().out.splitlines())
    # every line shown is a line of the real output, in the same order
    missing = [line for line in shown if line != "  ..." and line not in real]
    assert missing == []


def test_the_readme_map_names_every_layer() -> None:
    block = README[README.index("## Architecture") :]
    block = block[block.index("```") : block.index("```", block.index("```") + 3)]
    named = {m.group(1) for m in re.finditer(r"^  (\w+)(?:/|\.py)", block, flags=re.M)}
    layers = {layer for layer in LAYERS if layer not in ("__main__", "__init__")}
    assert layers | {"verifiers"} == named


def test_the_site_map_names_every_module() -> None:
    page = (DOCS / "explanation" / "architecture.md").read_text(encoding="utf-8")
    words = set(re.findall(r"\w+", page))
    package = ROOT / "assembler"
    missing = [
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        if path.name not in ("__init__.py", "__main__.py") and path.stem not in words
    ]
    assert missing == []


def test_the_navigation_names_every_page() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = config[config.index("\nnav:") :]
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    # the mounted folders' pages too (docs/hooks/contract.py)
    pages |= {f"model/{p.name}" for p in (ROOT / "models").glob("*.md")}
    assert {page for page in pages if page not in nav} == set()
    # the results pages are one entry: the overview, which links every other one
    results = ROOT / "benchmarks" / "results"
    assert re.findall(r"performance/results/\S+", nav) == ["performance/results/README.md"]
    overview = (results / "README.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(([^)#]+\.md)\)", overview))
    assert {p.name for p in results.glob("*.md")} - linked == {"README.md"}


def test_the_navigation_leads_with_the_tutorial_and_the_guides() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    top = re.findall(r"^  - ([^:]+):", config[config.index("\nnav:") :], re.MULTILINE)
    assert top[:3] == ["Home", "Tutorial", "Guides"] and "Performance" in top
    assert not re.search(r"issue \d", config, re.IGNORECASE)


def test_release_note_fragments_are_named_by_issue_and_type() -> None:
    pattern = re.compile(r"\d+\.(added|changed|fixed|deprecated|removed)(\.\d+)?\.md")
    fragments = [p.name for p in (ROOT / "changelog.d").iterdir() if p.name != "README.md"]
    assert [name for name in fragments if not pattern.fullmatch(name)] == []


@pytest.mark.integration
def test_the_built_site_browses_from_files(tmp_path: Path) -> None:
    # opened from file:// (no server), a link to a folder shows a directory listing, not
    # its page: every link between pages must name a file that the build wrote
    import subprocess
    import sys
    from html.parser import HTMLParser

    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr

    class Links(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.found: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            for name, value in attrs:
                if name in ("href", "src") and value:
                    self.found.append(value)

    broken = []
    # 404.html is a web server's page, addressed from the site's root
    pages = sorted(p for p in site.rglob("*.html") if p.name != "404.html")
    assert len(pages) > 30
    for page in pages:
        parser = Links()
        parser.feed(page.read_text(encoding="utf-8"))
        for link in parser.found:
            target = link.split("#", 1)[0].split("?", 1)[0]
            if not target or re.match(r"[a-z]+:", target):
                continue  # an anchor on the page, or another site
            if not (page.parent / target).is_file():
                broken.append(f"{page.relative_to(site)} -> {link}")
    assert broken == []
