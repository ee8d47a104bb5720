"""The recorder protocol: how ``assemble()`` reports a compilation to whoever records it.

Input: nothing (the protocols only). Output: ``Recorder`` and ``Recording``, what a
recorder implements (``assembler.Ledger`` does), and ``Recorded``, what it is shown of
the call's ``Settings``.

``assemble()`` sits below the ledger and never imports it: it is handed a recorder
and drives it (``pipeline.run``, the chain's last stage). The order of calls is the
contract:

* ``Recorder.requested(request, settings)`` once the request is parsed, before the
  gates and the solve; it returns a ``Recording`` for this compilation;
* then exactly one of ``Recording.answered(result)`` (a bundle, a refusal or an
  undecided result) or ``Recording.failed(error)`` (an exception after parsing);
* a call whose input is rejected before a request exists (an invalid request, an
  unknown strategy, a bad time limit) is reported as ``Recorder.invalid(request,
  given, error)``: the raw request, the settings as given (``Settings.recorded()``'s
  keys) and the error, together.

An error raised by the recorder itself propagates to the caller unchanged and is
never reported back to the same recorder: a ledger that cannot write must not be
asked to write again. Recording never changes the answer: the solve's time limit
does not pay for the time spent recording.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from .model.types import Request, Result

__all__ = ["Recorded", "Recorder", "Recording"]


class Recorded(Protocol):
    """The call's settings, as a recorder sees them (``assembler.Settings``)."""

    def recorded(self) -> dict[str, Any]:
        """Each setting as given: strategy, time_limit, workers, render, counter."""
        ...


class Recording(Protocol):
    """One compilation being recorded: it receives exactly one outcome."""

    def answered(self, result: Result) -> None: ...

    def failed(self, error: Exception) -> None: ...


class Recorder(Protocol):
    """What ``assemble(..., ledger=...)`` is handed."""

    def requested(self, request: Request, settings: Recorded) -> Recording: ...

    def invalid(self, request: object, given: Mapping[str, Any], error: Exception) -> None: ...
