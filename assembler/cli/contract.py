"""``assembler schema`` and ``assembler example``: the contract the package carries.

Input: the arguments after ``schema`` (a schema's name) or ``example`` (an example's
name, ``--path``). Output: the file's text on stdout (or its path), the list of names
without one, and exit 0; an unknown name is one line on stderr and exit 2.

A user with only the installed package has no clone's ``models/``: these print the
same files (``assembler.shipped``), so that ``assembler example review-migration |
assembler compile -`` works anywhere and an error's "the request's fields: assembler
schema request" can be followed.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ..exits import EXIT_BUNDLE, EXIT_INVALID
from ..shipped import SCHEMAS, example, example_names, schema_text
from .arguments import CommandParser

__all__ = ["example_command", "schema_command"]


def schema_command(argv: Sequence[str]) -> int:
    parser = CommandParser(
        prog="assembler schema",
        description="Print one of the JSON Schemas of the formats (models/ of the source).",
    )
    parser.add_argument(
        "name",
        nargs="?",
        help=f"one of {', '.join(SCHEMAS)}; without it, list them",
    )
    args = parser.parse_args(argv)
    if args.name is None:
        print("\n".join(SCHEMAS))
        return EXIT_BUNDLE
    if args.name not in SCHEMAS:
        print(f"error: no schema {args.name!r}: one of {', '.join(SCHEMAS)}",
              file=sys.stderr)  # fmt: skip
        return EXIT_INVALID
    sys.stdout.write(schema_text(args.name))
    return EXIT_BUNDLE


def example_command(argv: Sequence[str]) -> int:
    parser = CommandParser(
        prog="assembler example",
        description="Print one of the shipped example requests (models/examples/ of the source).",
    )
    parser.add_argument("name", nargs="?", help="an example's name; without it, list them")
    parser.add_argument(
        "--path", action="store_true", help="print the file's path instead of its text"
    )
    args = parser.parse_args(argv)
    names = example_names()
    if args.name is None:
        print("\n".join(names))
        return EXIT_BUNDLE
    name = args.name.removesuffix(".json")
    if name not in names:
        print(f"error: no example {args.name!r}: one of {', '.join(names)}", file=sys.stderr)
        return EXIT_INVALID
    found = example(name)
    if args.path:
        print(found)
        return EXIT_BUNDLE
    sys.stdout.write(found.read_text(encoding="utf-8"))
    return EXIT_BUNDLE
