"""``python -m assembler.cli``: the same as the ``assembler`` command."""

from __future__ import annotations

from . import main

raise SystemExit(main())
