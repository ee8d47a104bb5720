"""model/later.py: a field computed when first read reads as the eager value, always.

The fields of ``later_fields`` are computed once, on their first read by any path
(attribute, equality, hash, repr, pickle, ``dataclasses.replace``), and ``copied``
replaces fields without computing the others. A rendering's lazily computed manifest
fields read as those an eager computation gives.
"""

from __future__ import annotations

import hashlib
import pickle
import threading
from dataclasses import dataclass, replace

import pytest

from assembler import assemble
from assembler.model.later import Later, copied, later, later_fields


@later_fields("digest")
@dataclass(frozen=True, slots=True)
class _Value:
    text: str
    digest: str
    size: int = 0


def _counted(text: str, calls: list[str]) -> Later:
    def compute() -> str:
        calls.append(text)
        return hashlib.sha256(text.encode()).hexdigest()

    return later(compute)  # type: ignore[no-any-return]


def test_a_later_field_is_computed_once_when_first_read() -> None:
    calls: list[str] = []
    value = _Value("abc", _counted("abc", calls))
    assert calls == []
    assert value.digest == hashlib.sha256(b"abc").hexdigest()
    assert value.digest == hashlib.sha256(b"abc").hexdigest()
    assert calls == ["abc"]


def test_every_reader_sees_the_computed_value() -> None:
    eager = _Value("abc", hashlib.sha256(b"abc").hexdigest(), 3)
    for read in (
        lambda v: v,
        lambda v: pickle.loads(pickle.dumps(v)),
        lambda v: replace(v, size=3),
    ):
        calls: list[str] = []
        lazy = _Value("abc", _counted("abc", calls), 3)
        assert read(lazy) == eager
        assert hash(read(lazy)) == hash(eager)
        assert repr(read(lazy)) == repr(eager)
        assert len(calls) == 1


def test_copied_replaces_without_computing() -> None:
    calls: list[str] = []
    lazy = _Value("abc", _counted("abc", calls), 1)
    moved = copied(lazy, size=2)
    assert calls == []
    assert moved.size == 2 and moved.text == "abc"
    # both read the one Later: computed once for the two
    assert moved.digest == lazy.digest == hashlib.sha256(b"abc").hexdigest()
    assert calls == ["abc"]
    with pytest.raises(TypeError, match="no field 'colour'"):
        copied(lazy, colour=1)


def test_a_plain_value_is_a_plain_field() -> None:
    value = _Value("abc", "given")
    assert value.digest == "given"
    with pytest.raises(AttributeError):
        value.digest = "other"  # type: ignore[misc]


def test_threads_reading_at_once_compute_once() -> None:
    calls: list[str] = []
    gate = threading.Barrier(8)

    def slow() -> str:
        calls.append("x")
        return "value"

    shared = _Value("abc", later(slow))
    seen: list[str] = []

    def read() -> None:
        gate.wait()
        seen.append(shared.digest)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == ["value"] * 8
    assert calls == ["x"]


def test_a_manifest_reads_its_hashes_and_items_as_computed_eagerly() -> None:
    request = {
        "task": {"id": "t", "budget": 100, "instruction": "Answer.", "query": "Why?"},
        "candidates": [
            {"id": "a", "cost": 5, "relevance": 0.9, "content": "alpha é"},
            {"id": "b", "cost": 5, "relevance": 0.5, "kind": "user_turn", "content": "beta"},
        ],
    }
    rendering = assemble(request, render="openai-chat").rendering
    assert rendering is not None
    manifest = rendering.manifest
    data = rendering.text.encode("utf-8")
    assert manifest.rendered_sha256 == hashlib.sha256(data).hexdigest()
    body = rendering.body_json.encode("utf-8")
    assert manifest.request_body_sha256 == hashlib.sha256(body).hexdigest()
    for item in manifest.items:
        content = data[item.offset : item.offset + item.length]
        assert hashlib.sha256(content).hexdigest() == item.content_sha256
    assert [part for part, _, _ in manifest.envelope] == ["instruction", "query"]
