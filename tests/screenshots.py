"""Regenerate the committed screenshots of the example scenes: ``python tests/screenshots.py``.

Input: the shipped examples (``models/examples``) and Debian's Chromium. Output:
``docs/explain/<example>.png`` (the top of each page, 1280 pixels wide, as the page
renders in a headless Chromium with scripting off), and the page of the README's
example itself (``docs/explain/review-migration.html``), which a newcomer can open.
"""

from __future__ import annotations

import io
import json
import shutil
import sys
import tempfile
from pathlib import Path

from chromium import Browser
from PIL import Image

import assembler
from assembler.explain.explanation import explain
from assembler.explain.html import render_html

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "explain"
# tall enough for the scene (header, capacity, categories) and the first tables
HEIGHT = 1500
# the one page kept beside the screenshots: the README links it
KEPT = "review-migration"


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    browser = Browser()
    pages = Path(tempfile.mkdtemp(prefix="explain-pages-"))
    try:
        page = browser.page(1280, HEIGHT, scripts=False)
        for example in sorted((ROOT / "models" / "examples").glob("*.json")):
            data = json.loads(example.read_text())
            result = assembler.assemble(data)
            assert assembler.verify(data, result) == []
            html = pages / f"{example.stem}.html"
            html.write_text(render_html(explain(data, result)), encoding="utf-8")
            if example.stem == KEPT:
                shutil.copyfile(html, OUT / html.name)
            page.load(html.as_uri())
            image = Image.open(io.BytesIO(page.screenshot())).convert("RGB")
            # a palette of 256 colours keeps the committed files small and sharp
            image.quantize(256, dither=Image.Dither.NONE).save(
                OUT / f"{example.stem}.png", optimize=True
            )
            print(f"wrote {OUT / example.stem}.png")
        page.close()
    finally:
        browser.close()
        shutil.rmtree(pages, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
