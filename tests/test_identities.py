"""stages/identities.py: the canonical JSON and the content digests the identities read.

``canonical_json`` writes plain JSON with orjson and anything else with the standard
encoder; both must give the bytes the standard encoder gives, for any JSON value.
``content_digest`` memoises each content's sha256 by the content object.
"""

from __future__ import annotations

import hashlib
import json

from hypothesis import given
from hypothesis import strategies as st

from assembler import parse_request
from assembler.stages.identities import canonical_json, content_digest, form_piece

_STANDARD = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)

_text = st.text(st.characters(exclude_categories=("Cs",)))
_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=20,
)


@given(_values)
def test_canonical_json_is_the_standard_encoders(value: object) -> None:
    assert canonical_json(value) == _STANDARD.encode(value)


def test_canonical_json_of_what_orjson_refuses_or_writes_otherwise() -> None:
    for value in (1e16, [0.1, 1e-07], {"a": 2**70}, {"a": -(2**64)}, ("x", 1), "\ud800", {1: 2}):
        assert canonical_json(value) == _STANDARD.encode(value)


def test_content_digest_is_memoised_by_the_content_object() -> None:
    digests: dict[int, tuple[str, str, int]] = {}
    text = "é" * 10
    expected = (hashlib.sha256(text.encode()).hexdigest(), 20)
    assert content_digest(text, digests) == expected == content_digest(text)
    assert digests == {id(text): (text, *expected)}
    assert content_digest(text, digests) == expected  # read from the memo
    other = "".join(["é"] * 10)  # equal, another object: hashed, not read
    assert content_digest(other, digests) == expected and len(digests) == 2


def test_form_piece_is_the_canonical_json_of_its_fields() -> None:
    request = parse_request(
        {
            "task": {"id": "t", "budget": 10},
            "candidates": [
                {"id": 'a"\u2028é', "cost": 3, "content": "x"},
                {"id": "b", "cost": 0},
            ],
        }
    )
    for c in request.candidates:
        digest = None if c.content is None else hashlib.sha256(c.content.encode()).hexdigest()
        fields = {"id": c.id, "cost": c.cost, "content_sha256": digest}
        assert form_piece(c) == _STANDARD.encode(fields)
        assert form_piece(c, request.digests) == _STANDARD.encode(fields)
