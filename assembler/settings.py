"""How a call is computed: one frozen value for every entry point.

Input: the caller's choices, as keyword arguments or a ``Settings`` built once (the
API, a session, the server, the inspector and the command line all take one).
Output: ``Settings``, checked when it is built: an unknown strategy, a time limit or a
worker count out of range, an unknown render format or a counter without one is an
``InvalidRequest`` (``UnknownStrategy``) naming the setting, before any work starts.

The time limit is a number of seconds here, at the edge, and the chain turns it into
the call's ``Deadline`` once (``pipeline.run``); every stage inside reads that.

Each setting is named once, as a field of ``Settings``; the field says where else it
goes (``setting(...)``): whether a recorder writes it down (``RECORDED``; ``headers``
only with a render format, ``WITH_RENDER``), whether a served call may set it
(``SERVED``). The command line's options are the fields' names (``--time-limit``), and
``tests/test_cli.py`` holds the two together.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

from .model.arguments import DEFAULT_TIME_LIMIT, check_arguments
from .model.errors import InvalidRequest
from .model.limits import DEFAULT_LIMITS, Limits
from .model.rendering import DEFAULT_HEADERS, Headers, RenderFormat
from .model.rules import choice, kind

if TYPE_CHECKING:
    from .recorder import Recorder
    from .render import Counter

__all__ = [
    "DEFAULT_TIME_LIMIT",
    "RECORDED",
    "SERVED",
    "WITH_RENDER",
    "Settings",
    "recorded_settings",
    "setting",
]


def setting(
    *, recorded: bool = False, with_render: bool = False, served: bool = False
) -> dict[str, bool]:
    """A field of ``Settings``'s metadata: where else the setting goes: ``recorded`` (a
    recorder writes it down; ``with_render``: only when a render format is set),
    ``served`` (a served call's option may set it)."""
    return {"recorded": recorded, "with_render": with_render, "served": served}


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

    strategy: str = field(default="exact", metadata=setting(recorded=True, served=True))
    time_limit: float | None = field(default=None, metadata=setting(recorded=True, served=True))
    workers: int | None = field(default=None, metadata=setting(recorded=True))
    # the format a bundle is rendered in (given as a ``RenderFormat`` or its value; a
    # ``RenderFormat`` once built)
    render: RenderFormat | str | None = field(
        default=None, metadata=setting(recorded=True, served=True)
    )
    # how a rendering frames each item (given as a ``Headers`` or its value; a ``Headers``
    # once built); written down with a format only (a record without it was rendered
    # before the default became ``none``)
    headers: Headers | str = field(
        default=DEFAULT_HEADERS, metadata=setting(recorded=True, with_render=True, served=True)
    )
    counter: Counter | None = field(default=None, metadata=setting(recorded=True))
    limits: Limits = field(default=DEFAULT_LIMITS, metadata=setting())
    ledger: Recorder | None = field(default=None, metadata=setting())

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
        """The settings a recorder writes down (``RECORDED``): each as given (None for a
        default), the render format by its name and the counter by its name and version;
        ``headers`` only with a render format."""
        return recorded_settings({name: getattr(self, name) for name in RECORDED})

    def but(self, **changes: Any) -> Settings:
        """These settings with ``changes`` (checked again)."""
        return replace(self, **changes)


def recorded_settings(given: Mapping[str, Any]) -> dict[str, Any]:
    """What a recorder writes down of a call's settings (``Settings.recorded()``), also
    for settings that could not be built (an invalid call is recorded as given): each
    recorded setting of ``given`` (None when absent), a format by its name, a counter
    by its name and version, those recorded only with a format when it has one."""
    out: dict[str, Any] = {}
    for name in RECORDED:
        value = given.get(name)
        if name in WITH_RENDER:
            if given.get("render") is None:
                continue
            value = str(value if value is not None else DEFAULT_HEADERS)
        elif isinstance(value, RenderFormat):
            value = value.value
        elif name == "counter" and value is not None and not isinstance(value, str):
            value = f"{value.name} {value.version}"
        out[name] = value
    return out


def _named(key: str) -> tuple[str, ...]:
    return tuple(f.name for f in fields(Settings) if f.metadata[key])


# the settings a recorder writes down, those only with a render format, and those a
# served call's options may set: each read from its field
RECORDED = _named("recorded")
WITH_RENDER = _named("with_render")
SERVED = _named("served")
