"""The counter registry: model profiles, the shipped encodings, framing figures, images."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest

import assembler
from assembler import InvalidRequest
from assembler.cache import Provider, UnknownCacheModel, cache_rules
from assembler.facts import model_profile, profiles, provider_facts
from assembler.providers import anthropic, gemini, openai_chat
from assembler.providers.images import image_size
from assembler.render.encodings import load_encoding
from assembler.render.meters import counter_named, meter_for
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
    for profile in profiles():
        for name in (profile.name, *profile.also):
            assert model_profile(f"{name}-20250929") is profile
    for provider in Provider:
        for rules, names in provider_facts(provider).families:
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


def test_every_framing_figure_the_code_counts_is_in_the_data_with_its_source() -> None:

    from assembler.facts import RenderFormat, format_facts, framing

    for fmt in RenderFormat:
        figures = format_facts(fmt)
        if figures is None:
            continue
        assert all(f.source and f.kind for f in figures.framing.values()), fmt
    chat = RenderFormat.OPENAI_CHAT
    meter = meter_for("gpt-4o", counter_named("utf8-bytes"))
    assert openai_chat.body.message_tokens(meter, {}) == framing(chat, "message")
    assert openai_chat.body.reply_tokens() == framing(chat, "reply")
    assert openai_chat.body.tools_tokens(meter, [{}]) - len("{}") == framing(
        chat, "tool"
    ) + framing(chat, "tools")
    claude = meter_for("claude-sonnet-4", counter_named("utf8-bytes"))
    messages = RenderFormat.ANTHROPIC_MESSAGES
    assert anthropic.body.message_tokens(claude, {"content": []}) == framing(messages, "message")
    tile = provider_facts(Provider.GEMINI).images["tokens"]
    assert gemini.body.image_tokens((100, 100)) == tile
    for provider in Provider:
        assert provider_facts(provider).model_sources and provider_facts(provider).image_source.url


def test_openai_message_framing_follows_the_published_recipe() -> None:
    meter = meter_for("gpt-4o", counter_named("utf8-bytes"))
    # 3 per message + role + content (+1 and the name for a name), 3 priming the reply
    count = openai_chat.body.message_tokens
    assert count(meter, {"role": "user", "content": "abcd"}) == 3 + 4 + 4
    assert count(meter, {"role": "user", "content": "ab", "name": "x"}) == 3 + 4 + 2 + 2
    assert openai_chat.tokens(meter, {"messages": [{"role": "user", "content": "abcd"}]}) == 11 + 3


@pytest.mark.parametrize(
    ("size", "detail", "tokens"),
    # OpenAI's published examples for gpt-4o
    [((1024, 1024), "high", 765), ((2048, 4096), "high", 1105), ((4096, 8192), "low", 85)],
)
def test_openai_image_formula(size: tuple[int, int], detail: str, tokens: int) -> None:
    assert openai_chat.body.image_tokens(model_profile("gpt-4o"), size, detail) == tokens


def test_anthropic_image_formula_and_unknown_sizes_priced_at_the_most() -> None:
    image_tokens = anthropic.body.image_tokens
    assert image_tokens((1000, 1000)) == 1334
    assert image_tokens((200, 200)) == 54
    assert image_tokens((4000, 3000)) <= image_tokens(None)
    assert openai_chat.body.image_tokens(model_profile("gpt-4o"), None, "high") == 85 + 170 * 8


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
