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
from ..providers.units import ELIDE_ABOVE, Elision, Unit
from ..render.budget import measured
from ..render.counters import Counter
from ..render.meters import meter_for
from .refusals import refusal_message
from .selection import chosen_forms, recency, request_of, with_budget, with_questions
from .values import check_json

if TYPE_CHECKING:
    from ..ledger import Ledger

__all__ = ["FitRefused", "Fitted", "fit"]

Relevance = Callable[[int, Any], float]
# a whole body's count as the provider bills it (its count_tokens endpoint, ...)
BodyCounter = Callable[[dict[str, Any]], int]


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
    # the format the list was given in, when fit converted it (``source=``)
    converted_from: str | None = None

    def __repr__(self) -> str:
        # the messages, body and result can be megabytes: say what was kept
        return (
            f"Fitted(format={self.format!r}, model={self.model!r}, messages={len(self.messages)},"
            f" dropped={len(self.dropped)}, shortened={len(self.shortened)},"
            f" tokens={self.tokens}, budget={self.budget}, counter={self.counter!r})"
        )

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
    model: str | None = None,
    tools: Sequence[Any] | None = None,
    budget: int | None = None,
    system: Any = None,
    relevance: Relevance | None = None,
    counter: Counter | str | None = None,
    output_tokens: int | None = None,
    window: int | None = None,
    elide_above: int = ELIDE_ABOVE,
    time_limit: float | None = None,
    ledger: Ledger | None = None,
    format: str | None = None,
    source: str | None = None,
    answers_with_questions: bool = True,
    count_body: BodyCounter | None = None,
) -> Fitted:
    """Keep the most valuable part of ``messages`` that fits ``model``.

    ``messages`` is a list (any provider API's, or LangChain messages) or a whole body
    (its list under the API's key, with its system prompt, tools and ``model``: then
    ``model=`` may be left out). The list's format is recognised from its shape; one in
    another provider's shape than the model's is an ``InvalidRequest`` naming the entry,
    unless ``source`` names it (then it is converted to the model's format); ``format``
    names the model's API when it has several. ``budget`` (tokens for the whole request
    body) defaults to the model's context window (or ``window``) less the output it
    reserves: ``output_tokens``, else the body's own field (``max_tokens``,
    ``max_completion_tokens``, ``max_output_tokens``,
    ``generationConfig.maxOutputTokens``), else the model's output limit; it may not
    exceed that. A model this package does not know is fitted given ``counter`` and
    ``window`` (or ``budget``, taken as its window). ``relevance(index, message)`` in
    [0, 1] values each message (default: recency, from 0.1 for the oldest to 1.0 for the
    newest). Tool results above ``elide_above`` tokens may be sent shortened (head and
    tail at several sizes) or as a placeholder. ``answers_with_questions``: an
    assistant turn is kept only with the user turn it answers (the conversation reads
    in order). ``counter`` counts texts (a ``Counter``, or a name: ``o200k_base``,
    ``utf8-bytes``, ``ctok`` where the ``ctok`` package is installed);
    ``count_body(body) -> int`` counts the whole body as the provider bills it (an
    SDK's token-counting call) and is what the budget is checked against."""
    from ..model.bugs import internal_errors

    with internal_errors("fit"):
        return _fit(
            messages, model, tools, budget, system, relevance, counter, output_tokens, window,
            elide_above, time_limit, ledger, format, source, answers_with_questions, count_body,
        )  # fmt: skip


