"""``assemble``: request in, result out, for every strategy.

Input: a request (a mapping of parsed JSON, or a typed ``Request``) and the call's
``Settings`` (or the same as keyword arguments: ``assemble(request, strategy=...,
time_limit=..., render=..., ledger=...)``).
Output: a ``Result``; with a recorder (``ledger=``) the compilation is also recorded.
Bad input is an ``InvalidRequest`` (or another input error) naming the field, a request
over the size ``Limits`` a ``RequestTooLarge``, and a bug an ``InternalError``.

The chain itself is ``pipeline.run``: this module only builds the settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .model.bugs import internal_errors
from .model.errors import InvalidRequest
from .model.rules import shown
from .model.types import Request, Result
from .pipeline import run
from .settings import Settings, recorded_settings

__all__ = ["assemble", "settings_for"]


def assemble(
    request: Mapping[str, Any] | Request, settings: Settings | None = None, **options: Any
) -> Result:
    """Assemble the bundle for one request.

    ``settings`` (a ``Settings``), or its fields as keyword arguments (over
    ``settings`` when both are given): ``strategy``, ``time_limit``, ``workers``,
    ``render`` (a format: the result carries its ``Rendering`` and forms without content
    are gated ``no-content``), ``counter`` (needs ``render``: each form's cost is
    counted from its rendered block and the whole rendering fits the budget; the result
    is that of the priced request, ``assembler.render.priced_request``), ``limits``,
    ``ledger`` (an ``assembler.Ledger`` or any recorder: the request is recorded before
    solving, then its outcome; recording never changes the answer)."""
    return run(request, settings_for(request, settings, options))[0]


def settings_for(
    request: object, settings: Settings | None, options: Mapping[str, Any]
) -> Settings:
    """``settings`` with ``options`` over it (a ``Settings`` built from ``options`` alone
    when ``settings`` is None); settings that cannot be built are an input error, told
    to the recorder among the options as an invalid call."""
    with internal_errors("assemble"):
        try:
            if settings is None:
                return Settings(**options)
            if not isinstance(settings, Settings):
                raise InvalidRequest(
                    "settings", f"must be an assembler.Settings, not {shown(settings)}"
                )
            return settings.but(**options) if options else settings
        except TypeError as error:
            unknown = sorted(set(options) - set(Settings.__dataclass_fields__))
            if not unknown:
                raise
            raise InvalidRequest(
                unknown[0],
                f"is not a setting (settings: {', '.join(Settings.__dataclass_fields__)})",
            ) from error
        except InvalidRequest as error:
            given = {**_fields(settings), **options}
            ledger = given.get("ledger")
            if ledger is not None:
                ledger.invalid(request, recorded_settings(given), error)
            raise


def _fields(settings: Settings | None) -> dict[str, Any]:
    if not isinstance(settings, Settings):
        return {"strategy": Settings.__dataclass_fields__["strategy"].default}
    return {name: getattr(settings, name) for name in Settings.__dataclass_fields__}
