"""``fit``: the best context of a message list that fits a model, in one call.

Input: a message list as the caller holds it (any provider API's list, or a whole body,
or a framework's message objects), its tools, a model name, and optionally a budget, a
relevance function, a counter and a ledger.
Output: a ``Fitted``: the kept messages as the same kind of list, ready to send, the
tools, the provider body, its token count as billed, and the assembler ``Result``
behind it; or ``FitRefused`` when the required material alone does not fit (or the
time limit ended the search before any selection), or ``InvalidRequest`` naming
``messages[i]`` for a transcript the provider would refuse.

The steps: the list's room (``providers.registry.recognised``: one per provider API,
``assembler.providers.<name>``) checks its shapes and cuts it into units, each with its
forms priced by the model's meter (``render.meters``); their request is made and
validated once, typed (``selection.request_of``); the exact solver picks the most
valuable legal selection within the budget less the body's fixed framing; the chosen
forms go back into a list; the whole body is counted again, and while it exceeds the
budget the excess comes off the items' budget and the solver runs again on the same
typed request with that budget (``render.budget.measured``: the rendering's own
measure-reserve loop). The provider's rules are checked on the body before it is
returned.

With ``ledger``, every solve is recorded, and the ledger's calibration for the model
(from ``Ledger.record_usage``: the provider's billed ``usage`` against our count)
scales every count up before the budget is applied.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..errors import FitRefused
from ..facts import (
    ModelProfile,
    compatible,
    compatible_profile,
    model_profile,
    profiles,
)
from ..model.errors import InvalidRequest
from ..model.numbers import is_number, is_whole
from ..model.types import Request, Result, Status
from ..providers import registry
from ..providers.interface import Api
from ..providers.meter import Meter
from ..providers.units import ELIDE_ABOVE, Unit
from ..render.budget import measured
from ..render.counters import Counter
from ..render.meters import meter_for
from .refusals import refusal_message
from .selection import chosen_forms, recency, request_of, with_budget

if TYPE_CHECKING:
    from ..ledger import Ledger

__all__ = ["FitRefused", "Fitted", "fit"]

Relevance = Callable[[int, Any], float]


@dataclass(frozen=True)
class Fitted:
    """What ``fit`` kept. ``format`` is the list's (the ``NAME`` of its room: a provider
    API's format, or ``langchain``), ``provider`` the model's, whose cache and prices
    apply (``facts.Provider``); ``messages`` is the same kind of list as given
    (the very message objects, a shortened tool result as a copy); ``body()`` the
    provider body; ``tokens`` that body's count as billed by ``counter`` (calibration
    included), at most ``budget``."""

    format: str
    provider: str
    messages: list[Any]
    tools: list[Any]
    system: Any
    tokens: int
    budget: int
    counter: str
    result: Result
    # the typed request the solver was given (the last measuring round's budget)
    request: Request = field(repr=False)
    # indices into the given messages: left out, and sent in a shorter form
    dropped: tuple[int, ...] = ()
    shortened: tuple[int, ...] = ()
    # the fit's other body fields, passed through (a body's model, ...)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)
    # the model family and the body's count before calibration (what usage corrects)
    model: str = ""
    counted: int = 0

    def record_usage(self, ledger: Ledger, usage: Any, *, at: float | None = None) -> float:
        """Record the provider's billed ``usage`` for this body (an SDK response's
        ``usage``, a LangChain ``usage_metadata``, or their dict) in ``ledger``; the
        next ``fit(..., ledger=ledger)`` for this model scales its counts by the
        ledger's calibration. The cache tokens it reports (read, written) are recorded
        with the body's blocks (``at``: when it was sent, default now), so that
        ``assembler ledger cache`` shows its hits and misses. Returns billed / counted."""
        from ..cache.usage import SentBlock, cache_record, parse_usage

        cached = parse_usage(usage)
        billed = cached.input
        # the selected forms in their render order: the provider's (tools, system, turns)
        by_id = {c.id: c for c in self.request.candidates}
        blocks = [
            SentBlock(form, _sha(by_id[form].content or ""), by_id[form].cost)
            for form in self.result.selected
        ]
        record = cache_record(blocks, cached, provider=self.provider, model=self.model, at=at)
        ledger.record_usage(
            model=self.model, counter=self.counter, counted=max(1, self.counted),
            billed=billed, cache=record,
        )  # fmt: skip
        return billed / max(1, self.counted)

    def body(self) -> dict[str, Any]:
        """The provider body: the list under its key with the system prompt and the
        tools in their places (the shape of each format in its room's docstring,
        ``assembler.providers.<name>``; LangChain's as Chat Completions dicts); a given
        body's other fields passed through."""
        return registry.named(self.format).assembled(
            self.messages, self.system, self.tools, self.extra
        )


def _sha(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def fit(
    messages: Sequence[Any] | Mapping[str, Any],
    *,
    model: str,
    tools: Sequence[Any] | None = None,
    budget: int | None = None,
    system: Any = None,
    relevance: Relevance | None = None,
    counter: Counter | None = None,
    output_tokens: int | None = None,
    elide_above: int = ELIDE_ABOVE,
    time_limit: float | None = None,
    ledger: Ledger | None = None,
    format: str | None = None,
) -> Fitted:
    """Keep the most valuable part of ``messages`` that fits ``model``.

    ``messages`` is a list (any provider API's, or LangChain messages) or a whole body
    (its list under the API's key, with its system prompt and tools); ``format`` (a
    provider API's format name) names the list's format when its shape and the model do
    not. ``budget`` (tokens for the whole request body) defaults to the model's context
    window less ``output_tokens`` (default: the model's output limit), and may not
    exceed it; a model this package does not know is fitted as compatible
    (``facts.compatible``: a chat of the provider whose data says so) given
    ``counter`` and ``budget`` (its window). ``relevance(index, message)`` in [0, 1]
    values each message (default: recency, from 0.1 for the oldest to 1.0 for the
    newest). Tool results above ``elide_above`` tokens may be sent as head and tail, or
    as a placeholder."""
    profile = _profile(model, counter, budget)
    meter = meter_for(profile, counter)
    if ledger is not None:
        meter = meter.calibrated(ledger.calibration(profile.name, meter.counter.name))
    window = profile.context_window - (
        profile.max_output if output_tokens is None else output_tokens
    )
    if budget is None:
        budget = window
    elif not is_whole(budget) or budget < 0:
        raise InvalidRequest("budget", f"must be a whole number of tokens >= 0, not {budget!r}")
    elif budget > window:
        raise InvalidRequest(
            "budget", f"{budget} is above {profile.name}'s input window of {window} tokens"
        )
    if not is_whole(elide_above) or elide_above < 0:
        raise InvalidRequest(
            "elide_above", f"must be a whole number of tokens >= 0, not {elide_above!r}"
        )
    api, where = registry.recognised(messages, profile, format)
    extra: dict[str, Any] = {}
    listed: Any = messages
    if isinstance(messages, Mapping):
        # a whole body: its system prompt and tools unless given, the rest passed through
        key = api.LIST_KEY if where not in messages else where
        extra = {k: v for k, v in messages.items() if k not in (key, api.SYSTEM_KEY, "tools")}
        system = messages.get(api.SYSTEM_KEY) if system is None else system
        tools = messages.get("tools") if tools is None else tools
        listed = messages.get(key, [])
    tools = [] if tools is None else tools
    registry.check_shapes(api, listed, tools, where, model)
    tools = list(tools)
    units = api.units(listed, tools, system, meter, elide_above, where)
    score = relevance or (lambda index, _message: recency(index, len(listed)))
    weights = [
        1.0 if u.message < 0 else _relevance(score(u.message, listed[u.message]), u.message)
        for u in units
    ]
    overheads = api.overheads(meter, bool(tools))
    return _solve(
        api, listed, tools, system, units, weights, meter, budget, overheads, time_limit,
        ledger, extra, where,
    )  # fmt: skip


def _profile(model: str, counter: Counter | None, budget: int | None) -> ModelProfile:
    """The model's profile; a model this package does not know, given a counter and a
    budget, is a compatible one whose window is the budget."""
    try:
        return model_profile(model)
    except InvalidRequest:
        if counter is None or budget is None or not isinstance(model, str) or not model:
            raise InvalidRequest(
                "model",
                f"unknown model {model!r}: give counter= (its tokenizer) and budget= (its"
                f" window) to fit it as {compatible()[1]}, or one of the known families:"
                f" {', '.join(sorted(p.name for p in profiles()))}",
            ) from None
        window = budget if is_whole(budget) else 0
        return compatible_profile(model, max(window, 0))


def _relevance(value: Any, index: int) -> float:
    if not is_number(value) or not 0 <= value <= 1:
        raise InvalidRequest(f"relevance({index})", f"must be a number in [0, 1], not {value!r}")
    return float(value)


def _solve(
    api: Api,
    messages: Sequence[Any],
    tools: list[Any],
    system: Any,
    units: list[Unit],
    weights: list[float],
    meter: Meter,
    budget: int,
    overheads: list[tuple[str, int]],
    time_limit: float | None,
    ledger: Ledger | None,
    extra: dict[str, Any],
    where: str,
) -> Fitted:
    from ..api import assemble

    fixed = sum(tokens for _, tokens in overheads)
    # the typed request, made and validated once; each round changes only its budget
    request = request_of(units, budget - fixed, weights)

    def attempt(reserve: int) -> tuple[tuple[Fitted, dict[str, Any], int], int]:
        trial = with_budget(request, budget - fixed - reserve)
        result = assemble(trial, time_limit=time_limit, ledger=ledger)
        if result.status is not Status.BUNDLE:
            message = refusal_message(result, units, budget, overheads, reserve, meter, where)
            raise FitRefused(message, result)
        chosen = chosen_forms(units, result)
        fitted = Fitted(
            format=api.NAME,
            provider=meter.profile.provider.value,
            messages=api.back(messages, units, chosen),
            tools=[chosen[u.key].payload for u in units if u.message == -1 and u.key in chosen],
            system=system,
            tokens=0,
            budget=budget,
            counter=meter.counter.name,
            result=result,
            request=trial,
            dropped=tuple(
                sorted({u.message for u in units if u.message >= 0 and u.key not in chosen})
            ),
            shortened=tuple(
                sorted(
                    {u.message for u in units if u.key in chosen and chosen[u.key].name != "full"}
                )
            ),
            extra=extra,
        )
        body = fitted.body()
        api.check(body, system_first=False)
        total = api.tokens(meter, body)
        return (fitted, body, total), total

    # the one measure-reserve loop (render.budget.measured), on the provider body's count
    fitted, body, total = measured(budget, attempt)
    raw = api.tokens(meter.calibrated(1.0), body) if meter.factor != 1 else total
    return replace(fitted, tokens=total, model=meter.profile.name, counted=raw)
