"""``export``: the whole ledger as JSON lines (models/ledger-export.schema.json).

Input: a ``Ledger`` and a text stream. Output: the number of lines written. The first
line is a header; then, in sequence order, each event, preceded by every artifact it
references that was not written before (with ``artifacts=False``, events only). An
export holds everything needed to re-check the chain and every artifact's hash.
"""

from __future__ import annotations

import base64
import json
from typing import Any, TextIO

from .events import canonical
from .ledger import Ledger
from .schema import FORMAT, SCHEMA_VERSION
from .verify import references

__all__ = ["export"]


def _artifact_line(sha: str, data: bytes) -> dict[str, Any]:
    try:
        text, encoding = data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        text, encoding = base64.b64encode(data).decode("ascii"), "base64"
    return {"type": "artifact", "sha256": sha, "size": len(data), "encoding": encoding,
            "data": text}  # fmt: skip


def export(ledger: Ledger, out: TextIO, *, artifacts: bool = True) -> int:
    written = 1
    header = {"type": "header", "format": FORMAT, "schema": SCHEMA_VERSION, "path": ledger.path}
    out.write(canonical(header) + "\n")
    done: set[str] = set()
    for event in ledger.events():
        if artifacts:
            for sha, _ in references(event, event.data(), ledger):
                if sha not in done:
                    done.add(sha)
                    out.write(canonical(_artifact_line(sha, ledger.artifact(sha))) + "\n")
                    written += 1
        out.write(json.dumps(event.to_dict(), ensure_ascii=False, sort_keys=True) + "\n")
        written += 1
    return written
