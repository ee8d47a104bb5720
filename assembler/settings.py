"""How a call is computed: one frozen value for every entry point.

Input: the caller's choices, as keyword arguments or a ``Settings`` built once (the
API, a session, the server, the inspector and the command line all take one).
Output: ``Settings``, checked when it is built: an unknown strategy, a time limit or a
worker count out of range, an unknown render format or a counter without one is an
``InvalidRequest`` (``UnknownStrategy``) naming the setting, before any work starts.

The time limit is a number of seconds here, at the edge, and the chain turns it into
the call's ``Deadline`` once (``pipeline.run``); every stage inside reads that.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .model.arguments import DEFAULT_TIME_LIMIT, check_arguments
from .model.errors import InvalidRequest
from .model.limits import DEFAULT_LIMITS, Limits
from .model.rendering import DEFAULT_HEADERS, Headers, RenderFormat
from .model.rules import choice, kind

if TYPE_CHECKING:
    from .recorder import Recorder
    from .render import Counter

__all__ = ["DEFAULT_TIME_LIMIT", "Settings", "recorded_settings"]


@dataclass(frozen=True, slots=True)
class Settings:
    """``strategy``: a name from ``assembler.strategies.STRATEGIES``; ``time_limit``:
    seconds for the whole call, parsing included (None: ``DEFAULT_TIME_LIMIT``);
    ``workers``: CP-SAT's search workers (None: 1); ``render``: a format, and the
    result carries its ``Rendering`` (forms without content are then gated
    ``no-content``); ``headers``: how the rendering frames each item that is not a
    conversation turn (``provenance``: id, kind, form, sha256 and length; ``minimal``:
    the id; ``none``, the default: the content and a line break); ``counter``
    (needs ``render``): each form's cost is counted from
    its rendered block and the whole rendering fits the budget; ``limits``: the
    request's size limits; ``ledger``: a recorder (``assembler.Ledger``) told of
    every compilation. Time limit and workers keep the value given (None for the
    default): a recorder records the call as it was made."""

    strategy: str = "exact"
    time_limit: float | None = None
    workers: int | None = None
    render: str | RenderFormat | None = None
    # how a rendering frames each item (a ``Headers``, or its value)
    headers: str = DEFAULT_HEADERS
    counter: Counter | None = None
    limits: Limits = DEFAULT_LIMITS
    ledger: Recorder | None = None

    def __post_init__(self) -> None:
        check_arguments(self.strategy, self.time_limit, self.workers)
        from .strategies import load_strategy

        load_strategy(self.strategy)
        if self.render is not None:
            object.__setattr__(self, "render", choice(RenderFormat, self.render, "render"))
        object.__setattr__(self, "headers", choice(Headers, self.headers, "headers"))
        if self.counter is not None and self.render is None:
            raise InvalidRequest("counter", "counts rendered text: give a render format too")
        if not isinstance(self.limits, Limits):
            raise InvalidRequest("limits", f"must be an assembler.Limits, not {kind(self.limits)}")

    @property
    def format(self) -> RenderFormat | None:
        """The render format (a ``RenderFormat``), or None."""
        render = self.render
        return (
            render if render is None or isinstance(render, RenderFormat) else RenderFormat(render)
        )

    @property
    def framing(self) -> Headers:
        """How a rendering frames each item (``headers`` as a ``Headers``)."""
        return Headers(self.headers)

    @property
    def seconds(self) -> float:
        """The time limit in seconds, the default filled in."""
        return DEFAULT_TIME_LIMIT if self.time_limit is None else float(self.time_limit)

    @property
    def worker_count(self) -> int:
        return 1 if self.workers is None else self.workers

    @property
    def counter_name(self) -> str | None:
        """The counter as a recorder names it: its name and version."""
        counter = self.counter
        return None if counter is None else f"{counter.name} {counter.version}"

    def recorded(self) -> dict[str, Any]:
        """The settings a recorder writes down: each as given (None for a default), the
        render format by its name and the counter by its name and version."""
        given = recorded_settings(
            self.strategy, self.time_limit, self.workers, self.render, self.counter_name
        )
        if self.render is not None:
            # always written down: a record without it was rendered before the default
            # became ``none`` (with ``provenance``)
            given["headers"] = str(self.headers)
        return given

    def but(self, **changes: Any) -> Settings:
        """These settings with ``changes`` (checked again)."""
        return replace(self, **changes)


def recorded_settings(
    strategy: Any, time_limit: Any, workers: Any, render: Any, counter: str | None
) -> dict[str, Any]:
    """What a recorder writes down of a call's settings (``Settings.recorded()``), also
    for settings that could not be built (an invalid call is recorded as given)."""
    return {
        "strategy": strategy,
        "time_limit": time_limit,
        "workers": workers,
        "render": render.value if isinstance(render, RenderFormat) else render,
        "counter": counter,
    }
