"""The command line: ``assembler <command> [options]``.

Input: ``argv``. Output: text or JSON on stdout and an exit code (``assembler.exits``); an
error is one line on stderr. A failure of the assembler itself (a bug) exits 4 with
one line saying how to report it, never 1 (a refusal) and never a traceback, unless
``ASSEMBLER_TRACEBACK=1`` asks for it.
``entry_point`` is the process's entry (it sets the process's collector policy first).
One module per command, each imported only when called: ``compile`` (assemble one
request), ``explain`` (inspect a compilation), ``serve`` (the warm server),
``cache plan`` (a session's clairvoyant limit), ``schema`` and ``example`` (the
contract's files the package carries), ``bench`` (where the benchmarks are:
``python -m benchmarks`` of a source clone);
``corpus run``, ``conformance``, ``hunt`` and ``sweep`` are the command lines of
``assembler.corpus``, ``assembler.conformance``, ``assembler.hunt`` and ``assembler.sweep``.
A new command is a module here and one branch in ``_run``.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Sequence

from ..exits import EXIT_BUNDLE, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_INVALID
from ..model.errors import InternalError

__all__ = ["entry_point", "main"]

_USAGE = """usage: assembler <command> [options]

commands:
  compile REQUEST.json   assemble the bundle for one request (- reads stdin)
  explain RESULT.json --request REQUEST.json [--html OUT.html]
  explain --ledger PATH ID [--html OUT.html]
                         inspect a compilation, with exact counterfactuals
  ledger                 list, show, replay, diff, verify, export a ledger
  cache plan SESSION.json
                         the least price of a whole session at each value (the
                         clairvoyant limit: exact, or a proven lower bound)
  serve [--port N]       answer requests and session deltas: JSON lines on
                         stdin/stdout, or HTTP on a loopback port
  corpus run             run every strategy over the conformance corpus
  conformance            run the structural conformance suite (provider rules
                         of message lists) against fit
  hunt                   search for requests where a strategy is wrong
  sweep                  tabulate strategies' losses over shapes x budgets
  schema [NAME]          print a JSON Schema (request, result, delta, ...)
  example [NAME]         print a shipped example request
  bench                  where the benchmarks are (a development command:
                         python -m benchmarks in a source clone)

'assembler <command> --help' describes each command; 'assembler --version'
prints the version.
"""


def entry_point() -> int:
    """The ``assembler`` command as a process of its own (the console script and
    ``python -m assembler``): the process's collector policy (``cli.process``), then
    ``main()``. ``main()`` alone, called in a process it does not own, changes nothing
    process-wide."""
    from .process import collector_policy

    collector_policy()
    return main()


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        sys.stdout.write(_USAGE)
        return EXIT_BUNDLE if args else EXIT_INVALID
    if args[0] == "--version":
        print(f"assembler {_version()}")
        return EXIT_BUNDLE
    command, rest = args[0], args[1:]
    try:
        return _run(command, rest)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader of stdout left early (``| head``): end quietly, like a Unix tool.
        # What is still buffered would fail again as the interpreter flushes stdout on
        # exit ("Exception ignored ..."), so stdout now writes to the null device.
        _silence_stdout()
        return EXIT_BUNDLE
    except MemoryError:
        print(
            "error: out of memory: answering this request needs more memory than this"
            " process has; lower --max-candidates or --max-request-bytes, or use a larger"
            " machine",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    except Exception as exc:
        report_internal_error(exc)
        return EXIT_INTERNAL


def _silence_stdout() -> None:
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError):  # no file descriptor behind sys.stdout (a test's)
        pass


def report_internal_error(exc: BaseException) -> None:
    """One line on stderr: what failed, that it is a bug, and how to report it."""
    if os.environ.get("ASSEMBLER_TRACEBACK") == "1":
        traceback.print_exception(exc, file=sys.stderr)
    cause = exc.cause if isinstance(exc, InternalError) else exc
    try:
        detail = " ".join(str(cause).split())[:200]
    except Exception:
        detail = ""
    described = f"{type(cause).__name__}: {detail}" if detail else type(cause).__name__
    print(
        f"error: internal error: {described} -- a bug in assembler {_version()}, not a"
        " problem with the request; please report it with the request and this line"
        " (ASSEMBLER_TRACEBACK=1 prints the traceback)",
        file=sys.stderr,
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("assembler")
    except PackageNotFoundError:
        return "(version unknown)"


def _run(command: str, rest: list[str]) -> int:
    if command == "compile":
        from .compile import compile_command

        return compile_command(rest)
    if command == "explain":
        from .explain import explain_command

        return explain_command(rest)
    if command == "ledger":
        from .ledger import ledger_command

        return ledger_command(rest)
    if command == "cache":
        from .cache import cache_command

        return cache_command(rest)
    if command == "serve":
        from .serve import serve_command

        return serve_command(rest)
    if command == "corpus":
        from .corpus import main as corpus_main

        return corpus_main(rest)
    if command == "conformance":
        from .conformance import main as conformance_main

        return conformance_main(rest)
    if command == "hunt":
        from .hunt import main as hunt_main

        return hunt_main(rest)
    if command == "sweep":
        from .sweep import main as sweep_main

        return sweep_main(rest)
    if command in ("schema", "example"):
        from .contract import example_command, schema_command

        return (schema_command if command == "schema" else example_command)(rest)
    if command == "bench":
        from .bench import bench_command

        return bench_command(rest)
    print(f"error: unknown command {command!r}\n", file=sys.stderr)
    sys.stderr.write(_USAGE)
    return EXIT_INVALID
