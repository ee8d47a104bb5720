"""``python -m benchmarks``: see ``benchmarks.runner``."""

from __future__ import annotations

import sys

from benchmarks.runner import main as _run

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    return _run(argv)


if __name__ == "__main__":
    sys.exit(main())