def _fit(
    messages: Any,
    model: str | None,
    tools: Any,
    budget: Any,
    system: Any,
    relevance: Relevance | None,
    counter: Counter | str | None,
    output_tokens: Any,
    window: Any,
    elide_above: Any,
    time_limit: float | None,
    ledger: Ledger | None,
    format: str | None,
    source: str | None,
    answers_with_questions: bool,
    count_body: BodyCounter | None = None,
) -> Fitted:
    model = _model_named(messages, model)
    if count_body is not None and not callable(count_body):
        raise InvalidRequest(
            "count_body", f"must be a function of the body, not {count_body!r:.40}"
        )
    for name, value in (("budget", budget), ("output_tokens", output_tokens),
                        ("window", window), ("elide_above", elide_above)):  # fmt: skip
        if value is not None and (not is_whole(value) or value < 0):
            raise InvalidRequest(name, f"must be a whole number of tokens >= 0, not {value!r:.40}")
    if isinstance(counter, str):
        counter = _counter_named(counter, model)
    profile, known = _profile(model, counter, window if window is not None else budget)
    api, given_api, where = registry.recognised(
        messages, profile, format, model=model, known=known, source=source
    )
    extra: dict[str, Any] = {}
    listed: Any = messages
    body: Mapping[str, Any] = {}
    if isinstance(messages, Mapping):
        # a whole body: its system prompt and tools unless given, the rest passed through
        body = messages
        check_json(body, "body")
        registry.check_body(given_api, body)
        key = where if where in body else given_api.LIST_KEY
        extra = {k: v for k, v in body.items() if k not in (key, given_api.SYSTEM_KEY, "tools")}
        system = body.get(given_api.SYSTEM_KEY) if system is None else system
        tools = body.get("tools") if tools is None else tools
        listed = body.get(key, [])
    elif given_api not in registry.FRAMEWORKS:
        check_json(listed, where)
    if given_api not in registry.FRAMEWORKS:
        check_json(tools, "tools")
        check_json(system, "system")
    tools = [] if tools is None else tools
    if isinstance(listed, str) and given_api.LIST_KEY == "input":
        listed = [{"role": "user", "content": listed}]  # the Responses API's one user message
    registry.check_shapes(given_api, listed, where)
    registry.check_tools(given_api, tools, model, api)
    tools = list(tools)
    if given_api is not api:
        from .convert import converted

        listed, system, tools = converted(given_api, api, listed, system, tools, where)
        extra = {}
    meter = meter_for(profile, counter)
    if ledger is not None:
        meter = meter.calibrated(ledger.calibration(profile.name, meter.counter.name))
    budget = _budget(profile, api, body, budget, output_tokens, window)
    if count_body is not None:
        # the body counter's scale, measured once on the whole list: every piece is
        # priced at it, and the measured rounds below correct what is left
        whole = api.assembled(listed, system, tools, extra)
        estimated = api.tokens(meter, whole)
        if estimated > 0:
            meter = replace(meter, factor=meter.factor * _counted(count_body, whole) / estimated)
    elision = Elision(
        elide_above, max(0, budget - sum(t for _, t in api.overheads(meter, bool(tools))))
    )
    units = api.units(listed, tools, system, meter, elision, where)
    if answers_with_questions:
        units = with_questions(units)
    score = relevance or (lambda index, _message: recency(index, len(listed)))
    weights = [
        1.0 if u.message < 0 else _relevance(score, u.message, listed[u.message]) for u in units
    ]
    overheads = api.overheads(meter, bool(tools))
    fitted = _solve(
        api, listed, tools, system, units, weights, meter, budget, overheads, time_limit,
        ledger, extra, where, count_body,
    )  # fmt: skip
    if given_api is not api:
        fitted = replace(fitted, converted_from=given_api.NAME)
    return fitted


def _counter_named(name: str, model: str) -> Counter:
    """A counter by name; ``ctok`` alone is the generation of the model's tokenizer."""
    from ..render.meters import counter_named

    if name == "ctok":
        try:
            generation = model_profile(model).tokenizer or "3.0"
        except InvalidRequest:
            generation = "3.0"
        name = f"ctok:{generation}"
    return counter_named(name)


def _counted(count_body: BodyCounter, body: dict[str, Any]) -> int:
    try:
        value = count_body(body)
    except Exception as exc:
        raise InvalidRequest(
            "count_body", f"the body counter raised {type(exc).__name__}: {exc}"[:300]
        ) from exc
    if not is_whole(value) or value < 0:
        raise InvalidRequest(
            "count_body", f"must return a whole number of tokens, not {value!r:.40}"
        )
    return value


