"""The recorder protocol: how ``assemble()`` reports a compilation to whoever records it.

Input: a recorder (anything implementing ``Recorder``, such as ``assembler.Ledger``),
the request as given, the call's ``Settings`` and the function that compiles.
Output: that function's ``Result`` (or its exception, re-raised), after the recorder
was told, in order: the parsed request *before* solving, then exactly one outcome.

``assemble()`` sits below the ledger and never imports it: it is handed a recorder
and drives it through this module. The order of calls is the contract:

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

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from .types import Request, Result

__all__ = ["OnParsed", "Recorded", "Recorder", "Recording", "record"]


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


# what the compile function calls once the request is parsed
OnParsed = Callable[[Request], None]


def record(
    recorder: Recorder, request: object, settings: Recorded, compile: Callable[[OnParsed], Result]
) -> Result:
    """Run ``compile`` and tell ``recorder`` what happened, in the protocol's order."""
    # empty: the recorder was not reached; [None]: it was reached and raised
    opened: list[Recording | None] = []

    def requested(parsed: Request) -> None:
        opened.append(None)
        opened[0] = recorder.requested(parsed, settings)

    try:
        result = compile(requested)
    except Exception as error:
        if not opened:
            recorder.invalid(request, settings.recorded(), error)
        elif opened[0] is not None:
            opened[0].failed(error)
        raise
    recording = opened[0]
    assert recording is not None  # compile() returned, so it parsed and recorded
    recording.answered(result)
    return result
