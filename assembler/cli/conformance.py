"""``assembler conformance``: the structural conformance suite's command line.

Input: ``[--format F] [--json]``.
Output: a table per format and rule (or JSON with ``--json``) on stdout and the exit
code (``assembler.exits``): 0 when every case passes, 1 when one fails, 2 on a usage
error. The suite and its cases: ``assembler.conformance``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from ..conformance import CaseResult, load_suite, run_suite
from ..exits import EXIT_INVALID, EXIT_OK, EXIT_PROBLEM

__all__ = ["main"]


def _table(results: list[CaseResult]) -> str:
    rows: dict[tuple[str, str], list[CaseResult]] = {}
    for r in results:
        rows.setdefault((r.format, r.topic), []).append(r)
    lines = [f"{'format':<20} {'topic':<36} {'cases':>5} {'passed':>6}"]
    for (fmt, topic), group in sorted(rows.items()):
        passed = sum(not r.problems for r in group)
        lines.append(f"{fmt:<20} {topic:<36} {len(group):>5} {passed:>6}")
    for r in results:
        for problem in r.problems:
            lines.append(f"FAIL {r.format} {r.id}: {problem}")
    passed = sum(not r.problems for r in results)
    lines.append(f"{passed} of {len(results)} cases passed")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="assembler conformance",
        description="Run the structural conformance suite (models/structure/) against fit.",
    )
    parser.add_argument("--format", action="append", dest="formats", metavar="FORMAT",
                        help="only this format (repeatable)")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the outcomes as JSON")
    try:
        options = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exit_:
        return EXIT_OK if exit_.code == 0 else EXIT_INVALID
    known = {suite["format"] for suite in load_suite()}
    for fmt in options.formats or []:
        if fmt not in known:
            print(f"error: --format: unknown format {fmt!r}; one of {sorted(known)}",
                  file=sys.stderr)  # fmt: skip
            return EXIT_INVALID
    results = run_suite(options.formats)
    if options.json:
        json.dump([{"format": r.format, "id": r.id, "topic": r.topic, "rule": r.rule,
                    "verdict": r.verdict, "problems": list(r.problems), "cuts": list(r.cuts)}
                   for r in results], sys.stdout, indent=1)  # fmt: skip
        print()
    else:
        print(_table(results))
    return EXIT_OK if all(not r.problems for r in results) else EXIT_PROBLEM
