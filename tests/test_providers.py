"""The providers' rooms: one per API, one interface, every figure in one data file.

Each test fails when a provider's fact gets a second home: a module outside the rooms
(``assembler/providers/``) and the figures (``assembler/facts/``) naming a provider
(the verifiers keep their own copies on purpose), a number written into a room's code
instead of its data file, a format without a room, a figure without a source, a body
parsed back from its JSON.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest

import assembler
from assembler import shipped
from assembler.facts import Provider, format_facts, provider_facts, provider_of
from assembler.model.rendering import RenderFormat, Rendering
from assembler.providers import interface
from assembler.providers.registry import APIS, FRAMEWORKS, api_for

PACKAGE = Path(assembler.__file__).resolve().parent
ROOMS = ("openai_chat", "openai_responses", "anthropic", "gemini")
# a provider's name, or a room's: the words that place a fact with one provider
NAMED = re.compile(r"\b(gemini|anthropic|claude|gpt-[0-9]|openai)(\b|_)", re.IGNORECASE)


def _members() -> list[str]:
    hints = interface.Api.__annotations__
    methods = [n for n, v in vars(interface.Api).items() if callable(v) and not n.startswith("_")]
    return [*hints, *methods]


@pytest.mark.parametrize("api", [*APIS, *FRAMEWORKS], ids=lambda api: api.NAME)
def test_every_room_answers_the_one_interface(api: Any) -> None:
    missing = [name for name in _members() if not hasattr(api, name)]
    assert missing == []
    assert api.FORMAT in RenderFormat


def test_every_format_but_the_text_has_one_room_and_its_provider_data() -> None:
    assert sorted(api.FORMAT for api in APIS) == sorted(set(RenderFormat) - {RenderFormat.TEXT})
    for api in APIS:
        assert api_for(api.FORMAT) is api and api.FORMAT.value == api.NAME
        assert api.FORMAT in (f.format for f in provider_facts(provider_of(api.FORMAT)).formats)


def test_no_module_outside_the_rooms_names_a_provider() -> None:
    named = sorted(
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if path.relative_to(PACKAGE).parts[0] not in ("providers", "facts", "verifiers")
        and NAMED.search(path.read_text(encoding="utf-8"))
    )
    assert named == [], "a provider's fact belongs in its room or its data file (facts/)"


def test_the_rooms_hold_no_figure_of_their_own() -> None:
    # every number a room counts or checks with is its data file's (0, 1 and the
    # caller's-list indices -1 and -2 are not figures)
    written = []
    for room in ROOMS:
        for path in (PACKAGE / "providers" / room).glob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Constant)
                    and type(node.value) in (int, float)
                    and node.value not in (0, 1, -1, -2, 2)
                ):
                    written.append(f"{room}/{path.name}:{node.lineno}: {node.value}")
    assert written == []


def test_every_figure_of_the_data_files_names_its_source() -> None:
    for provider in Provider:
        found = provider_facts(provider)
        for fmt in found.formats:
            figures = format_facts(fmt.format)
            assert figures is not None
            for figure in figures.framing.values():
                assert figure.source and figure.kind in ("published", "estimate")
        assert found.image_source.url and found.images
        assert {"context_window", "max_output"} <= set(found.model_sources)
        assert all(shape.source for shape in found.usage)
        for rules, names in found.families:
            assert names and dict(rules.sources)


def test_a_data_file_is_plain_json_with_one_provider() -> None:
    for provider in Provider:
        path = PACKAGE / "facts" / f"{provider.value}.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["provider"] == provider.value and data["read"]


def _rendered(fmt: RenderFormat) -> Rendering:
    """The shipped agent example (tool definitions, a call and its result) in ``fmt``."""
    request = json.loads(shipped.example("agent-tool-call").read_text(encoding="utf-8"))
    rendering = assembler.assemble(request, render=fmt).rendering
    assert rendering is not None
    return rendering


@pytest.mark.parametrize("fmt", list(RenderFormat))
def test_a_rendering_keeps_its_body_as_built_and_never_reads_its_json(
    fmt: RenderFormat, monkeypatch: pytest.MonkeyPatch
) -> None:
    rendering = _rendered(fmt)
    expected = json.loads(rendering.body_json)
    parse = json.loads

    def no_body_parse(text: Any, *args: Any, **kwargs: Any) -> Any:
        assert text != rendering.body_json, "the body was parsed back from its JSON"
        return parse(text, *args, **kwargs)

    monkeypatch.setattr(json, "loads", no_body_parse)
    assert rendering.body == expected
    # its keys in the canonical order, as its JSON writes them
    assert json.dumps(rendering.body, ensure_ascii=False, separators=(",", ":")) == (
        rendering.body_json
    )
