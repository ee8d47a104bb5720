"""A line or an HTTP body as JSON: UTF-8 text only, then ``load_json``'s checks.

Input: the bytes of a JSON line or of an HTTP body, the ``Limits``.
Output: the decoded JSON value, or ``InvalidRequest`` at ``$``.

The protocol's text is UTF-8 (``models/session.md``). Python's JSON reader, and the
library's ``load_json`` with it, also takes UTF-16 and UTF-32 as RFC 8259 once
allowed; the server does not: such a body, with a byte order mark or without, is
refused with the encoding it is in, and so is a UTF-8 byte order mark, which JSON
sent over a network never carries (RFC 8259 section 8.1) and which would otherwise be
one invisible character more in front of the first key.
"""

from __future__ import annotations

import codecs
import json
from typing import Any

from ..model.errors import InvalidRequest
from ..model.jsontext import load_json
from ..model.limits import Limits

__all__ = ["load_utf8_json"]

_MARKS = ((codecs.BOM_UTF32_LE, "UTF-32-LE"), (codecs.BOM_UTF32_BE, "UTF-32-BE"),
          (codecs.BOM_UTF8, "UTF-8"), (codecs.BOM_UTF16_LE, "UTF-16-LE"),
          (codecs.BOM_UTF16_BE, "UTF-16-BE"))  # fmt: skip


def load_utf8_json(raw: bytes, limits: Limits) -> Any:
    """The JSON value of ``raw``, which must be UTF-8 without a byte order mark."""
    for mark, name in _MARKS:
        if raw.startswith(mark):
            raise InvalidRequest(
                "$",
                f"starts with a {name} byte order mark: the server reads UTF-8 only,"
                " without a byte order mark; send the JSON as UTF-8",
            )
    encoding = json.detect_encoding(raw)
    if not encoding.startswith("utf-8"):
        raise InvalidRequest(
            "$",
            f"looks like {encoding.upper()} (zero bytes between the characters): the server"
            " reads UTF-8 only; send the JSON as UTF-8",
        )
    return load_json(raw, limits)
