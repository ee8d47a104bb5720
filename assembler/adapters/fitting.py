"""``fit``: the best context of a message list that fits a model, in one call.

Input: a message list as the caller holds it (OpenAI Chat Completions dicts, Anthropic
Messages dicts or a whole Anthropic body, or LangChain messages), its tools, a model
name, and optionally a budget, a relevance function, a counter and a ledger.
Output: a ``Fitted``: the kept messages as the same kind of list, ready to send, the
tools, the provider body, its token count as billed, and the assembler ``Result``
behind it; or ``FitRefused`` when the required material alone does not fit (or the
time limit ended the search before any selection), or ``InvalidRequest`` naming
``messages[i]`` for a transcript the provider would refuse.

The steps: the adapter cuts the list into units (``units``), each with its forms
priced by the model's meter (``render.registry``); the exact solver picks the most
valuable legal selection within the budget less the body's fixed framing; the
chosen forms go back into a list; the whole body is counted again, and while it
exceeds the budget (Anthropic's merged turns can only lower it) the excess comes off
the items' budget and the solver runs again (``render.budget.Rounds``: the rendering's
own measure-reserve rule). The provider's rules are checked on the body before it is
returned.

With ``ledger``, every solve is recorded, and the ledger's calibration for the model
(from ``Ledger.record_usage``: the provider's billed ``usage`` against our count)
scales every count up before the budget is applied.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..model.errors import AssemblerError, InvalidRequest
from ..model.types import Result, Status
from ..render.budget import Rounds
from ..render.counters import Counter
from ..render.registry import Meter, meter_for, model_profile
from . import anthropic, langchain, openai
from .units import ELIDE_ABOVE, Form, Unit, chosen_forms, recency, request_of

if TYPE_CHECKING:
    from ..ledger import Ledger

__all__ = ["FitRefused", "Fitted", "billed_input_tokens", "fit"]

Relevance = Callable[[int, Any], float]


class FitRefused(AssemblerError):
    """The required material (system prompt, tools, the first and last user turns,
    the newest turn) does not fit the budget, or the search found nothing in time.
    ``result`` is the assembler's answer, with its refusal."""

    def __init__(self, message: str, result: Result) -> None:
        super().__init__(message)
        self.result = result


@dataclass(frozen=True)
class Fitted:
    """What ``fit`` kept. ``messages`` is the same kind of list as given (the very
    message objects, a shortened tool result as a copy); ``body()`` the provider body;
    ``tokens`` that body's count as billed by ``counter`` (calibration included),
    at most ``budget``."""

    provider: str
    messages: list[Any]
    tools: list[Any]
    system: Any
    tokens: int
    budget: int
    counter: str
    result: Result
    request: dict[str, Any] = field(repr=False)
    # indices into the given messages: left out, and sent in a shorter form
    dropped: tuple[int, ...] = ()
    shortened: tuple[int, ...] = ()
    # the fit's other body fields, passed through (an Anthropic body's model, ...)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)
    # the model family and the body's count before calibration (what usage corrects)
    model: str = ""
    counted: int = 0

    def record_usage(self, ledger: Ledger, usage: Any) -> float:
        """Record the provider's billed ``usage`` for this body (an SDK response's
        ``usage``, a LangChain ``usage_metadata``, or their dict) in ``ledger``; the
        next ``fit(..., ledger=ledger)`` for this model scales its counts by the
        ledger's calibration. Returns billed / counted."""
        billed = billed_input_tokens(usage)
        ledger.record_usage(
            model=self.model, counter=self.counter, counted=max(1, self.counted), billed=billed
        )
        return billed / max(1, self.counted)

    def body(self) -> dict[str, Any]:
        """The provider body: ``{"messages", "tools"?}`` (OpenAI, LangChain as OpenAI
        dicts) or ``{"system"?, "messages", "tools"?}`` (Anthropic)."""
        messages = self.messages
        if self.provider == "langchain":
            from langchain_core.messages import convert_to_openai_messages

            messages = convert_to_openai_messages(list(messages))
            if self.system is not None:
                messages = [*convert_to_openai_messages([self.system]), *messages]
        body: dict[str, Any] = {**self.extra}
        if self.provider == "anthropic" and self.system:
            body["system"] = self.system
        body["messages"] = list(messages)
        if self.tools:
            body["tools"] = (
                langchain.tool_dicts(self.tools) if self.provider == "langchain" else self.tools
            )
        return body


