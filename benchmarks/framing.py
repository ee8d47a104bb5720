"""What the lean framing saves: bytes and tokens of each rendering, before and after.

Run ``python -m benchmarks.framing``. Output: ``benchmarks/results/FRAMING.md`` and
``framing.json``: for the shipped examples that render and for agent transcripts
(``benchmarks.agentcases``, 40 and 120 rounds), the rendered text's UTF-8 bytes and
``o200k_base`` tokens under the framing of ``render_version`` 2's default (every item,
conversation turns included, in a provenance header and closing line), and under
version 3's choices (conversation turns as their content alone; the other items in
``provenance``, ``minimal`` or ``none``, the default), with the share of the bytes that
are framing (not an item's content nor the task's instruction and query text).

The version 2 text is rebuilt from the version 3 rendering: the layout's order did
not change, only the framing, so each item's content at its manifest offset is framed
again as version 2 framed it (``models/README.md`` section 14 of that version).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import assembler  # noqa: E402
from assembler.model.rendering import Rendering  # noqa: E402
from assembler.render.encodings import load_encoding  # noqa: E402
from benchmarks.agentcases import transcript  # noqa: E402
from benchmarks.machine import describe  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
EXAMPLES = ("agent-tool-call", "review-migration", "tool-results", "shared-resolver")
_QUOTE = json.JSONEncoder(ensure_ascii=False).encode


def _version_2(rendering: Rendering, request: dict[str, Any]) -> str:
    """The text version 2's default (provenance on every item) gave the same bundle."""
    by_id = {c["id"]: c for c in request["candidates"]}
    data = rendering.data
    pieces = sorted(
        [(i.offset, i.length, i.id) for i in rendering.manifest.items]
        + [(o, n, f"<{part}>") for part, o, n in rendering.manifest.envelope]
    )
    out: list[str] = []
    for offset, length, name in pieces:
        content = data[offset : offset + length].decode("utf-8")
        if name.startswith("<"):
            tag = name[1:-1]
            out.append(f"<{tag}>\n{content}\n</{tag}>\n")
            continue
        c = by_id[name]
        kind = c.get("kind", "system" if c.get("role") == "instruction" else "evidence")
        digest = next(i.content_sha256 for i in rendering.manifest.items if i.id == name)
        form = _QUOTE(c.get("form", "full"))
        header = (f"<item id={_QUOTE(name)} kind={_QUOTE(kind)} form={form}"
                  f" sha256={_QUOTE(digest)} bytes={length}>\n")  # fmt: skip
        out.append(header + content + ("" if kind == "tool_call" else "\n</item>\n"))
    return "".join(out)


def _cases() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for name in EXAMPLES:
        request = json.loads((ROOT / "models" / "examples" / f"{name}.json").read_text())
        if name != "agent-tool-call":  # the others ship without content: filled in
            for c in request["candidates"]:
                c.setdefault("content", f"payload of {c['id']}")
        out.append((name, request))
    for rounds in (40, 120):
        out.append((f"agent transcript, {rounds} rounds", transcript(rounds).request(rounds)))
    return out


def run() -> dict[str, Any]:
    counter = load_encoding("o200k_base")
    assert counter is not None
    rows = []
    for name, request in _cases():
        row: dict[str, Any] = {"case": name}
        for headers in ("none", "minimal", "provenance"):
            result = assembler.assemble(request, render="openai-chat", headers=headers)
            rendering = result.rendering
            assert rendering is not None
            text = rendering.text
            content = sum(i.length for i in rendering.manifest.items) + sum(
                n for _, _, n in rendering.manifest.envelope
            )
            row[headers] = {"bytes": len(rendering.data), "tokens": counter.count(text),
                            "framing_pct": round(100 * (len(rendering.data) - content)
                                                 / len(rendering.data), 1)}  # fmt: skip
            if headers == "provenance":
                before = _version_2(rendering, request)
                size = len(before.encode("utf-8"))
                row["v2 default"] = {"bytes": size, "tokens": counter.count(before),
                                     "framing_pct": round(100 * (size - content) / size, 1)}
        rows.append(row)
    return {"machine": describe(), "load": os.getloadavg()[0], "rows": rows}


def _markdown(report: dict[str, Any]) -> str:
    machine = report["machine"]
    lines = [
        "# Lean framing: bytes and tokens saved (render_version 3)",
        "",
        f"`python -m benchmarks.framing` on commit {machine.get('commit')}: each case rendered"
        " to `openai-chat` (the text is the same in every format), UTF-8 bytes and"
        " `o200k_base` tokens; framing is the share of the bytes that are not an item's"
        " content or the task's instruction and query. `v2 default`: every item, conversation"
        " turns included, framed with its provenance header (the default before); `none`"
        " is the default now (conversation turns as their content, other items with a line"
        " break).",
        "",
        "| case | v2 default | provenance | minimal | none (default) | saved by the default |",
        "|---|---|---|---|---|---|",
    ]
    for row in report["rows"]:
        cells = []
        for key in ("v2 default", "provenance", "minimal", "none"):
            cell = row[key]
            cells.append(f"{cell['bytes']:,} B / {cell['tokens']:,} tok ({cell['framing_pct']}%)")
        before, after = row["v2 default"], row["none"]
        fewer_bytes = before["bytes"] - after["bytes"]
        fewer_tokens = before["tokens"] - after["tokens"]
        saved = (f"{fewer_bytes:,} B ({100 * fewer_bytes / before['bytes']:.0f}%),"
                 f" {fewer_tokens:,} tokens ({100 * fewer_tokens / before['tokens']:.0f}%)")
        lines.append(f"| {row['case']} | " + " | ".join(cells) + f" | {saved} |")
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    report = run()
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "framing.json").write_text(json.dumps(report, indent=1) + "\n")
    (RESULTS / "FRAMING.md").write_text(_markdown(report))
    print(_markdown(report))
    agent = next(r for r in report["rows"] if r["case"] == "agent-tool-call")
    return 0 if agent["none"]["framing_pct"] < 10 else 1


if __name__ == "__main__":
    raise SystemExit(main())
