"""What kind of number a value is, asked in one place.

Input: any value (parsed JSON, or a Python caller's).
Output: ``is_whole`` (an integer that is not a bool) and ``is_number`` (an integer or a
float that is not a bool): ``True`` is an ``int`` to Python, never a count or a limit
here. Every check of a count, a budget, a limit or a time asks these (the verifiers
keep their own reading, on purpose).
"""

from __future__ import annotations

from typing import TypeGuard

__all__ = ["is_number", "is_whole"]


def is_whole(value: object) -> TypeGuard[int]:
    """An integer that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> TypeGuard[int | float]:
    """An integer or a float that is not a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)