def billed_input_tokens(usage: Any) -> int:
    """The input tokens a provider billed: OpenAI's ``prompt_tokens``, Anthropic's
    ``input_tokens`` plus its cache writes and reads, LangChain's ``input_tokens``."""

    def get(key: str) -> int:
        value = usage.get(key) if isinstance(usage, Mapping) else getattr(usage, key, None)
        return int(value) if isinstance(value, int) and not isinstance(value, bool) else 0

    if get("prompt_tokens"):
        return get("prompt_tokens")
    total = (
        get("input_tokens") + get("cache_creation_input_tokens") + get("cache_read_input_tokens")
    )
    if total < 1:
        raise InvalidRequest("usage", "has no prompt_tokens or input_tokens to calibrate with")
    return total


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
) -> Fitted:
    """Keep the most valuable part of ``messages`` that fits ``model``.

    ``budget`` (tokens for the whole request body) defaults to the model's context
    window less ``output_tokens`` (default: the model's output limit), and may not
    exceed it. ``relevance(index, message)`` in [0, 1] values each message (default:
    recency, from 0.1 for the oldest to 1.0 for the newest). Tool results above
    ``elide_above`` tokens may be sent as head and tail, or as a placeholder."""
    profile = model_profile(model)
    meter = meter_for(profile, counter)
    if ledger is not None:
        meter = meter.calibrated(ledger.calibration(profile.name, meter.counter.name))
    window = profile.context_window - (
        profile.max_output if output_tokens is None else output_tokens
    )
    if budget is None:
        budget = window
    elif not isinstance(budget, int) or isinstance(budget, bool) or budget < 0:
        raise InvalidRequest("budget", f"must be a whole number of tokens >= 0, not {budget!r}")
    elif budget > window:
        raise InvalidRequest(
            "budget", f"{budget} is above {profile.name}'s input window of {window} tokens"
        )
    extra: dict[str, Any] = {}
    if isinstance(messages, Mapping):
        # a whole Anthropic body: its system and tools unless given, the rest passed through
        extra = {k: v for k, v in messages.items() if k not in ("messages", "system", "tools")}
        system = messages.get("system") if system is None else system
        tools = messages.get("tools") if tools is None else tools
        messages = messages.get("messages", [])
    if not isinstance(messages, Sequence) or isinstance(messages, str | bytes):
        raise InvalidRequest("messages", "must be a list of messages")
    tools = list(tools or [])
    provider = "langchain" if langchain.is_langchain(messages) else profile.provider
    units = _units(provider, messages, tools, system, meter, elide_above)
    score = relevance or (lambda index, _message: recency(index, len(messages)))
    weights = [
        1.0 if u.message < 0 else _relevance(score(u.message, messages[u.message]), u.message)
        for u in units
    ]
    fixed = _fixed(provider, meter, bool(tools))
    return _solve(
        provider, messages, tools, system, units, weights, meter, budget, fixed, time_limit,
        ledger, extra,
    )  # fmt: skip


def _relevance(value: Any, index: int) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise InvalidRequest(f"relevance({index})", f"must be a number in [0, 1], not {value!r}")
    return float(value)


def _units(
    provider: str,
    messages: Sequence[Any],
    tools: list[Any],
    system: Any,
    meter: Meter,
    elide_above: int,
) -> list[Unit]:
    if provider == "langchain":
        units = langchain.units_of(messages, tools, meter, elide_above)
        if system is not None:
            from langchain_core.messages import convert_to_openai_messages

            (as_dict,) = convert_to_openai_messages([system])
            units.append(_system_unit(system, meter.openai_message(as_dict), as_dict["content"]))
        return units
    if provider == "openai":
        units = openai.units_of(messages, tools, meter, elide_above)
        if system is not None:
            message = {"role": "system", "content": system}
            units.append(_system_unit(system, meter.openai_message(message), system))
        return units
    units = anthropic.units_of(messages, tools, meter, elide_above)
    head = anthropic.system_unit(system, meter)
    return units if head is None else [*units, head]


def _system_unit(system: Any, tokens: int, text: Any) -> Unit:
    from ..model.types import Kind

    return Unit("system", -2, 0, Kind.SYSTEM, (Form("full", system, tokens),), required=True,
                text=str(text))  # fmt: skip


def _fixed(provider: str, meter: Meter, with_tools: bool) -> int:
    if provider == "anthropic":
        return meter.anthropic_overhead(with_tools)
    return meter.openai_overhead() + (12 if with_tools else 0)


def _solve(
    provider: str,
    messages: Sequence[Any],
    tools: list[Any],
    system: Any,
    units: list[Unit],
    weights: list[float],
    meter: Meter,
    budget: int,
    fixed: int,
    time_limit: float | None,
    ledger: Ledger | None,
    extra: dict[str, Any],
) -> Fitted:
    from ..api import assemble

    rounds = Rounds(budget)
    while True:
        request = request_of(units, budget - fixed - rounds.reserve, weights)
        result = assemble(request, time_limit=time_limit, ledger=ledger)
        if result.status is not Status.BUNDLE:
            reason = result.refusal.message if result.refusal is not None else "time limit"
            raise FitRefused(
                f"nothing fits {budget} tokens for {meter.profile.name}: {reason}", result
            )
        chosen = chosen_forms(units, result)
        kept_messages = _messages_back(provider, messages, units, chosen)
        kept_tools = [chosen[u.key].payload for u in units if u.message == -1 and u.key in chosen]
        fitted = Fitted(
            provider=provider,
            messages=kept_messages,
            tools=kept_tools,
            system=system,
            tokens=0,
            budget=budget,
            counter=meter.counter.name,
            result=result,
            request=request,
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
        _check(provider, body)
        total = meter.body(body)
        if rounds.fits(total):
            raw = total if meter.factor == 1.0 else meter.calibrated(1.0).body(body)
            return replace(fitted, tokens=total, model=meter.profile.name, counted=raw)


def _messages_back(
    provider: str, messages: Sequence[Any], units: list[Unit], chosen: dict[str, Form]
) -> list[Any]:
    if provider == "anthropic":
        return anthropic.messages_of(messages, units, chosen)
    return openai.messages_of(units, chosen)


def _check(provider: str, body: dict[str, Any]) -> None:
    """The provider's rules on the body, before it is returned (a failure is a bug)."""
    from ..render.formats import check_anthropic, check_openai

    if provider == "anthropic":
        check_anthropic({"system": [], **body})
    else:
        check_openai(body["messages"])
