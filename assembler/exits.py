"""The exit codes of every command and of a served call, in one place.

Input: nothing. Output: the codes and the mapping from a result's status.

A script can tell every outcome apart: a bundle (0), a refusal (1), bad input or
usage (2), no answer within the time limit (3), and a failure of the assembler
itself (4: a bug, or the machine ran out of memory), which is never a refusal.
"""

from __future__ import annotations

from .model.types import Status

__all__ = [
    "EXIT",
    "EXIT_BUNDLE",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_INVALID",
    "EXIT_REFUSED",
    "EXIT_UNDECIDED",
]

EXIT_BUNDLE = 0
EXIT_REFUSED = 1
EXIT_INVALID = 2
EXIT_UNDECIDED = 3
EXIT_INTERNAL = 4
# the shell's convention for a process ended by SIGINT
EXIT_INTERRUPTED = 130

EXIT = {Status.BUNDLE: EXIT_BUNDLE, Status.REFUSED: EXIT_REFUSED, Status.UNDECIDED: EXIT_UNDECIDED}
