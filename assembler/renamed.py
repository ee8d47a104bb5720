"""Names a subpackage had before a rename, still read, with a ``DeprecationWarning``.

Input: the subpackage's name, its namespace and ``{old name: new name}``.
Output: the subpackage's module ``__getattr__``: an old name reads as the new one's
value (warning the caller once per read), any other unknown name is an
``AttributeError``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["renamed"]


def renamed(
    module: str, namespace: Mapping[str, Any], names: Mapping[str, str]
) -> Callable[[str], Any]:
    """The ``__getattr__`` that reads each old name in ``names`` as its new one."""

    def __getattr__(name: str) -> Any:
        new = names.get(name)
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(f"{module}.{name} is now {new}", DeprecationWarning, stacklevel=2)
        return namespace[new]

    return __getattr__
