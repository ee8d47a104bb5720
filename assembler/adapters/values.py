"""A caller's list, tools and system prompt are JSON values, before anything reads them.

Input: a value as the caller gave it (a body, a list of messages, tools, a system
prompt) and the name it goes by (``messages``, ``tools``, ``system``).
Output: nothing, or one ``InvalidRequest`` naming the path of the first value no
provider could be sent: a set, bytes or another object that is not JSON, an object key
that is not a string, a number that is not finite (NaN, infinity), or nesting deeper
than ``MAX_DEPTH``. The walk is iterative (no recursion limit to meet) and visits each
value once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..model.errors import InvalidRequest

__all__ = ["MAX_DEPTH", "check_json"]

# deeper than any provider body (a tool's JSON Schema included); Python's own limit on
# recursion is 1,000, and the SDKs serialise recursively
MAX_DEPTH = 256


def check_json(value: Any, where: str) -> None:
    """Raise ``InvalidRequest`` at the first value of ``value`` that is not JSON."""
    stack: list[tuple[Any, str, int]] = [(value, where, 0)]
    while stack:
        item, path, depth = stack.pop()
        if item is None or isinstance(item, str | bool | int):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                raise InvalidRequest(path, f"{item!r} is not a JSON number (a finite number)")
            continue
        if depth >= MAX_DEPTH:
            raise InvalidRequest(path, f"nests deeper than {MAX_DEPTH} levels")

        if isinstance(item, Mapping):
            for key in item:
                if not isinstance(key, str):
                    raise InvalidRequest(
                        path,
                        f"has the key {key!r:.40} ({type(key).__name__}): JSON keys are strings",
                    )
            pairs = reversed(list(item.items()))
            stack.extend((v, _below(path, f".{k}", depth), depth + 1) for k, v in pairs)
            continue
        if isinstance(item, list | tuple):
            stack.extend(
                (v, _below(path, f"[{n}]", depth), depth + 1)
                for n, v in reversed(list(enumerate(item)))
            )
            continue
        raise InvalidRequest(path, f"is a {type(item).__name__}, not a JSON value")


def _below(path: str, step: str, depth: int) -> str:
    # a path stays one readable line: past a few levels, its tail is elided
    if depth < _PATH_LEVELS:
        return path + step
    return path if path.endswith("...") else path + "..."


_PATH_LEVELS = 12
