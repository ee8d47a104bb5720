"""``fit`` from JSON, for any language: the options by name, the answer as JSON.

Input: a provider body (or a bare message list) as JSON text or bytes, and ``fit``'s
options by name as text (a command line's or a query string's: ``model``, ``budget``,
``output_tokens``, ``window``, ``format``, ``source``, ``counter``, ``elide_above``,
``answers_with_questions``, ``time_limit``).
Output: ``fitted_json``: the exit code (``assembler/exits.py``: 0 fitted, 1 refused,
3 undecided) and the answer as a JSON object: ``{"exit", "body", "fit": {format,
model, tokens, budget, counter, dropped, shortened, converted_from}}``, or
``{"exit", "refused": message, "result"}``. Bad input is ``InvalidRequest`` (exit 2),
which the caller reports as it reports every other error. ``assembler fit`` and the
server's ``POST /fit`` (``fit_reply``, on a solver thread) both answer through it, so
they agree.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..adapters.fitting import FitRefused, fit
from ..adapters.values import MAX_DEPTH
from ..deadline import Deadline
from ..exits import EXIT, EXIT_BUNDLE
from ..model.errors import InvalidRequest
from ..model.jsontext import load_json
from ..model.limits import Limits
from .service import Reply, error

if TYPE_CHECKING:
    from .service import Service

__all__ = ["OPTIONS", "fit_reply", "fitted_json", "options_of"]

# each option by name, and how its text is read
OPTIONS: dict[str, str] = {
    "model": "text",
    "budget": "whole",
    "output_tokens": "whole",
    "window": "whole",
    "format": "text",
    "source": "text",
    "counter": "text",
    "elide_above": "whole",
    "answers_with_questions": "flag",
    "time_limit": "seconds",
}


def options_of(given: Mapping[str, str | None]) -> dict[str, Any]:
    """``fit``'s keyword arguments from options given as text (None: not given)."""
    out: dict[str, Any] = {}
    for name, text in given.items():
        if name not in OPTIONS:
            raise InvalidRequest(name, f"unknown option: the options are {', '.join(OPTIONS)}")
        if text is None:
            continue
        kind = OPTIONS[name]
        if kind == "text":
            out[name] = text
        elif kind == "whole":
            if not (text.isascii() and text.isdigit() and len(text) <= 12):
                raise InvalidRequest(name, f"must be a whole number of tokens, not {text!r:.40}")
            out[name] = int(text)
        elif kind == "flag":
            if text not in ("true", "false"):
                raise InvalidRequest(name, f"must be true or false, not {text!r:.40}")
            out[name] = text == "true"
        else:
            try:
                seconds = float(text)
            except ValueError:
                seconds = -1.0
            if not 0 < seconds < float("inf"):
                raise InvalidRequest(
                    name, f"must be a positive number of seconds, not {text!r:.40}"
                )
            out[name] = seconds
    return out


def fitted_json(
    text: str | bytes, options: Mapping[str, Any], limits: Limits
) -> tuple[int, dict[str, Any]]:
    """The exit code and the JSON answer of fitting the body ``text`` (see the module)."""
    # a provider body nests deeper than a request (a tool's JSON Schema): fit's own bound
    deeper = replace(limits, max_depth=max(limits.max_depth, MAX_DEPTH))
    body = load_json(text, deeper)
    try:
        fitted = fit(body, **options)
    except FitRefused as refused:
        code = EXIT[refused.result.status]
        return code, {"exit": code, "refused": str(refused), "result": refused.result.to_dict()}
    return EXIT_BUNDLE, {
        "exit": EXIT_BUNDLE,
        "body": fitted.body(),
        "fit": {
            "format": fitted.format,
            "model": fitted.model,
            "tokens": fitted.tokens,
            "budget": fitted.budget,
            "counter": fitted.counter,
            "dropped": list(fitted.dropped),
            "shortened": list(fitted.shortened),
            "converted_from": fitted.converted_from,
        },
    }


async def fit_reply(service: Service, body: bytes | None, query: Mapping[str, str]) -> Reply:
    """``POST /fit``: the body fitted on a solver thread within the call's time limit
    (the server's unless the query's ``time_limit`` is lower), as a reply: 200 with the
    fitted body (exit 0) or the refusal (exit 1, 3), or the error reply of any other
    call (400 for bad input, exit 2)."""
    arrived = time.monotonic()
    config = service.config
    try:
        options = options_of(dict(query))
        seconds = min(options.pop("time_limit", config.time_limit), config.time_limit)
        deadline = Deadline.after(seconds, since=arrived)

        def work() -> tuple[int, bytes]:
            code, answer = fitted_json(
                bytes(body or b""), {**options, "time_limit": max(0.001, deadline.left())},
                config.limits,
            )  # fmt: skip
            return code, json.dumps(answer, ensure_ascii=False, separators=(",", ":")).encode()

        service.in_flight += 1
        try:
            code, text = await service._solve(work, deadline, seconds)
        finally:
            service.in_flight -= 1
            service.answered += 1
    except Exception as exc:
        return service.count(error(exc))
    return Reply(code, 200, text)
