"""The corpus on disk: one JSON file per case, checked and loaded.

Input: a corpus directory (by default the one the package ships: ``corpus/`` of the
repository, copied into a wheel; ``assembler.shipped``).
Output: ``Case`` values (request and frozen exact answer), ordered by family, then
tight, medium, roomy; a ``CorpusError`` naming the file for anything malformed.

A cache case (a request with a ``cache`` section, ``models/README.md`` 6b) also
freezes the exact answer's cache record (``expected.cache``: ``Result.cache``) and
says where its previous blocks come from: ``previous`` holds the previous call's
request and the format it was rendered in (``{"request", "render"}``), whose
rendering's ``Manifest.cache_blocks`` are the request's ``cache.previous.blocks``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from ..errors import CorpusError
from ..model.types import Status
from ..shipped import corpus_dir

__all__ = ["BUDGET_CLASSES", "Case", "CorpusError", "default_corpus_dir", "load_corpus"]

BUDGET_CLASSES = ("tight", "medium", "roomy")
_CASE_KEYS = ("name", "family", "budget_class", "description", "request", "expected")
# a cache case's previous call: {"request": R, "render": FORMAT}
_OPTIONAL_KEYS = ("previous",)


@dataclass(frozen=True, slots=True)
class Case:
    """One corpus case as stored: the request and its frozen exact answer."""

    name: str
    family: str
    budget_class: str
    description: str
    request: Mapping[str, Any]
    expected: Mapping[str, Any]
    # the previous call of a cache case ({"request", "render"}), else None
    previous: Mapping[str, Any] | None = None

    @property
    def is_cache(self) -> bool:
        """Whether the request carries a cache section (the cache-aware order)."""
        return self.request.get("cache") is not None

    @property
    def expected_status(self) -> str:
        return str(self.expected["status"])

    @property
    def expected_selected(self) -> tuple[str, ...]:
        return tuple(self.expected.get("selected", ()))

    @property
    def expected_code(self) -> str | None:
        refusal = self.expected.get("refusal")
        return None if refusal is None else str(refusal["code"])


def default_corpus_dir() -> Traversable:
    """The corpus the package ships (the repository's ``corpus/`` in a checkout)."""
    return corpus_dir()


def load_corpus(directory: str | Path | Traversable | None = None) -> tuple[Case, ...]:
    """Every case of ``directory``, ordered by family, then tight, medium, roomy."""
    if directory is None:
        root: Traversable = default_corpus_dir()
    else:
        root = Path(directory) if isinstance(directory, str) else directory
    if not root.is_dir():
        raise CorpusError(f"corpus directory not found: {root}")
    files = sorted((p for p in root.iterdir() if p.name.endswith(".json")), key=lambda p: p.name)
    cases = [_load_case(path) for path in files]
    if not cases:
        raise CorpusError(f"no case files (*.json) in {root}")
    names = [case.name for case in cases]
    if len(set(names)) != len(names):
        raise CorpusError("two case files share a name")
    return tuple(sorted(cases, key=lambda c: (c.family, BUDGET_CLASSES.index(c.budget_class))))


def _load_case(path: Traversable) -> Case:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CorpusError(f"{path}: cannot read the case: {exc}") from None
    if not isinstance(data, dict):
        raise CorpusError(f"{path}: a case is a JSON object")
    missing = [key for key in _CASE_KEYS if key not in data]
    unknown = sorted(set(data) - set(_CASE_KEYS) - set(_OPTIONAL_KEYS))
    if missing or unknown:
        raise CorpusError(f"{path}: missing keys {missing}, unknown keys {unknown}")
    for key in ("name", "family", "budget_class", "description"):
        if not isinstance(data[key], str) or not data[key]:
            raise CorpusError(f"{path}: {key} must be a non-empty string")
    if data["name"] != path.name[: -len(".json")]:
        raise CorpusError(f"{path}: name {data['name']!r} is not the file stem")
    if data["budget_class"] not in BUDGET_CLASSES:
        raise CorpusError(f"{path}: budget_class must be one of {', '.join(BUDGET_CLASSES)}")
    if data["name"] != f"{data['family']}-{data['budget_class']}":
        raise CorpusError(f"{path}: name must be <family>-<budget_class>")
    request, expected = data["request"], data["expected"]
    if not isinstance(request, dict) or not isinstance(expected, dict):
        raise CorpusError(f"{path}: request and expected must be objects")
    status = expected.get("status")
    if status == Status.BUNDLE.value:
        if not all(key in expected for key in ("selected", "value", "cost")):
            raise CorpusError(f"{path}: a bundle expects selected, value and cost")
    elif status == Status.REFUSED.value:
        refusal = expected.get("refusal")
        if not isinstance(refusal, dict) or "code" not in refusal:
            raise CorpusError(f"{path}: a refusal expects refusal.code")
    else:
        raise CorpusError(f"{path}: expected.status must be 'bundle' or 'refused'")
    previous = data.get("previous")
    if request.get("cache") is not None:
        if status == Status.BUNDLE.value and not isinstance(expected.get("cache"), dict):
            raise CorpusError(f"{path}: a cache case's bundle expects its cache record")
        if not isinstance(previous, dict) or set(previous) != {"request", "render"}:
            raise CorpusError(f"{path}: a cache case names its previous call (request, render)")
    elif previous is not None:
        raise CorpusError(f"{path}: previous belongs to a cache case (a request with cache)")
    return Case(
        name=data["name"],
        family=data["family"],
        budget_class=data["budget_class"],
        description=data["description"],
        request=request,
        expected=expected,
        previous=previous,
    )
