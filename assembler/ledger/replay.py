"""``replay``: run a recorded request again with the current code and compare.

Input: a ``Compilation`` read from a ledger. Output: a ``Replay``: what was recorded,
what the current code answers, and every ``Difference`` by name (status, selection,
package_id, trace_id, decisions, refusal, the rendered bytes with the first
divergent byte, the provider body, the manifest, the error), empty when the answer is
identical.

A replay never writes to the ledger: history is not rewritten when an answer changes
(a fixed bug, a changed rule); the difference is reported and the caller decides.
Timings are diagnostic and never compared. A recorded answer that was not proven
optimal (the time limit stopped the search) may legitimately differ; the note says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..api import assemble
from ..model.errors import InvalidRequest
from ..model.parse import request_from_json
from ..model.rendering import Headers
from ..render.counters import Counter, Utf8Bytes
from .documents import error_document
from .errors import LedgerError
from .events import CompilationOutcome
from .ledger import Compilation

__all__ = ["Difference", "Replay", "first_divergence", "replay"]

# decisions listed one by one before the rest are counted
_DECISIONS_SHOWN = 20


@dataclass(frozen=True, slots=True)
class Difference:
    what: str
    recorded: str
    now: str

    def to_dict(self) -> dict[str, str]:
        return {"what": self.what, "recorded": self.recorded, "now": self.now}


@dataclass(frozen=True, slots=True)
class Replay:
    number: int
    recorded: CompilationOutcome
    now: str  # the replay's status (bundle, refused, undecided) or "failed"
    differences: tuple[Difference, ...]
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    note: str = ""

    @property
    def identical(self) -> bool:
        return self.recorded is not CompilationOutcome.INTERRUPTED and not self.differences

    def to_dict(self) -> dict[str, Any]:
        return {
            "compilation": self.number,
            "recorded": self.recorded.value,
            "now": self.now,
            "identical": self.identical,
            "differences": [d.to_dict() for d in self.differences],
            "note": self.note,
            "package_id": None if self.result is None else self.result["package_id"],
            "trace_id": None if self.result is None else self.result["trace_id"],
        }


def first_divergence(a: bytes, b: bytes) -> int | None:
    """The offset of the first byte where ``a`` and ``b`` differ (None: identical)."""
    if a == b:
        return None
    limit = min(len(a), len(b))
    step = 4096
    for start in range(0, limit, step):
        end = min(start + step, limit)
        if a[start:end] != b[start:end]:
            return next(i for i in range(start, end) if a[i] != b[i])
    return limit  # one is a prefix of the other


def _short(value: Any) -> str:
    return "null" if value is None else str(value)


def _compare_renderings(old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[Difference]:
    if old == new:
        return []
    if old is None or new is None:
        return [Difference("rendering", "none" if old is None else "rendered",
                           "none" if new is None else "rendered")]  # fmt: skip
    found = []
    a, b = old["text"].encode("utf-8"), new["text"].encode("utf-8")
    offset = first_divergence(a, b)
    if offset is not None:
        found.append(
            Difference(
                "rendered bytes",
                f"{len(a)} bytes, sha256 {old['manifest']['rendered_sha256']}",
                f"{len(b)} bytes, sha256 {new['manifest']['rendered_sha256']}; first"
                f" divergent byte at offset {offset}",
            )
        )
    if old["body"] != new["body"]:
        found.append(
            Difference(
                "provider body",
                f"sha256 {old['manifest']['request_body_sha256']}",
                f"sha256 {new['manifest']['request_body_sha256']}",
            )
        )
    for key in sorted(old["manifest"].keys() | new["manifest"].keys()):
        x, y = old["manifest"].get(key), new["manifest"].get(key)
        if x != y and key not in ("rendered_sha256", "request_body_sha256"):
            found.append(Difference(f"manifest {key}", _clip(x), _clip(y)))
    return found


def _clip(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 200 else text[:197] + "..."


def _compare_results(old: dict[str, Any], new: dict[str, Any]) -> list[Difference]:
    found = _compare_renderings(old.get("rendering"), new.get("rendering"))
    keys = ("strategy", "status", "package_id", "trace_id", "cost", "value", "budget")
    for key in (*keys, "optimal", "bound"):
        if old.get(key) != new.get(key):
            found.append(Difference(key, _short(old.get(key)), _short(new.get(key))))
    if old["selected"] != new["selected"]:
        entered = [f for f in new["selected"] if f not in old["selected"]]
        left = [f for f in old["selected"] if f not in new["selected"]]
        detail = f"entered {entered}, left {left}" if entered or left else "order changed"
        found.append(Difference("selected", json.dumps(old["selected"]), detail))
    if old["refusal"] != new["refusal"]:
        found.append(Difference("refusal", json.dumps(old["refusal"]), json.dumps(new["refusal"])))
    before = {d["id"]: d for d in old["decisions"]}
    after = {d["id"]: d for d in new["decisions"]}
    changed = []
    for form in sorted(before.keys() | after.keys()):
        a, b = before.get(form), after.get(form)
        if a != b:
            changed.append(
                Difference(
                    f"decision {form!r}",
                    "absent" if a is None else f"{a['verdict']}/{a['reason']}: {a['detail']}",
                    "absent" if b is None else f"{b['verdict']}/{b['reason']}: {b['detail']}",
                )
            )
    found.extend(changed[:_DECISIONS_SHOWN])
    if len(changed) > _DECISIONS_SHOWN:
        rest = len(changed) - _DECISIONS_SHOWN
        found.append(Difference("decisions", f"{rest} more changed", "(not listed)"))
    return found


def _parsed_text(text: str) -> Any:
    try:
        return request_from_json(text)
    except InvalidRequest as exc:
        return _Unparsable(exc)


class _Unparsable:
    """Text that fails to parse: replaying it re-raises the parser's current error."""

    def __init__(self, error: InvalidRequest) -> None:
        self.error = error


