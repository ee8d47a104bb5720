"""JSON text to a JSON value, within the limits, before any object is built.

Input: JSON text (``str`` or ``bytes``) and the ``Limits``.
Output: the decoded value (dicts, lists, strings, numbers), or ``InvalidRequest``
(``RequestTooLarge`` for a limit) on the document ``$``.

In order, each check before the work it protects:
1. size: more than ``max_request_bytes`` of UTF-8 is refused before anything else;
2. encoding: bytes must decode strictly (UTF-8, or UTF-16/32 as JSON allows); a
   surrogate encoded in bytes, which Python's JSON reader would accept, is refused;
3. nesting: arrays and objects nested deeper than ``max_depth`` are refused by a scan
   of the brackets outside strings, before the reader builds anything;
4. reading: duplicate keys (JSON readers disagree on which wins) and ``NaN`` /
   ``Infinity`` literals are errors; an integer literal too long for Python to
   convert becomes an ``Oversized`` marker, which the field's rule then names.
A lone surrogate written as an escape (``"\\ud800"``) is left to the string rules,
which judge every string field of the request the same way.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from .errors import InvalidRequest, RequestTooLarge
from .limits import Limits
from .lookalikes import not_json
from .rules import Oversized

__all__ = ["load_json"]

# every byte that is neither a bracket nor a quote, removed by the nesting scan
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"')
_OPENERS = (b"[", b"{")
_MOST_PASSES = 1000
# the JSON reader's message when an integer literal is longer than Python converts
_TOO_MANY_DIGITS = "integer string conversion"


def load_json(text: str | bytes, limits: Limits) -> Any:
    """The JSON value of ``text``, or ``InvalidRequest`` naming the document ``$``."""
    if isinstance(text, bytes | bytearray | memoryview):
        raw = bytes(text)
        _check_size(len(raw), limits)
        decoded, encoding = _decoded(raw)
        if not encoding.startswith("utf-8"):
            # the nesting scan reads brackets as single bytes, as in UTF-8
            raw = decoded.encode("utf-8")
    elif isinstance(text, str):
        raw = _utf8(text, limits)
        decoded = text
    else:
        raise InvalidRequest("$", f"JSON text must be str or bytes, not {type(text).__name__}")
    _check_depth(raw, limits.max_depth)
    return _read(decoded)


def _check_size(size: int, limits: Limits) -> None:
    if size > limits.max_request_bytes:
        raise RequestTooLarge(
            "$",
            f"a request of {size} bytes",
            limit="max_request_bytes",
            maximum=limits.max_request_bytes,
            actual=size,
        )


def _utf8(text: str, limits: Limits) -> bytes:
    # A str is measured as the UTF-8 it stands for. Cheap bounds first: a character
    # is 1 to 4 bytes, so most texts are judged before any encoding.
    if len(text) > limits.max_request_bytes:
        _check_size(len(text), limits)
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidRequest(
            "$",
            f"holds a lone UTF-16 surrogate (U+{ord(text[exc.start]):04X}) at character"
            f" {exc.start}; text must be Unicode scalar values",
        ) from None
    _check_size(len(raw), limits)
    return raw


def _decoded(raw: bytes) -> tuple[str, str]:
    encoding = json.detect_encoding(raw)
    try:
        return raw.decode(encoding), encoding
    except UnicodeDecodeError as exc:
        name = "UTF-8" if encoding.startswith("utf-8") else encoding.upper()
        raise InvalidRequest("$", f"not valid {name}: {exc.reason} at byte {exc.start}") from None


def _check_depth(raw: bytes, max_depth: int) -> None:
    """Refuse nesting deeper than ``max_depth`` without building the document.

    Only brackets outside strings count. Escaped backslashes and quotes are removed
    first, so every quote left delimits a string; then everything but brackets and
    quotes is deleted, strings are removed, and each pass over the rest removes the
    innermost pairs: ``max_depth`` passes empty a document nested no deeper.
    """
    if sum(raw.count(opener) for opener in _OPENERS) <= max_depth:
        return
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    structure = raw.translate(None, _NOT_STRUCTURE)
    # a string without brackets is now "", and two quotes side by side never straddle
    # structure (they open and close one string, or close one and open the next)
    structure = structure.replace(b'""', b"")
    if b'"' in structure:
        structure = b"".join(structure.split(b'"')[::2])
    structure = structure.replace(b"{", b"[").replace(b"}", b"]")
    # Each pass peels one level; past the reader's own recursion limit (~1,000 levels)
    # more passes would only cost time, and the reader refuses such depth itself.
    passes = min(max_depth, _MOST_PASSES)
    for _ in range(passes):
        if not structure:
            return
        structure = structure.replace(b"[]", b"")
    if passes < max_depth:
        return
    if structure and structure.count(b"[") == structure.count(b"]"):
        raise RequestTooLarge(
            "$", "arrays and objects nested too deeply", limit="max_depth", maximum=max_depth
        )
    # unbalanced: malformed JSON, which the reader reports with its position


def _read(text: str) -> Any:
    try:
        return _decoded_value(text, int)
    except _TooManyDigits:
        # Rare: read again, marking each over-long integer for its field's rule to name.
        return _decoded_value(text, _integer_or_oversized)


class _TooManyDigits(Exception):
    pass


def _decoded_value(text: str, parse_int: Any) -> Any:
    try:
        return _loads(text, parse_int)
    except InvalidRequest:
        raise
    except RecursionError:
        raise InvalidRequest("$", "JSON nested too deeply to be a request") from None
    except json.JSONDecodeError as exc:
        looks = not_json(text)
        if looks is not None:
            raise InvalidRequest("$", looks) from None
        raise InvalidRequest(
            "$", f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except ValueError as exc:
        if _TOO_MANY_DIGITS in str(exc) and parse_int is int:
            raise _TooManyDigits from None
        raise InvalidRequest("$", f"malformed JSON: {' '.join(str(exc).split())[:200]}") from None


def _loads(text: str, parse_int: Any) -> Any:
    return json.loads(
        text,
        parse_int=parse_int,
        parse_constant=_reject_constant,
        object_pairs_hook=_unique_keys,
    )


def _integer_or_oversized(literal: str) -> int | Oversized:
    digits = len(literal.lstrip("-"))
    limit = sys.get_int_max_str_digits()
    if limit and digits > limit:
        return Oversized(digits)
    return int(literal)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # JSON readers disagree on which of two equal keys wins; a request must not depend
    # on that, so a repeated key is an error rather than a silent choice.
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                from .rules import shown

                raise InvalidRequest("$", f"duplicate key {shown(key)} in a JSON object")
            seen.add(key)
    return out


def _reject_constant(name: str) -> Any:
    raise InvalidRequest("$", f"{name} is not valid JSON and not a valid number here")
