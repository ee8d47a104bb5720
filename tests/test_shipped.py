"""The contract's files through ``assembler.shipped`` and ``assembler schema`` / ``example``.

In a checkout they are ``models/`` and ``corpus/`` themselves (the wheel's copy is
checked byte for byte in ``tests/test_wheel.py``): each schema and example named,
the corpus loaded by default, the commands printing the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assembler import shipped
from assembler.cli import main
from assembler.corpus import load_corpus

ROOT = Path(__file__).resolve().parents[1]


def test_a_checkout_reads_models_and_corpus_in_place() -> None:
    assert shipped.source() == "checkout"
    for name in shipped.SCHEMAS:
        assert shipped.schema_text(name) == (ROOT / "models" / f"{name}.schema.json").read_text()
        assert shipped.schema(name)["$schema"]
    assert sorted(
        p.name[: -len(".schema.json")] for p in (ROOT / "models").glob("*.schema.json")
    ) == sorted(shipped.SCHEMAS)
    assert shipped.example_names() == tuple(
        sorted(p.stem for p in (ROOT / "models" / "examples").glob("*.json"))
    )
    assert len(load_corpus()) == len(list((ROOT / "corpus").glob("*.json")))


def test_unknown_names_are_refused() -> None:
    with pytest.raises(ValueError, match="one of request"):
        shipped.schema_text("requests")
    with pytest.raises(ValueError, match="review-migration"):
        shipped.example("nope")


def test_the_commands_print_the_files(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "request"]) == 0
    assert capsys.readouterr().out == (ROOT / "models" / "request.schema.json").read_text()
    assert main(["schema"]) == 0
    assert capsys.readouterr().out.split() == list(shipped.SCHEMAS)
    assert main(["example", "review-migration.json"]) == 0
    text = capsys.readouterr().out
    assert json.loads(text) == json.loads(
        (ROOT / "models" / "examples" / "review-migration.json").read_text()
    )
    assert main(["example", "review-migration", "--path"]) == 0
    assert Path(capsys.readouterr().out.strip()).read_text() == text
    assert main(["schema", "nope"]) == 2 and "one of request" in capsys.readouterr().err
    assert main(["example", "nope"]) == 2 and "review-migration" in capsys.readouterr().err
    assert main(["--version"]) == 0 and capsys.readouterr().out.startswith("assembler ")