def _counter(recorded: str | None, given: Counter | None, path: str) -> Counter | None:
    if given is not None or recorded is None:
        return given
    builtin = Utf8Bytes()
    if recorded == f"{builtin.name} {builtin.version}":
        return builtin
    raise LedgerError(
        path,
        f"this compilation counted tokens with {recorded!r}, which a replay cannot rebuild;"
        " replay it from Python with replay(compilation, counter=...)",
    )


def replay(compilation: Compilation, counter: Counter | None = None, path: str = "") -> Replay:
    """Re-run ``compilation`` with the current code; ``counter`` stands for a recorded
    token counter that the ledger cannot rebuild (only ``Utf8Bytes`` is rebuilt)."""
    run = compilation.run
    counting = _counter(run["counter"], counter, path)
    if compilation.request is not None:
        request: Any = compilation.request
    else:
        assert compilation.raw_request is not None
        request = json.loads(compilation.raw_request)
        if isinstance(request, str):
            # the command line records input that is not JSON as its text
            request = _parsed_text(request)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    try:
        if isinstance(request, _Unparsable):
            raise request.error
        answer = assemble(
            request,
            strategy=run["strategy"],
            time_limit=run["time_limit"],
            workers=run["workers"],
            render=run["render"],
            headers=run.get("headers", Headers.PROVENANCE.value),
            counter=counting,
        )
        result = answer.to_dict()
        now = answer.status.value
    except Exception as exc:
        error = error_document(exc)
        now = "failed"
    differences: list[Difference] = []
    note = ""
    if compilation.outcome is CompilationOutcome.INTERRUPTED:
        note = "no outcome was recorded (interrupted): there is nothing to compare with"
    elif compilation.outcome is CompilationOutcome.FAILED:
        recorded = compilation.error
        assert recorded is not None
        if error is None:
            differences.append(Difference("outcome", "failed", now))
        elif error != recorded:
            for key in ("type", "message", "fields"):
                if recorded.get(key) != error.get(key):
                    differences.append(
                        Difference(f"error {key}", _short(recorded[key]), _short(error[key]))
                    )
    else:
        assert compilation.result is not None
        if result is None:
            assert error is not None
            differences.append(
                Difference("outcome", compilation.outcome.value, f"failed: {error['message']}")
            )
        else:
            differences.extend(_compare_results(compilation.result, result))
        if not compilation.result["optimal"] and compilation.result["status"] == "bundle":
            note = "the recorded bundle was not proven optimal (time limit): it may differ"
    if not compilation.raw_exact:
        note = "the raw request held values JSON cannot carry; the replay is approximate"
    return Replay(
        compilation.number, compilation.outcome, now, tuple(differences), result, error, note
    )
