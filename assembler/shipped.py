"""The contract's files as the package carries them: schemas, examples, corpus.

Input: a schema's or an example's name. Output: its file (an
``importlib.resources`` ``Traversable``), its text, or the directory of the
conformance corpus.

``models/`` and ``corpus/`` of the repository are the normative source. A wheel is
built with a copy of their JSON files in ``assembler/contract/`` (``setup.py``: the
copy is made at build time from those folders, never kept in git), so an installed
package reads its own; a source checkout (an editable install) has no copy and reads
``models/`` and ``corpus/`` beside the package. ``tests/test_wheel.py`` checks that
the wheel's files are those of ``models/`` and ``corpus/``, byte for byte.
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

__all__ = [
    "SCHEMAS",
    "corpus_dir",
    "example",
    "example_names",
    "schema",
    "schema_text",
    "source",
    "structure_dir",
]

# the JSON Schemas of models/, by the name before ``.schema.json``
SCHEMAS = ("request", "result", "delta", "rendering", "ledger-export")

# where each part lives in a wheel (assembler/contract/...) and in a checkout
_SHIPPED = "contract"
_IN_WHEEL = {"models": "", "examples": "examples", "corpus": "corpus", "structure": "structure"}
_IN_CHECKOUT = {
    "models": "models",
    "examples": "models/examples",
    "corpus": "corpus",
    "structure": "models/structure",
}


def source() -> str:
    """``"wheel"`` when the package carries its contract, ``"checkout"`` when it reads
    the repository's ``models/`` and ``corpus/`` beside it."""
    return "wheel" if _shipped().is_dir() else "checkout"


def _shipped() -> Traversable:
    return resources.files("assembler").joinpath(_SHIPPED)


def _part(name: str) -> Traversable:
    shipped = _shipped()
    if shipped.is_dir():
        return _descend(shipped, _IN_WHEEL[name])
    # a checkout: assembler/ sits in the repository, beside models/ and corpus/
    return _descend(Path(__file__).resolve().parents[1], _IN_CHECKOUT[name])


def _descend(root: Traversable, relative: str) -> Traversable:
    for part in filter(None, relative.split("/")):
        root = root.joinpath(part)
    return root


def schema_text(name: str) -> str:
    """The text of ``models/<name>.schema.json`` (one of ``SCHEMAS``)."""
    if name not in SCHEMAS:
        raise ValueError(f"no schema {name!r}: one of {', '.join(SCHEMAS)}")
    return _part("models").joinpath(f"{name}.schema.json").read_text(encoding="utf-8")


def schema(name: str) -> dict[str, object]:
    """``models/<name>.schema.json`` as parsed JSON."""
    import json

    value: dict[str, object] = json.loads(schema_text(name))
    return value


def example_names() -> tuple[str, ...]:
    """The shipped example requests (``models/examples/``), by name without ``.json``."""
    folder = _part("examples")
    return tuple(
        sorted(p.name[: -len(".json")] for p in folder.iterdir() if p.name.endswith(".json"))
    )


def example(name: str) -> Traversable:
    """The file of the example request ``name`` (``models/examples/<name>.json``)."""
    if name not in example_names():
        raise ValueError(f"no example {name!r}: one of {', '.join(example_names())}")
    return _part("examples").joinpath(f"{name}.json")


def corpus_dir() -> Traversable:
    """The conformance corpus: one JSON file per case."""
    return _part("corpus")


def structure_dir() -> Traversable:
    """The structural conformance suite (``models/structure/``): one JSON file per
    provider rule, each holding transcripts and the provider's verdict."""
    return _part("structure")