def _model_named(messages: Any, model: str | None) -> str:
    """The model to fit for: ``model``, or the body's own; when both are named they
    must be one model (a body sent to another model than it was fitted for is wrong)."""
    named = messages.get("model") if isinstance(messages, Mapping) else None
    if named is not None and not isinstance(named, str):
        raise InvalidRequest("model", f"the body's model must be a name, not {named!r:.40}")
    if model is None:
        if named is None:
            raise InvalidRequest(
                "model", "name the model the body is for (model=, --model, or its 'model' field)"
            )
        return named
    if not isinstance(model, str) or not model.strip():
        raise InvalidRequest("model", f"must be a model name, not {model!r:.40}")
    if named is not None and named != model and not _same_model(named, model):
        raise InvalidRequest(
            "model",
            f"the body is for {named!r}, but fit was asked to fit {model!r}: a body is"
            " fitted for the model it is sent to (leave model= out to use the body's)",
        )
    return model


def _same_model(one: str, other: str) -> bool:
    try:
        return model_profile(one) == model_profile(other)
    except InvalidRequest:
        return False


def _budget(
    profile: ModelProfile,
    api: Api,
    body: Mapping[str, Any],
    budget: int | None,
    output_tokens: int | None,
    window: int | None,
) -> int:
    """The budget: at most the window less the output reserved (``output_tokens``, else
    the body's own field, else the model's output limit), the default."""
    context = profile.context_window if window is None else window
    reserved, why = _reserved(profile, api, body, output_tokens)
    room = max(0, context - reserved)
    if budget is None:
        return room
    if budget > room:
        raise InvalidRequest(
            "budget",
            f"{budget} is above {profile.name}'s input window of {room} tokens: its"
            f" {context}-token context less {reserved} reserved for output ({why}; reserve"
            " less with output_tokens= or the body's own field)",
        )
    return budget


def _reserved(
    profile: ModelProfile, api: Api, body: Mapping[str, Any], output_tokens: int | None
) -> tuple[int, str]:
    if output_tokens is not None:
        return output_tokens, "output_tokens="
    for path in getattr(api, "OUTPUT_FIELDS", ()):
        value: Any = body
        for key in path.split("."):
            value = value.get(key) if isinstance(value, Mapping) else None
        if is_whole(value):
            return value, f"the body's {path}"
    return profile.max_output, f"the model's output limit; the body sets none of {_fields(api)}"


def _fields(api: Api) -> str:
    fields = getattr(api, "OUTPUT_FIELDS", ())
    return ", ".join(fields) if fields else "its output fields"


def _profile(model: str, counter: Counter | None, window: int | None) -> tuple[ModelProfile, bool]:
    """The model's profile and whether the tables know it; a model they do not know,
    given a counter and a window, is a compatible one of that window."""
    try:
        return model_profile(model), True
    except InvalidRequest:
        if counter is None or window is None:
            raise InvalidRequest(
                "model",
                f"unknown model {model!r}: give counter= (its tokenizer) and window= (its"
                f" context window) to fit it as {compatible()[1]}, or one of the known families:"
                f" {', '.join(sorted(p.name for p in profiles()))}",
            ) from None
        return compatible_profile(model, window), False


def _relevance(score: Relevance, index: int, message: Any) -> float:
    try:
        value = score(index, message)
    except Exception as exc:
        raise InvalidRequest(
            "relevance",
            f"the relevance callback raised {type(exc).__name__} on message {index}: {exc}"[:300],
        ) from exc
    if not is_number(value) or not 0 <= value <= 1:
        raise InvalidRequest(
            f"relevance({index})", f"must be a number in [0, 1], not {value!r:.40}"
        )
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
    count_body: BodyCounter | None = None,
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
        total = api.tokens(meter, body) if count_body is None else _counted(count_body, body)
        return (fitted, body, total), total

    # the one measure-reserve loop (render.budget.measured), on the provider body's count
    fitted, body, total = measured(budget, attempt)
    raw = total
    if meter.factor != 1 and count_body is None:
        raw = api.tokens(meter.calibrated(1.0), body)
    return replace(fitted, tokens=total, model=meter.profile.name, counted=raw)
