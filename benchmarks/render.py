"""Render benchmarks: render time beside assemble time, and counter throughput.

Run: ``python -m benchmarks.render [--sizes 100 1000 10000] [--repeats 3]``.
Writes ``benchmarks/results/render.json`` and ``benchmarks/results/RENDER.md``.

* For each size, seeded requests from the generator (the shapes the main benchmarks
  use) get a content of ~200 bytes per form; ``assemble`` (declared costs) and the
  rendering of its bundle in each format are timed side by side in one process, the
  rendering as its own stage (``build_rendering``) so the ratio is render / assemble.
  Goal: rendering adds under 10% of assemble at 10k forms.
* Counting throughput of each counter on 1 MB of mixed prose, code and JSON; the
  tiktoken and tokenizers encodings are built here from that text (nothing is
  downloaded), so their speed is indicative of the libraries, not of a production
  vocabulary.
* ``os.getloadavg()`` before and after: this machine is shared, wall times are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from assembler import assemble, parse_request
from assembler.hunt.generate import Shape, generate
from assembler.model.rendering import RenderFormat
from assembler.render.counters import Counter, Utf8Bytes
from assembler.render.manifest import build_rendering

from .offline_tokenizers import PAT, train_hf, train_ranks, write_ranks

RESULTS = Path(__file__).resolve().parent / "results"
PROSE = "The backfill runs in batches of ten thousand rows so that locks stay short. "
CODE = 'def count(text: str) -> int:\n    return len(text.encode("utf-8"))\n'
JSON = '{"order": "4471", "items_cents": 5400, "damaged": false, "city": "Zürich"}\n'


def _request(size: int, seed: int) -> dict[str, Any]:
    req = generate(random.Random(seed), Shape.scale(size))
    rng = random.Random(seed)
    for c in req["candidates"]:
        c["content"] = "".join(rng.choice((PROSE, CODE, JSON)) for _ in range(3))
    return req


def _timed_render(size: int, repeats: int) -> dict[str, Any]:
    rows = []
    for seed in range(repeats):
        req = _request(size, seed)
        started = time.perf_counter()
        result = assemble(req, time_limit=10)
        assembled = time.perf_counter() - started
        parsed = parse_request(req)
        row: dict[str, Any] = {
            "seed": seed,
            "assemble_s": assembled,
            "selected": len(result.selected),
        }
        for fmt in RenderFormat:
            began = time.perf_counter()
            rendering = build_rendering(parsed, result, fmt, None)
            row[f"render_{fmt.value}_s"] = time.perf_counter() - began
            row["bytes"] = len(rendering.data)
        rows.append(row)
    summary = {"size": size, "runs": rows}
    summary["assemble_median_s"] = statistics.median(r["assemble_s"] for r in rows)
    for fmt in RenderFormat:
        key = f"render_{fmt.value}_s"
        summary[f"{key[:-2]}_median_s"] = statistics.median(r[key] for r in rows)
        summary[f"{key[:-2]}_ratio"] = statistics.median(r[key] / r["assemble_s"] for r in rows)
    return summary


def _mixed_megabyte() -> str:
    rng = random.Random(0)
    parts: list[str] = []
    size = 0
    while size < 1_000_000:
        part = rng.choice((PROSE, CODE, JSON))
        parts.append(part)
        size += len(part.encode("utf-8"))
    return "".join(parts)


def _counters(text: str, folder: Path) -> list[Counter]:
    counters: list[Counter] = [Utf8Bytes()]
    sample = text[:20_000]
    try:
        from assembler.render.counters import TiktokenCounter

        path = folder / "bench.tiktoken"
        ranks = train_ranks(sample, 300)
        write_ranks(path, ranks)
        name = f"bench-bpe-{len(ranks)}"
        counters.append(TiktokenCounter.from_file(path, name=name, pat_str=PAT))
    except ImportError:
        pass
    try:
        from assembler.render.counters import TokenizersCounter

        counters.append(TokenizersCounter(train_hf(sample, 2000), "bench-bpe-2000"))
    except ImportError:
        pass
    return counters


def _throughput(repeats: int) -> list[dict[str, Any]]:
    text = _mixed_megabyte()
    megabytes = len(text.encode("utf-8")) / 1e6
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for counter in _counters(text, Path(folder)):
            times = []
            for _ in range(repeats):
                began = time.perf_counter()
                tokens = counter.count(text)
                times.append(time.perf_counter() - began)
            best = statistics.median(times)
            rows.append(
                {
                    "counter": counter.name,
                    "version": counter.version,
                    "tokens": tokens,
                    "median_s": best,
                    "mb_per_s": megabytes / best,
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.render")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    sizes = [_timed_render(size, args.repeats) for size in args.sizes]
    counting = _throughput(args.repeats)
    report = {
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "cpus": os.cpu_count(),
        "sizes": sizes,
        "counting_1mb": counting,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "render.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    lines = [
        "# Render benchmarks",
        "",
        f"Load average before {load_before}, after {report['load_after']}"
        f" ({os.cpu_count()} cores).",
        "",
        "| forms | assemble (median) | render text | openai-chat | anthropic-messages"
        " | render / assemble (anthropic) | goal < 10% at 10k |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in sizes:
        ratio = s["render_anthropic-messages_ratio"]
        goal = ("met" if ratio < 0.10 else "not met") if s["size"] >= 10000 else ""
        lines.append(
            f"| {s['size']:,} | {s['assemble_median_s'] * 1e3:.1f} ms"
            f" | {s['render_text_median_s'] * 1e3:.2f} ms"
            f" | {s['render_openai-chat_median_s'] * 1e3:.2f} ms"
            f" | {s['render_anthropic-messages_median_s'] * 1e3:.2f} ms"
            f" | {ratio:.1%} | {goal} |"
        )
    lines += [
        "",
        "| counter (1 MB mixed prose, code, JSON) | tokens | median | MB/s |",
        "|---|---|---|---|",
    ]
    for c in counting:
        lines.append(
            f"| {c['counter']} {c['version']} | {c['tokens']:,}"
            f" | {c['median_s'] * 1e3:.1f} ms | {c['mb_per_s']:.1f} |"
        )
    (args.out / "RENDER.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
