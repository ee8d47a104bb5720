"""``assembler cache plan SESSION.json``: the clairvoyant limit of a session.

Input: the arguments after ``cache``: ``plan``, a session file (``-`` reads stdin:
``{"provider", "model"?, "format"?, "calls": [{"at", "request"}, ...]}``, every call's
whole request with its relevance, as a planner that knew the future would have them),
``--exact`` / ``--bound`` (force one; by default exact when the session is small enough),
``--json``.
Output: per value level (a share of the cache-blind optimum's value), the least price
the simulator can charge for the whole session (exact) or a proven lower bound on it,
with the cache-blind policy's value and price; exit 0. Invalid input is one line
naming the field (``calls[2].request.task.budget``) and exit 2; ``--exact`` on a
session too large to enumerate is exit 2 too.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from ..exits import EXIT_BUNDLE, EXIT_INVALID
from ..model.errors import InvalidRequest
from .arguments import CommandParser

__all__ = ["cache_command"]


def cache_command(argv: Sequence[str]) -> int:
    parser = CommandParser(
        prog="assembler cache",
        description="The clairvoyant limit of a session: the least price at each value.",
    )
    sub = parser.add_subparsers(dest="action", required=True)
    planned = sub.add_parser("plan", help="the least price of a session at each value level")
    planned.add_argument("session", help="the session's JSON file (- reads stdin)")
    kind = planned.add_mutually_exclusive_group()
    kind.add_argument("--exact", action="store_true", help="enumerate, or fail when too large")
    kind.add_argument("--bound", action="store_true", help="only the proven lower bound")
    planned.add_argument("--json", action="store_true", help="print the plan as JSON")
    args = parser.parse_args(argv)
    from ..cacheplan import PlanTooLarge, load, plan

    try:
        text = sys.stdin.read() if args.session == "-" else Path(args.session).read_text("utf-8")
    except OSError as error:
        print(f"error: cannot read {args.session}: {error.strerror}", file=sys.stderr)
        return EXIT_INVALID
    try:
        session = load(text)
        found = plan(session, exact=True if args.exact else False if args.bound else None)
    except (InvalidRequest, PlanTooLarge) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_INVALID
    if args.json:
        print(json.dumps(found.to_dict(), indent=1))
        return EXIT_BUNDLE
    kind_text = "exact" if found.exact else "proven lower bound"
    print(f"LIMIT ({kind_text}), {session.rules.provider.value} {session.rules.family},"
          f" {len(session.times)} calls")  # fmt: skip
    print(f"cache-blind policy: value {found.blind_value}, price {found.blind_price:,.1f}")
    print("value share   value        least price")
    for share, value, price in found.levels:
        shown = "none reaches it" if price == float("inf") else f"{price:,.1f}"
        print(f"{share:>10.0%}   {value:<12} {shown}")
    return EXIT_BUNDLE
