"""The exit codes of every command and of a served call: one table, one meaning a code.

Input: nothing. Output: the codes, each code's meaning, and the mapping from a result's
status (by its value: a ``Status`` finds its code). Nothing of the package below it:
every floor may name a code, the errors' classes too.

A script can tell every outcome apart, whatever the command:

* 0: done: a bundle (``compile``, a served call), or a run that found nothing wrong;
* 1: the answer is no: a refusal (``compile``), or a problem found (``ledger replay``:
  a difference; ``ledger verify``: a fault; ``hunt``, ``sweep``, ``corpus run``: an
  exact strategy was wrong; ``conformance``: a case failed);
* 2: invalid input or usage;
* 3: undecided: no answer within the time limit;
* 4: a failure of the assembler itself (a bug, or the machine ran out of memory),
  never a refusal;
* 5: the engine that runs batches failed (``hunt``, ``sweep``, ``corpus run``: no
  scheduler at the address, a batch lost after its retries);
* 130: interrupted (Ctrl-C).

``docs/reference/cli.md`` shows the same table; ``tests/test_cli.py`` holds the two
together and checks that no command module defines a code of its own.
"""

from __future__ import annotations

__all__ = [
    "EXIT",
    "EXIT_BUNDLE",
    "EXIT_ENGINE",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_INVALID",
    "EXIT_OK",
    "EXIT_PROBLEM",
    "EXIT_REFUSED",
    "EXIT_UNDECIDED",
    "MEANINGS",
]

EXIT_OK = 0
# compile's and a served call's name for it
EXIT_BUNDLE = EXIT_OK
EXIT_PROBLEM = 1
# compile's and a served call's name for it
EXIT_REFUSED = EXIT_PROBLEM
EXIT_INVALID = 2
EXIT_UNDECIDED = 3
EXIT_INTERNAL = 4
EXIT_ENGINE = 5
# the shell's convention for a process ended by SIGINT
EXIT_INTERRUPTED = 130

# each code's one meaning, as the table above (and docs/reference/cli.md) states it
MEANINGS = {
    EXIT_OK: "done",
    EXIT_PROBLEM: "the answer is no: a refusal, or a problem found",
    EXIT_INVALID: "invalid input or usage",
    EXIT_UNDECIDED: "undecided",
    EXIT_INTERNAL: "a failure of the assembler itself",
    EXIT_ENGINE: "the engine that runs batches failed",
    EXIT_INTERRUPTED: "interrupted",
}

# a result's status (``model.types.Status``, a string) -> its code
EXIT = {"bundle": EXIT_BUNDLE, "refused": EXIT_REFUSED, "undecided": EXIT_UNDECIDED}
