"""``python -m assembler``: the same as the ``assembler`` command."""

from __future__ import annotations

from .cli import entry_point

raise SystemExit(entry_point())
