"""The provider table: lookups, fallbacks, errors, sources, and the page that shows it.

``models/cache-providers.md`` is the same table for people; a test reads it back so
the two cannot drift apart.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from assembler.cache import (
    CacheMode,
    Provider,
    UnknownCacheModel,
    UnknownCacheProvider,
    cache_rules,
)
from assembler.facts import provider_facts
from assembler.model.errors import AssemblerError

PAGE = Path(__file__).resolve().parents[1] / "models" / "cache-providers.md"
FIGURES = {"mode", "min_prefix_tokens", "read", "write", "ttls", "refresh_on_hit"}
DOMAINS = {
    Provider.ANTHROPIC: ("https://platform.claude.com/",),
    Provider.OPENAI: (
        "https://developers.openai.com/",
        "https://raw.githubusercontent.com/openai/",
    ),
    Provider.GEMINI: ("https://ai.google.dev/", "https://docs.cloud.google.com/"),
}


def _all_rules() -> list[object]:
    return [rules for provider in Provider for rules, _names in provider_facts(provider).families]


def test_anthropic_figures() -> None:
    rules = cache_rules("anthropic", "claude-sonnet-4-5")
    assert rules.mode is CacheMode.BREAKPOINTS
    assert (rules.breakpoints, rules.lookback, rules.read) == (4, 20, 0.1)
    assert [(t.seconds, t.write) for t in rules.ttls] == [(300, 1.25), (3600, 2.0)]
    assert rules.refresh_on_hit and rules.bills_writes
    assert rules.min_prefix_tokens == 1024 and rules.input_usd_per_mtok == 3.0
    assert cache_rules("anthropic", "claude-haiku-4-5").min_prefix_tokens == 4096
    assert cache_rules("anthropic", "claude-opus-5").min_prefix_tokens == 512


def test_openai_and_gemini_figures() -> None:
    legacy = cache_rules("openai")
    assert legacy.family == "gpt-5" and legacy.mode is CacheMode.AUTOMATIC
    assert (legacy.min_prefix_tokens, legacy.step_tokens, legacy.breakpoints) == (1024, 128, 0)
    assert not legacy.bills_writes and legacy.ttls[0].write == 1.0
    assert cache_rules("openai", "gpt-4o").read == 0.5
    newer = cache_rules("openai", "gpt-5.6-sol")
    assert newer.bills_writes and newer.ttls[0].write == 1.25 and newer.ttls[0].seconds == 1800
    gemini = cache_rules("gemini", "gemini-2.5-pro")
    assert (gemini.step_tokens, gemini.read, gemini.bills_writes) == (1, 0.1, False)
    assert gemini.storage_usd_per_mtok_hour == 4.5


def test_model_names_match_exactly_after_a_snapshot_date() -> None:
    assert cache_rules("anthropic", "claude-sonnet-4-5-20250929").family == "claude-sonnet-4.5"
    assert cache_rules("Anthropic", " CLAUDE-3-5-HAIKU-20241022 ").family == "claude-haiku-3.5"
    assert cache_rules("openai", "gpt-4o-2024-08-06").family == "gpt-4o"
    # a model the table does not list is never taken for a shorter name
    with pytest.raises(UnknownCacheModel) as error:
        cache_rules("anthropic", "claude-opus-4-7")
    assert error.value.model == "claude-opus-4-7" and "claude-opus-4" in error.value.known
    assert "claude-opus-4-7" in str(error.value)


def test_defaults_are_documented_families() -> None:
    for provider in Provider:
        model = provider_facts(provider).default_model
        assert cache_rules(provider).family == cache_rules(provider, model).family


def test_unknown_names_are_input_errors_naming_them() -> None:
    with pytest.raises(UnknownCacheProvider, match=r"'mistral'.*anthropic, openai, gemini"):
        cache_rules("mistral")
    for error in (UnknownCacheProvider("x"), UnknownCacheModel("openai", "y")):
        assert isinstance(error, ValueError) and isinstance(error, AssemblerError)
        assert "\n" not in str(error)
    with pytest.raises(UnknownCacheModel, match="no 60-second"):
        cache_rules("anthropic").ttl(60)
    assert cache_rules("anthropic").ttl(None).seconds == 300


def test_rules_are_frozen_and_every_figure_has_a_provider_source() -> None:
    for rules in _all_rules():
        assert isinstance(rules, type(cache_rules("anthropic")))
        with pytest.raises(dataclasses.FrozenInstanceError):
            rules.read = 1.0  # type: ignore[misc]
        names = {name for name, _source in rules.sources}
        assert names >= FIGURES, (rules.family, FIGURES - names)
        for name, source in rules.sources:
            assert source.url.startswith(DOMAINS[rules.provider]), (rules.family, name)
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", source.read)
        assert rules.source("read").url
        assert 0 < rules.read < 1 and all(t.write >= 1 for t in rules.ttls)


def test_the_page_lists_every_family_with_its_figures() -> None:
    text = PAGE.read_text(encoding="utf-8")
    rows = {
        cells[1]: cells
        for line in text.splitlines()
        if line.startswith("| ") and len(cells := [c.strip() for c in line.split("|")]) > 6
    }
    for rules in _all_rules():
        row = rows.get(f"`{rules.family}`")
        assert row is not None, rules.family
        assert f"{rules.min_prefix_tokens:,}" in row, (rules.family, row)
        assert f"{rules.read:g}x" in row, (rules.family, row)
