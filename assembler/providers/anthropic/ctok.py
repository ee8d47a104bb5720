"""Claude's token counts by ``ctok``, where it is installed: a text counter for ``fit``.

Input: a tokenizer generation (``"3.0"``: Claude 3 to Opus 4.6; ``"4.7"``; ``"4.8"``:
Opus 4.8 and the Claude 5 models; each profile names its own in the data file).
Output: ``CtokCounter``, a counter (``name``, ``version``, ``count``) whose count of a
text is ``ctok``'s reconstruction of Claude's count for it, less the frame ``ctok``
adds for a single message (the room's data prices a message's framing itself).

``ctok`` (PyPI, MIT) rebuilds Claude's counts offline from a vocabulary it ships;
nothing is downloaded. It is optional (``pip install 'assembler[ctok]'``; on Python
3.11, ``pip install --ignore-requires-python ctok``: it declares 3.12 but runs on
3.11). Without it, ``fit`` estimates Claude's counts from ``o200k_base`` by the factor
the data file states and ``benchmarks/results/COUNTING.md`` measures.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from types import ModuleType

from ...model.errors import InvalidRequest

__all__ = ["CtokCounter"]


@dataclass(frozen=True, slots=True)
class CtokCounter:
    """Claude's count of a text, tokenizer generation ``generation``, by ``ctok``."""

    generation: str

    @classmethod
    def named(cls, generation: str) -> CtokCounter:
        """The counter of ``generation``; ``InvalidRequest`` naming ``counter`` when
        ``ctok`` is not installed or does not know the generation."""
        module = _ctok()
        try:
            module.token_count("", generation)
        except (NotImplementedError, TypeError) as exc:
            raise InvalidRequest(
                "counter", f"ctok has no tokenizer {generation!r}: {exc}"
            ) from None
        return cls(generation)

    @property
    def name(self) -> str:
        return f"ctok:{self.generation}"

    @property
    def version(self) -> str:
        from importlib.metadata import version

        return version("ctok")

    def count(self, text: str) -> int:
        module = _ctok()
        return max(0, int(module.token_count(text, self.generation)) - _frame(self.generation))


@cache
def _frame(generation: str) -> int:
    return int(_ctok().token_count("", generation))


def _ctok() -> ModuleType:
    try:
        import ctok  # type: ignore[import-untyped]
    except ImportError:
        raise InvalidRequest(
            "counter",
            "ctok is not installed: pip install 'assembler[ctok]' (on Python 3.11:"
            " pip install --ignore-requires-python ctok)",
        ) from None
    module: ModuleType = ctok
    return module
