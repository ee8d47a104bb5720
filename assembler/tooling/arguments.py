"""Argument parsing for the tooling commands: bad arguments are a one-line error and
exit 2, never a traceback or an interpreter exit from inside a library call.

Input: argv, through a ``Parser`` (an ``argparse.ArgumentParser``).
Output: the parsed namespace, or ``UsageError`` (the command prints it and returns
2) or ``ExitRequest`` (``--help``: the command returns its code).
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

__all__ = ["EXIT_USAGE", "ExitRequest", "Parser", "UsageError"]

EXIT_USAGE = 2


class UsageError(Exception):
    """A bad argument; its message is the one line the user sees."""


class ExitRequest(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


class Parser(argparse.ArgumentParser):
    # argparse exits the interpreter on a bad argument; a command's main() must return
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            sys.stderr.write(message)
        raise ExitRequest(status)
