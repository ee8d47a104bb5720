"""``assembler compile REQUEST.json``: assemble the bundle for one request.

Input: the arguments after ``compile``. Output: the result as JSON (or the text
table with ``--format text``; the rendered model input with ``--render FORMAT``, or
its manifest with ``--manifest``) on stdout and an exit code: 0 bundle, 1 refused,
3 undecided, 2 invalid input or usage (one line on stderr naming the field and the
candidate; never a traceback), or a ledger that cannot be opened or written, 4 a
failure of the assembler itself (``cli.main``).

``--ledger PATH`` records the compilation (``assembler.Ledger``): the request before
solving, then its outcome (with the rendered bytes and manifest under ``--render``);
an invalid request is recorded as ``failed``.

The request is read no further than ``--max-request-bytes``: a larger file or stream
is refused before it is held in memory, let alone parsed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..exits import EXIT, EXIT_INVALID
from ..model.arguments import MAX_WORKERS
from ..model.errors import AssemblerError, InternalError, SolverError
from ..model.rendering import DEFAULT_HEADERS, Headers, RenderFormat
from ..strategies import STRATEGIES
from .arguments import (
    CommandParser,
    UsageError,
    add_limit_options,
    bounded_int,
    limits_of,
    positive_float,
    read_request,
)

if TYPE_CHECKING:
    from ..render.counters import Counter

__all__ = ["compile_command"]


def _compile_parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="assembler compile",
        description="Assemble the bundle for a request.",
        epilog="exit codes: 0 bundle, 1 refused, 2 invalid input or usage, 3 undecided,"
        " 4 internal error (a bug: please report it)",
    )
    parser.add_argument("request", help="request JSON file, or - for standard input")
    # the call's settings: an option per field of Settings, named as the field
    for name, spec in setting_options().items():
        parser.add_argument("--" + name.replace("_", "-"), dest=name, **spec)
    parser.add_argument(
        "--format",
        choices=("json", "text"),
        default="json",
        help="json: the result document (default); text: the admitted and rejected"
        " candidates with their reasons",
    )
    parser.add_argument(
        "--manifest", action="store_true", help="with --render: print the manifest instead"
    )
    parser.add_argument(
        "--model",
        metavar="NAME",
        help="with --render: count costs as this model bills them (its tokenizer, or a"
        " calibrated estimate) and refuse a budget above its input window",
    )
    parser.add_argument("--session", metavar="KEY", help="the ledger session (default: task id)")
    add_limit_options(parser, "size limits (defaults in parentheses)")
    return parser


def setting_options() -> dict[str, dict[str, Any]]:
    """How the command line reads each setting, by its ``Settings`` field (``limits`` is
    a group of its own, ``add_limit_options``): its option is ``--`` and the field's
    name."""
    return {
        "strategy": dict(
            default="exact",
            choices=sorted(STRATEGIES),
            help="how the bundle is chosen: exact (the default, proven optimal) or a"
            " baseline to compare with",
        ),
        "time_limit": dict(
            type=positive_float,
            default=None,
            metavar="SEC",
            help="seconds for the whole call, parsing included (default 10); at the limit"
            " the best legal bundle found so far, with its gap, or exit 3 undecided",
        ),
        "workers": dict(
            type=bounded_int(1, MAX_WORKERS),
            default=None,
            metavar="N",
            help=f"solver searches raced on a long solve, 1 to {MAX_WORKERS} (default 1);"
            " the answer is the same for every N",
        ),
        "render": dict(
            choices=[f.value for f in RenderFormat],
            default=None,
            help="print the rendered model input instead of the result",
        ),
        "headers": dict(
            choices=[h.value for h in Headers],
            default=DEFAULT_HEADERS.value,
            help="with --render: how an item that is not a conversation turn is framed:"
            " none (the default: its content and a line break), minimal (its id) or"
            " provenance (id, kind, form, sha256 and length)",
        ),
        "counter": dict(
            metavar="NAME",
            help="with --render: count costs with this counter (utf8-bytes, o200k_base,"
            " cl100k_base, tiktoken:PATH, tokenizers:PATH); the real encodings ship with"
            " the package: nothing is downloaded",
        ),
        "ledger": dict(
            metavar="PATH",
            help="record the compilation in this ledger (a file, or postgresql://...)",
        ),
    }


def _text(data: str | bytes) -> str:
    # what the ledger keeps of a request that is not JSON: the text itself
    return data if isinstance(data, str) else data.decode("utf-8", errors="replace")


def compile_command(argv: Sequence[str]) -> int:
    from ..api import assemble
    from ..model.parse import request_from_json
    from ..settings import Settings
    from .table import render_text

    args = _compile_parser().parse_args(argv)
    limits = limits_of(args)
    ledger = None
    try:
        if args.manifest and args.render is None:
            raise UsageError("--manifest needs --render FORMAT")
        if (args.counter or args.model) and args.render is None:
            raise UsageError("--counter and --model count rendered text: give --render FORMAT")
        if args.ledger is not None:
            from ..ledger import Ledger

            ledger = Ledger(args.ledger, session=args.session)
        settings = Settings(
            strategy=args.strategy,
            time_limit=args.time_limit,
            workers=args.workers,
            render=args.render,
            headers=args.headers,
            counter=_counter(args),
            ledger=ledger,
            limits=limits,
        )
        text = read_request(args.request, limits.max_request_bytes)
        try:
            request = request_from_json(text, limits=limits)
        except AssemblerError as exc:
            if ledger is not None and not isinstance(exc, InternalError):
                ledger.invalid(_text(text), settings.recorded(), exc)
            raise
        _check_window(args, request.task.budget)
        result = assemble(request, settings)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except AssemblerError as exc:
        if isinstance(exc, InternalError | SolverError):
            raise  # not the input's fault: main() reports it as an internal error
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    finally:
        if ledger is not None:
            ledger.close()
    if args.render is not None and result.rendering is not None:
        rendering = result.rendering
        if args.manifest:
            out = json.dumps(rendering.manifest.to_dict(), indent=2, ensure_ascii=not _utf8_out())
            _write(out + "\n")
        elif args.render == "text":
            _write(rendering.text)
        else:
            _write(json.dumps(rendering.body, indent=2, ensure_ascii=not _utf8_out()) + "\n")
    elif args.render is not None:
        # refused or undecided: nothing was rendered, the result says why
        sys.stderr.write(render_text(result))
    elif args.format == "text":
        _write(render_text(result))
    else:
        _write(json.dumps(result.to_dict(), indent=2, ensure_ascii=not _utf8_out()) + "\n")
    return EXIT[result.status]


def _counter(args: argparse.Namespace) -> Counter | None:
    """The counter ``--counter`` or ``--model`` names (``--counter`` wins)."""
    from ..render.meters import counter_named, model_counter

    if args.counter is not None:
        return counter_named(args.counter)
    return None if args.model is None else model_counter(args.model)


def _check_window(args: argparse.Namespace, budget: int) -> None:
    """With ``--model``, a budget above the model's input window is refused."""
    from ..facts import model_profile
    from ..model.errors import InvalidRequest

    if args.model is not None:
        profile = model_profile(args.model)
        if budget > profile.input_window:
            raise InvalidRequest(
                "task.budget",
                f"{budget} is above {profile.name}'s input window of {profile.input_window}"
                f" tokens (context {profile.context_window} less {profile.max_output} for output)",
            )


def _utf8_out() -> bool:
    encoding = getattr(sys.stdout, "encoding", None) or ""
    return encoding.lower().replace("-", "").replace("_", "") == "utf8"


def _write(text: str) -> None:
    # A terminal or pipe that is not UTF-8 still gets every character, escaped.
    if not _utf8_out():
        encoding = getattr(sys.stdout, "encoding", None) or "ascii"
        text = text.encode(encoding, "backslashreplace").decode(encoding)
    sys.stdout.write(text)
