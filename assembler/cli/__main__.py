"""``python -m assembler.cli``: the same as the ``assembler`` command."""

from __future__ import annotations

from . import entry_point

raise SystemExit(entry_point())
