"""The exit codes of every command, in one place.

Input: nothing. Output: the codes and the mapping from a result's status.
"""

from __future__ import annotations

from ..model.types import Status

__all__ = ["EXIT", "EXIT_BUNDLE", "EXIT_INVALID", "EXIT_REFUSED", "EXIT_UNDECIDED"]

EXIT_BUNDLE = 0
EXIT_REFUSED = 1
EXIT_INVALID = 2
EXIT_UNDECIDED = 3

EXIT = {Status.BUNDLE: EXIT_BUNDLE, Status.REFUSED: EXIT_REFUSED, Status.UNDECIDED: EXIT_UNDECIDED}
