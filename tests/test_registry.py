"""The counter registry: model profiles, the shipped encodings, framing figures, images."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest

import assembler
from assembler import InvalidRequest
from assembler.model.providers import FAMILIES, UnknownCacheModel, cache_rules
from assembler.render.encodings import load_encoding
from assembler.render.images import anthropic_image_tokens, image_size, openai_image_tokens
from assembler.render.registry import MODELS, counter_named, meter_for, model_profile
from benchmarks.transcripts import png


def test_dated_snapshots_find_their_family() -> None:
    assert model_profile("gpt-4o-2024-08-06").name == "gpt-4o"
    assert model_profile("gpt-4o-mini").name == "gpt-4o-mini"
    assert model_profile("claude-sonnet-4-5-20250929").name == "claude-sonnet-4"
    profile = model_profile("gpt-4o")
    assert profile.input_window == 128_000 - 16_384


def test_one_model_name_rule_serves_the_counter_registry_and_the_cache_rules() -> None:
    # lowered, the snapshot date dropped, then one of a family's names exactly: a longer
    # name is never taken for a shorter one, in either table
    assert model_profile(" GPT-4-0613").name == "gpt-4"
    assert cache_rules("anthropic", "Claude-Sonnet-4-5-2025-09-29").family == "claude-sonnet-4.5"
    for longer in ("claude-opus-4-7", "o1-mini", "gpt-4o-audio-preview"):
        with pytest.raises(InvalidRequest):
            model_profile(longer)
    with pytest.raises(UnknownCacheModel):
        cache_rules("anthropic", "claude-opus-4-7")
    for profile in MODELS.values():
        for name in (profile.name, *profile.also):
            assert model_profile(f"{name}-20250929") is profile
    for provider, families in FAMILIES.items():
        for rules, names in families:
            for name in names:
                assert cache_rules(provider, f"{name}-2025-09-29") is rules


def test_unknown_names_are_one_line_errors() -> None:
    with pytest.raises(InvalidRequest) as caught:
        model_profile("gpt-9")
    assert caught.value.field == "model" and "gpt-4o" in str(caught.value)
    with pytest.raises(InvalidRequest) as caught:
        counter_named("p50k")
    assert caught.value.field == "counter"


def test_real_encodings_come_with_the_package() -> None:
    o200k = load_encoding("o200k_base")
    assert o200k is not None
    # token ids of the real encodings, as published
    assert o200k._encoding.encode("Hello, world!") == [13225, 11, 2375, 0]
    cl100k = load_encoding("cl100k_base")
    assert cl100k is not None and cl100k._encoding.encode("Hello, world!") == [9906, 11, 1917, 0]
    assert meter_for("gpt-4o").counter.name == "tiktoken:o200k_base"
    assert meter_for("claude-sonnet-4").counter.name == "estimate:tiktoken:o200k_basex1.25"
    assert meter_for("gemini-2.5-flash").counter.name == "estimate:tiktoken:o200k_basex1.1"


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_shipped_ranks_rebuild_the_official_file_byte_for_byte(name: str) -> None:
    import gzip
    import hashlib

    from assembler.render.encodings import ENCODINGS, official_text, pack_ranks, shipped_ranks

    rebuilt = official_text(shipped_ranks(name))
    assert hashlib.sha256(rebuilt).hexdigest() == ENCODINGS[name][1]
    bpe_openai = pytest.importorskip("bpe_openai")
    official = gzip.decompress(
        (Path(bpe_openai.__file__).parent / "data" / f"{name}.tiktoken.gz").read_bytes()
    )
    assert official == rebuilt
    # the shipped file is reproducible from the official one
    shipped = Path(assembler.__file__).parent / "render" / "ranks" / f"{name}.ranks.xz"
    assert pack_ranks(official) == shipped.read_bytes()


def test_every_framing_figure_in_the_code_is_named_in_models() -> None:
    from assembler import shipped
    from assembler.render.billing import GEMINI_IMAGE_TOKENS

    framing = shipped.framing()
    for provider in ("openai", "openai-responses", "anthropic", "gemini"):
        assert all(entry["source"] and entry["kind"] for entry in framing[provider].values())
    meter = meter_for("gpt-4o", counter_named("utf8-bytes"))
    assert meter.openai_message({}) == framing["openai"]["message"]["tokens"]
    assert meter.openai_overhead() == framing["openai"]["reply"]["tokens"]
    assert meter.openai_tools([{}]) - len("{}") == (
        framing["openai"]["tool"]["tokens"] + framing["openai"]["tools"]["tokens"]
    )
    claude = meter_for("claude-sonnet-4", counter_named("utf8-bytes"))
    assert claude.anthropic_message({"content": []}) == framing["anthropic"]["message"]["tokens"]
    assert str(claude.profile.tool_prompt) in framing["anthropic"]["tool_prompt"]["tokens"]
    assert str(GEMINI_IMAGE_TOKENS) in framing["gemini"]["image"]["tokens"]
    for provider, model in (("anthropic", "claude-sonnet-4"), ("gemini", "gemini-2.5-pro")):
        factor = meter_for(model).profile.estimate_factor
        assert f"x {factor:g}" in framing[provider]["text"]["tokens"]


def test_openai_message_framing_follows_the_published_recipe() -> None:
    meter = meter_for("gpt-4o", counter_named("utf8-bytes"))
    # 3 per message + role + content (+1 and the name for a name), 3 priming the reply
    assert meter.openai_message({"role": "user", "content": "abcd"}) == 3 + 4 + 4
    assert meter.openai_message({"role": "user", "content": "ab", "name": "x"}) == 3 + 4 + 2 + 2
    assert meter.openai_body({"messages": [{"role": "user", "content": "abcd"}]}) == 11 + 3


@pytest.mark.parametrize(
    ("size", "detail", "tokens"),
    # OpenAI's published examples for gpt-4o
    [((1024, 1024), "high", 765), ((2048, 4096), "high", 1105), ((4096, 8192), "low", 85)],
)
def test_openai_image_formula(size: tuple[int, int], detail: str, tokens: int) -> None:
    assert openai_image_tokens(size, detail, base=85, per_tile=170) == tokens


def test_anthropic_image_formula_and_unknown_sizes_priced_at_the_most() -> None:
    assert anthropic_image_tokens((1000, 1000)) == 1334
    assert anthropic_image_tokens((200, 200)) == 54
    assert anthropic_image_tokens((4000, 3000)) <= anthropic_image_tokens(None)
    assert openai_image_tokens(None, "high", base=85, per_tile=170) == 85 + 170 * 8


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "GIF", "WEBP"])
def test_image_size_is_read_from_the_header(fmt: str) -> None:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (321, 123)).save(buffer, format=fmt)
    data = buffer.getvalue()
    assert image_size(data) == (321, 123)
    assert image_size(base64.b64encode(data).decode()) == (321, 123)


def test_generated_png_reads_back() -> None:
    assert image_size(png(640, 480)) == (640, 480)
    assert image_size(b"not an image") is None
