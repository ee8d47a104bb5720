"""JSON text: size, encoding and nesting are judged before objects are built."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

from assembler import InvalidRequest, Limits, RequestTooLarge
from assembler.model.jsontext import load_json


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


# strings full of the characters the nesting scan must see through
tricky_text = st.text(st.sampled_from('[]{}"\\ax\u00e9\n'), max_size=6)
json_values = st.recursive(
    st.none() | st.integers() | tricky_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(tricky_text, inner, max_size=3),
    max_leaves=30,
)


@settings(max_examples=examples(400), deadline=None)
@given(json_values, st.integers(1, 6), st.booleans(), st.sampled_from(["utf-8", "utf-16"]))
def test_the_nesting_scan_is_exact(value: Any, max_depth: int, ascii: bool, codec: str) -> None:
    text = json.dumps(value, ensure_ascii=ascii).encode(codec)
    limits = Limits(max_depth=max_depth)
    if depth(value) <= max_depth:
        assert load_json(text, limits) == value
    else:
        with pytest.raises(RequestTooLarge) as caught:
            load_json(text, limits)
        assert caught.value.limit == "max_depth" and caught.value.field == "$"


def test_size_is_judged_before_parsing_even_for_malformed_text() -> None:
    with pytest.raises(RequestTooLarge) as caught:
        load_json(b"{" * 1000, Limits(max_request_bytes=999))
    assert caught.value.actual == 1000
    # a str is measured as the UTF-8 it stands for
    with pytest.raises(RequestTooLarge):
        load_json('"' + "é" * 10 + '"', Limits(max_request_bytes=21))
    assert load_json('"' + "é" * 10 + '"', Limits(max_request_bytes=22)) == "é" * 10


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (b'{"a": "\xff"}', "not valid UTF-8: invalid start byte at byte 7"),
        (b'{"a": "\xed\xa0\x80"}', "not valid UTF-8"),
        ('{"a": "\ud800"}', "lone UTF-16 surrogate (U+D800) at character 7"),
        (b'{"a": 1, "a": 2}', "duplicate key 'a'"),
        (b'{"a": NaN}', "NaN is not valid JSON"),
        (b'{"a": 1', "malformed JSON: Expecting ',' delimiter at line 1 column 8"),
        (b"[" * 100_000, "nested too deeply"),
        (b"", "empty: no JSON value at all"),
        (b"  \n", "empty: no JSON value at all"),
        (b"task:\n  id: t\n", "looks like YAML"),
        (b"- a\n- b\n", "looks like YAML"),
        (12, "JSON text must be str or bytes"),
    ],
)
def test_broken_text_is_one_located_line(text: Any, needle: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        load_json(text, Limits())
    message = str(caught.value)
    assert caught.value.field == "$" and needle in message and "\n" not in message


def test_json_encodings_with_and_without_a_bom_are_read() -> None:
    value = {"a": ["é", 1]}
    for data in (
        json.dumps(value).encode("utf-16"),
        json.dumps(value).encode("utf-32-le"),
        b"\xef\xbb\xbf" + json.dumps(value).encode(),
    ):
        assert load_json(data, Limits()) == value


def test_an_over_long_integer_followed_by_broken_text_is_malformed_json() -> None:
    # found by the fuzzer: the second reading (which marks over-long integers) must
    # report malformed text like the first
    with pytest.raises(InvalidRequest, match="malformed JSON: Extra data"):
        load_json(b"1" * 5000 + b'{"task": 1}', Limits())
