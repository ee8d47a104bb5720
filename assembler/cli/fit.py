"""``assembler fit BODY.json``: a provider body fitted to a model's budget, from any language.

Input: the arguments after ``fit``: a provider body (any provider API's; or a bare
message list with ``--model``) in a file or on
standard input (``-``), and ``fit``'s options. Output: the fitted body as JSON on
stdout, ready to send (``--report``: ``{"exit", "body", "fit": {tokens, budget,
dropped, shortened, ...}}``), one summary line on stderr, and an exit code: 0 fitted,
1 refused (the required material does not fit: one line on stderr saying by how
much), 3 undecided, 2 invalid input or usage (one line naming the field), 4 a failure
of the assembler itself (``cli.main``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from ..exits import EXIT_BUNDLE, EXIT_INVALID
from ..model.errors import AssemblerError, InternalError
from .arguments import CommandParser, UsageError, add_limit_options, limits_of, read_request

__all__ = ["fit_command"]


def _fit_parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="assembler fit",
        description="Fit a provider body (or a message list) to a model's token budget: the"
        " most valuable part of the conversation that fits, as the same kind of body.",
        epilog="exit codes: 0 fitted, 1 refused, 2 invalid input or usage, 3 undecided,"
        " 4 internal error (a bug: please report it)",
    )
    parser.add_argument("body", help="the body's JSON file, or - for standard input")
    parser.add_argument("--model", help="the model (default: the body's own 'model' field)")
    parser.add_argument(
        "--budget", help="tokens for the whole body (default: the window less the output reserved)"
    )
    parser.add_argument(
        "--output-tokens",
        help="tokens reserved for the reply (default: the body's max_tokens, ...)",
    )
    parser.add_argument(
        "--window", help="the model's context window (an unknown model's, with --counter)"
    )
    parser.add_argument("--format", help="the model's API when it has several (its format name)")
    parser.add_argument(
        "--source", help="the body's format when it is another provider's: convert it"
    )
    parser.add_argument(
        "--counter", help="count with this counter (o200k_base, utf8-bytes, ctok, ...)"
    )
    parser.add_argument(
        "--elide-above", help="tool results above this many tokens may be shortened"
    )
    parser.add_argument(
        "--answers-alone", action="store_true",
        help="allow an answer to be kept without the question it answers",
    )  # fmt: skip
    parser.add_argument("--time-limit", help="seconds the search may take")
    parser.add_argument(
        "--report", action="store_true",
        help="print {exit, body, fit: {tokens, budget, dropped, shortened, ...}}, not the body",
    )  # fmt: skip
    add_limit_options(parser, "size limits on the body")
    return parser


def fit_command(argv: Sequence[str]) -> int:
    from ..serve.fitted import fitted_json, options_of

    args = _fit_parser().parse_args(list(argv))
    try:
        limits = limits_of(args)
        given = {name: getattr(args, name) for name in (
            "model", "budget", "output_tokens", "window", "format", "source", "counter",
            "elide_above", "time_limit",
        )}  # fmt: skip
        given["answers_with_questions"] = "false" if args.answers_alone else None
        options = options_of(given)
        code, answer = fitted_json(
            read_request(args.body, limits.max_request_bytes), options, limits
        )
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except AssemblerError as exc:
        if isinstance(exc, InternalError):
            raise
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    if code != EXIT_BUNDLE:
        print(f"refused: {answer['refused']}", file=sys.stderr)
        if args.report:
            print(json.dumps(answer, ensure_ascii=False))
        return code
    about = answer["fit"]
    print(json.dumps(answer if args.report else answer["body"], ensure_ascii=False))
    print(
        f"fit: {about['format']} for {about['model']}: {about['tokens']} of {about['budget']}"
        f" tokens ({about['counter']}), {len(about['dropped'])} left out,"
        f" {len(about['shortened'])} shortened",
        file=sys.stderr,
    )
    return EXIT_BUNDLE
