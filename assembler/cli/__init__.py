"""The command line: ``assembler <command> [options]``.

Input: ``argv``. Output: text or JSON on stdout and an exit code (``exits``).
One module per command, each imported only when called: ``compile`` (assemble one
request), ``explain`` (inspect a compilation), ``bench`` (the benchmarks of a clone);
``corpus run``, ``hunt`` and ``sweep`` are the command lines of ``assembler.tooling``.
A new command is a module here and one branch in ``main``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .exits import EXIT_BUNDLE, EXIT_INVALID

__all__ = ["main"]

_USAGE = """usage: assembler <command> [options]

commands:
  compile REQUEST.json   assemble the bundle for one request (- reads stdin)
  explain RESULT.json --request REQUEST.json [--html OUT.html]
  explain --ledger PATH ID [--html OUT.html]
                         inspect a compilation, with exact counterfactuals
  ledger                 list, show, replay, diff, verify, export a ledger
  corpus run             run every strategy over the conformance corpus
  hunt                   search for requests where a strategy is wrong
  sweep                  tabulate strategies' losses over shapes x budgets
  bench                  run the benchmarks

'assembler <command> --help' describes each command.
"""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        sys.stdout.write(_USAGE)
        return EXIT_BUNDLE if args else EXIT_INVALID
    command, rest = args[0], args[1:]
    try:
        if command == "compile":
            from .compile import compile_command

            return compile_command(rest)
        if command == "explain":
            from .explain import explain_command

            return explain_command(rest)
        if command == "ledger":
            from .ledger import ledger_command

            return ledger_command(rest)
        if command == "corpus":
            from ..tooling.conformance import main as corpus_main

            return int(corpus_main(rest))
        if command == "hunt":
            from ..tooling.hunt import main as hunt_main

            return int(hunt_main(rest))
        if command == "sweep":
            from ..tooling.sweep import main as sweep_main

            return int(sweep_main(rest))
        if command == "bench":
            from .bench import bench_command

            return bench_command(rest)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_BUNDLE
    print(f"error: unknown command {command!r}\n", file=sys.stderr)
    sys.stderr.write(_USAGE)
    return EXIT_INVALID
