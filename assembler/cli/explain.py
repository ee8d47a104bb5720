"""``assembler explain FILE``, ``assembler explain RESULT.json --request REQUEST.json``,
or ``assembler explain --ledger PATH ID``: inspect one compilation.

Input: the arguments after ``explain``. Output: the terminal report on stdout, with
``--html OUT.html`` also the self-contained inspector page, and an exit code: 0 when
the compilation was explained (whatever its status), 2 for invalid input or usage
(one line on stderr, never a traceback).

FILE is a request or a result, read from the document itself: a request (a ``task``
and ``candidates``, given alone) is compiled first, with the counterfactuals' exact
strategy; a result needs ``--request`` naming the request it answers (and a request
may come as ``--request`` alone). ``-`` reads FILE from standard input, so ``assembler
compile R.json | assembler explain - --request R.json`` works. With ``--ledger PATH ID``
the recorded request and result are explained (the ledger is opened read-only) and
compared with the previous compilation of the session, or with ``--against ID``; the
report then ends with the same diff as ``assembler ledger diff``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence

from ..exits import EXIT_BUNDLE, EXIT_INVALID
from ..explain.explanation import Explanation
from ..explain.limits import ExplainLimits
from ..model.errors import AssemblerError
from ..model.lookalikes import is_request
from ..model.rendering import RenderFormat
from ..settings import Settings
from .arguments import CommandParser, UsageError, positive_float, positive_int, read_request

__all__ = ["explain_command"]


def _explain_parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="assembler explain",
        description=(
            "Inspect a compilation: where the budget went, what was kept out and why, and"
            " exact counterfactuals, each figure with its proof status."
        ),
    )
    parser.add_argument(
        "result",
        nargs="?",
        metavar="FILE",
        help="a request (compiled, then explained) or a result (with --request); - for"
        " standard input",
    )
    parser.add_argument(
        "--request", metavar="REQUEST.json", help="the request a result FILE answers"
    )
    parser.add_argument(
        "--ledger",
        nargs=2,
        metavar=("PATH", "ID"),
        help="explain compilation ID (a number, or last) recorded in the ledger at PATH",
    )
    parser.add_argument(
        "--against",
        metavar="ID",
        help="with --ledger: compare with this compilation (default: the session's previous)",
    )
    parser.add_argument("--html", metavar="OUT.html", help="also write the inspector page")
    parser.add_argument(
        "--counterfactuals",
        type=int,
        default=5,
        metavar="N",
        help="questions of each kind, most valuable first (0 turns them off; default 5)",
    )
    parser.add_argument(
        "--figure-limit",
        type=positive_float,
        default=2.0,
        metavar="SEC",
        help="seconds for each counterfactual figure (default 2)",
    )
    parser.add_argument(
        "--time-limit",
        type=positive_float,
        default=30.0,
        metavar="SEC",
        help="seconds for all counterfactuals together (default 30)",
    )
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=None,
        metavar="N",
        help="solver searches for each counterfactual's solve (default 1)",
    )
    parser.add_argument(
        "--render",
        choices=[f.value for f in RenderFormat],
        default=None,
        help="without RESULT: compile with a rendering in this format (shown on the page)",
    )
    return parser


def _write(path: str, text: str) -> None:
    """Write the page whole or not at all: a reader never opens half a page."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".explain-", suffix=".html")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except OSError as exc:
        os.unlink(temporary)
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None


def _from_files(args: argparse.Namespace, limits: ExplainLimits) -> Explanation:
    from ..explain.explanation import explain
    from ..model.parse import request_from_json

    if args.against is not None:
        raise UsageError("--against compares recorded compilations: it needs --ledger")
    if args.result == "-" and args.request == "-":
        raise UsageError("the result and the request cannot both come from standard input")
    result = None
    if args.result is None:
        request = request_from_json(read_request(args.request))
    else:
        data = read_request(args.result)
        try:
            document = json.loads(data)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{args.result} is not JSON: {exc}") from None
        if is_request(document):
            if args.request is not None:
                raise UsageError(
                    f"{args.result} is a request: give it alone (it is compiled first), or"
                    " give the result that answers --request"
                )
            request = request_from_json(data)
        else:
            if args.request is None:
                raise UsageError(
                    f"{args.result} is a result: give the request it answers with --request"
                )
            if args.render is not None:
                raise UsageError("--render compiles the request: give no result with it")
            request = request_from_json(read_request(args.request))
            result = document
    return explain(request, result, limits=limits, render=args.render)


def _from_ledger(args: argparse.Namespace, limits: ExplainLimits) -> Explanation:
    from ..explain.recorded import explain_recorded
    from ..ledger import Ledger

    if args.result is not None or args.request is not None or args.render is not None:
        raise UsageError(
            "--ledger explains a recorded compilation: give no FILE, --request or --render with it"
        )
    path, ref = args.ledger
    with Ledger(path, readonly=True) as ledger:
        return explain_recorded(ledger, ref, args.against, limits=limits)


def explain_command(argv: Sequence[str]) -> int:
    from ..explain.html import render_html
    from ..explain.text import render_report
    from .ledger import _diff_text

    parser = _explain_parser()
    args = parser.parse_args(argv)
    if args.counterfactuals < 0:
        parser.error(f"--counterfactuals must be 0 or more, not {args.counterfactuals}")
    if args.ledger is None and args.request is None and args.result is None:
        parser.error("give a request or a result FILE (with --request), or --ledger PATH ID")
    try:
        limits = ExplainLimits(
            top=args.counterfactuals,
            per_figure=args.figure_limit,
            total=args.time_limit,
            settings=Settings(workers=args.workers),
        )
        if args.ledger is not None:
            explanation = _from_ledger(args, limits)
        else:
            explanation = _from_files(args, limits)
        if args.html:
            _write(args.html, render_html(explanation))
    except (UsageError, AssemblerError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except BrokenPipeError:
        raise  # the reader of stdout left (``| head``): not a problem with the input
    except OSError as exc:
        # without --ledger, an OSError need not carry a file name
        name = exc.filename or (args.ledger[0] if args.ledger else "")
        print(f"error: {name}: {exc.strerror}" if name else f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    sys.stdout.write(render_report(explanation))
    if explanation.comparison is not None:
        # the ledger's own diff, as `assembler ledger diff` prints it
        sys.stdout.write("\n" + _diff_text(explanation.comparison))
    if args.html:
        print(f"wrote {args.html}", file=sys.stderr)
    return EXIT_BUNDLE
