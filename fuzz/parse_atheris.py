"""Coverage-guided fuzzing of the request parser, with atheris (libFuzzer for Python).

Input: libFuzzer's arguments (``-runs=N``, ``-max_total_time=S``, a corpus folder).
Output: libFuzzer's report; a crash (any exception but ``InvalidRequest``, or an
error message that is not one printable line) is saved as ``crash-*`` and printed.

    python -m pip install -e '.[fuzz]'
    python fuzz/parse_atheris.py -runs=200000

It feeds raw bytes to ``assembler.request_from_json`` under small limits (so that
every limit is reachable), starting from the shipped example requests. The structural
fuzz tests (``tests/test_fuzz.py``) cover ``assemble`` and the command line.
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

with atheris.instrument_imports():
    import assembler

LIMITS = assembler.Limits(max_request_bytes=64 * 1024, max_candidates=64, max_depth=8)
EXAMPLES = Path(__file__).resolve().parents[1] / "models" / "examples"


def test_one_input(data: bytes) -> None:
    try:
        assembler.request_from_json(data, limits=LIMITS)
    except assembler.InvalidRequest as error:
        message = str(error)
        if not (message.isprintable() and message.startswith(error.field)):
            raise AssertionError(f"not one located line: {message!r}") from error


def main() -> None:
    args = list(sys.argv)
    if not any(arg.startswith("-seed_inputs=") for arg in args):
        seeds = ",".join(str(path) for path in sorted(EXAMPLES.glob("*.json")))
        args.append(f"-seed_inputs={seeds}")
    atheris.Setup(args, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
