"""Counting as billed in the base install: what the shipped encodings cost and count.

Run ``python -m benchmarks.counting`` (needs the ``test`` extra for ``bpe-openai``, the
official ranks files, as the reference). Output: ``benchmarks/results/COUNTING.md``
and ``counting.json``: the size on disk of the shipped compact ranks against the
packages that could have carried them, the time to load each encoding (from the
shipped file, and from the official file as ``bpe-openai`` ships it), the counting
speed, and the count of every text of 100 seeded transcripts per OpenAI format by
the shipped encoding against the encoding built from the official file (the goal:
equal on every text).
"""

from __future__ import annotations

import argparse
import base64
import gzip
import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from assembler.render import encodings  # noqa: E402
from benchmarks.machine import describe  # noqa: E402
from benchmarks.transcripts import openai_transcript, responses_body  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def _size(module: str) -> int:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None
    folder = Path(spec.origin).parent
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _official(name: str) -> Any:
    import tiktoken

    spec = importlib.util.find_spec("bpe_openai")
    assert spec is not None and spec.origin is not None
    data = gzip.decompress((Path(spec.origin).parent / "data" / f"{name}.tiktoken.gz").read_bytes())
    ranks = {base64.b64decode(t): int(r) for t, r in (line.split() for line in data.splitlines())}
    _, _, pattern, special = encodings.ENCODINGS[name]
    return tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=special)


def _texts(count: int) -> list[str]:
    texts: list[str] = []
    for seed in range(count):
        messages, _ = openai_transcript(seed, 6 + seed % 15)
        texts += [m["content"] for m in messages if isinstance(m.get("content"), str)]
        texts += [i.get("output", "") for i in responses_body(seed, 6)["input"]
                  if isinstance(i.get("output"), str)]  # fmt: skip
    # beyond the seeded English: code, CJK, emoji, special-token look-alikes
    texts += ["def f(x):\n    return x ** 2  # 平方", "東京都の天気は晴れです 🌤️", "<|endoftext|> x",
              "   indented\n\n\n\ttabs", "ünïcödé ñ façade"]  # fmt: skip
    return texts


def run(count: int) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    texts = _texts(count)
    for name in ("o200k_base", "cl100k_base"):
        encodings.load_encoding.cache_clear()
        started = time.perf_counter()
        shipped = encodings.load_encoding(name)
        shipped_load = time.perf_counter() - started
        assert shipped is not None
        started = time.perf_counter()
        official = _official(name)
        official_load = time.perf_counter() - started
        unequal = sum(shipped.count(t) != len(official.encode(t, disallowed_special=()))
                      for t in texts)  # fmt: skip
        started = time.perf_counter()
        total = sum(shipped.count(t) for t in texts)
        seconds = time.perf_counter() - started
        ranks = Path(encodings.__file__).parent / "ranks" / f"{name}.ranks.xz"
        rows[name] = {
            "shipped_bytes": ranks.stat().st_size,
            "official_bytes": len(encodings.official_text(encodings.shipped_ranks(name))),
            "load_shipped_ms": round(1000 * shipped_load, 1),
            "load_official_gz_ms": round(1000 * official_load, 1),
            "texts": len(texts),
            "tokens": total,
            "unequal_counts": unequal,
            "tokens_per_second": round(total / seconds),
        }
    return {
        "machine": describe(),
        "load": os.getloadavg()[0],
        "encodings": rows,
        "packages_bytes": {"tiktoken": _size("tiktoken"), "regex": _size("regex"),
                           "bpe_openai": _size("bpe_openai")},
    }


def _markdown(report: dict[str, Any]) -> str:
    machine, sizes = report["machine"], report["packages_bytes"]
    mib = 1024 * 1024
    lines = [
        "# Counting as billed in the base install",
        "",
        f"`python -m benchmarks.counting` on commit {machine.get('commit')}, {machine.get('cpu')},"
        f" load average {report['load']:.2f}.",
        "",
        "The base install counts OpenAI models with their real encodings: the official ranks"
        " files are shipped in the wheel as xz-compressed tokens in rank order"
        " (`assembler/render/ranks/`, rebuilt byte for byte into the official files by"
        " `tests/test_registry.py`) and encoded by `tiktoken`, now a base dependency."
        f" Installed sizes: tiktoken {sizes['tiktoken'] / mib:.1f} MiB and its `regex`"
        f" {sizes['regex'] / mib:.1f} MiB, against `bpe-openai` (which shipped the official files"
        f" before) {sizes['bpe_openai'] / mib:.1f} MiB. Chosen: the shipped ranks with tiktoken,"
        " OpenAI's own implementation of these encodings, so that the counts are the billed"
        " ones by construction; a pure-Python BPE over the same ranks would need no"
        " dependency, but would be a second implementation to prove equal, and was not"
        " built.",
        "",
        "| encoding | shipped | official file | load (shipped) | load (official .gz) | texts |"
        " counts unequal to the official encoding | tokens / s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, row in report["encodings"].items():
        lines.append(
            f"| {name} | {row['shipped_bytes'] / mib:.2f} MiB | {row['official_bytes'] / mib:.2f}"
            f" MiB | {row['load_shipped_ms']} ms | {row['load_official_gz_ms']} ms |"
            f" {row['texts']} | {row['unequal_counts']} | {row['tokens_per_second']:,} |"
        )
    lines += [
        "",
        "Claude and Gemini publish no tokenizer that runs here: their counts are estimates,"
        " named as such in `Fitted.counter` (`estimate:tiktoken:o200k_basex1.25`,"
        " `...x1.1`), with the bound `assembler/facts/` states (billed / estimated in"
        " [0.8, 1.2]). That bound is stated, not measured: no Claude or Gemini tokenizer and"
        " no network to their APIs were available. `Fitted.record_usage` measures it on each"
        " billed call, and `fit(ledger=...)` scales by the largest recorded ratio.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.counting")
    parser.add_argument("--transcripts", type=int, default=100)
    report = run(parser.parse_args(argv).transcripts)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "counting.json").write_text(json.dumps(report, indent=1) + "\n")
    (RESULTS / "COUNTING.md").write_text(_markdown(report))
    print(_markdown(report))
    return 0 if all(r["unequal_counts"] == 0 for r in report["encodings"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
