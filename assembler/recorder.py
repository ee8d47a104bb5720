"""The recorder protocol: how ``assemble()`` reports a compilation to whoever records it.

Input: a recorder (anything implementing ``Recorder``, such as ``assembler.Ledger``),
the request as given, the run's settings and the function that compiles.
Output: that function's ``Result`` (or its exception, re-raised), after the recorder
was told, in order: the parsed request *before* solving, then exactly one outcome.

``assemble()`` sits below the ledger and never imports it: it is handed a recorder
and drives it through this module. The order of calls is the contract:

* ``Recorder.requested(request, run)`` once the request is parsed, before the gates
  and the solve; it returns a ``Recording`` for this compilation;
* then exactly one of ``Recording.answered(result)`` (a bundle, a refusal or an
  undecided result) or ``Recording.failed(error)`` (an exception after parsing);
* a call whose input is rejected before a request exists (an invalid request, an
  unknown strategy, a bad time limit) is reported as ``Recorder.invalid(request, run,
  error)``: the raw request and the error, together.

An error raised by the recorder itself propagates to the caller unchanged and is
never reported back to the same recorder: a ledger that cannot write must not be
asked to write again. Recording never changes the answer: the solve's time limit
does not pay for the time spent recording.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from .model.types import Request, Result

__all__ = ["Recorder", "Recording", "Run", "record"]


@dataclass(frozen=True, slots=True)
class Run:
    """How ``assemble`` was called, as given (None: the default); ``counter`` is the
    token counter's name and version, when one was given."""

    strategy: str
    time_limit: float | None = None
    workers: int | None = None
    render: str | None = None
    counter: str | None = None


class Recording(Protocol):
    """One compilation being recorded: it receives exactly one outcome."""

    def answered(self, result: Result) -> None: ...

    def failed(self, error: Exception) -> None: ...


class Recorder(Protocol):
    """What ``assemble(..., ledger=...)`` is handed."""

    def requested(self, request: Request, run: Run) -> Recording: ...

    def invalid(self, request: object, run: Run, error: Exception) -> None: ...


# what the compile function calls once the request is parsed
OnParsed = Callable[[Request], None]


def record(
    recorder: Recorder, request: object, run: Run, compile: Callable[[OnParsed], Result]
) -> Result:
    """Run ``compile`` and tell ``recorder`` what happened, in the protocol's order."""
    # empty: the recorder was not reached; [None]: it was reached and raised
    opened: list[Recording | None] = []

    def requested(parsed: Request) -> None:
        opened.append(None)
        opened[0] = recorder.requested(parsed, run)

    try:
        result = compile(requested)
    except Exception as error:
        if not opened:
            recorder.invalid(request, run, error)
        elif opened[0] is not None:
            opened[0].failed(error)
        raise
    recording = opened[0]
    assert recording is not None  # compile() returned, so it parsed and recorded
    recording.answered(result)
    return result
