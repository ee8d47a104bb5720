"""The one rule by which a model name finds its family, in every table keyed by model.

Input: a model name as a caller wrote it, and a table's families with the names each
answers for. Output: the family that answers for the name, or None.

The rule: the name is trimmed and lowered, a trailing snapshot date is dropped
(``-20250929``, ``-2025-09-29``, or OpenAI's older ``-0613``), and what is left must be
one of a family's names exactly. A longer name is never taken for a shorter one
(``claude-opus-4-7`` is not ``claude-opus-4``, ``o1-mini`` is not ``o1``): a newer or
smaller model's window, tokenizer and cache minimum are its own, so a table lists every
name it answers for and an unknown name is an error naming the known ones. The counter
registry (``render/registry.py``) and the providers' cache rules (``model/providers.py``)
both match by this rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TypeVar

__all__ = ["find_family", "model_key"]

T = TypeVar("T")

_SNAPSHOT = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|\d{4})$")


def model_key(name: str) -> str:
    """``name`` as the tables list it: trimmed, lowered, without a snapshot date."""
    return _SNAPSHOT.sub("", name.strip().lower())


def find_family(name: str, families: Iterable[tuple[T, Iterable[str]]]) -> T | None:
    """The family whose names hold ``name`` by the rule above (``families``: each
    family with the names it answers for), or None."""
    key = model_key(name)
    for family, names in families:
        if key in names:
            return family
    return None
