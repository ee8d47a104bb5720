"""Model names as users type them: the current lineups and their common spellings.

``tests/data/model_names.json`` lists each name with the profile it must find and where
the spelling is used (ids, snapshots, aliases, route and framework prefixes, Bedrock and
Vertex ids); the share resolved to the right profile is the issue's goal (>= 98%)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import assembler
from assembler import InvalidRequest
from assembler.facts import model_profile, profiles
from assembler.render import Utf8Bytes

pytestmark = pytest.mark.unit

NAMES = json.loads((Path(__file__).parent / "data" / "model_names.json").read_text("utf-8"))


def _resolves(name: str, family: str) -> bool:
    try:
        return model_profile(name).name == family
    except InvalidRequest:
        return False


def test_at_least_98_percent_of_the_lineups_names_resolve_to_their_profile() -> None:
    rows = NAMES["names"]
    wrong = [r["name"] for r in rows if not _resolves(r["name"], r["family"])]
    share = 1 - len(wrong) / len(rows)
    assert len(rows) >= 250
    assert share >= 0.98, (share, wrong)


@pytest.mark.parametrize(
    "name",
    ["gpt-5.1", "o3-mini", "chatgpt-4o-latest", "openai/gpt-4o", "models/gemini-2.5-pro",
     "gemini-2.5-pro-preview-06-05", "anthropic.claude-sonnet-4-5-20250929-v1:0",
     "claude-sonnet-4-5@20250929"],
)  # fmt: skip
def test_each_name_the_issue_found_unknown_fits(name: str) -> None:
    gemini = "gemini" in name
    hi = (
        {"role": "user", "parts": [{"text": "hi"}]} if gemini else {"role": "user", "content": "hi"}
    )
    fitted = assembler.fit([hi], model=name)
    assert fitted.tokens > 0 and fitted.provider == ("gemini" if gemini else fitted.provider)


def test_a_longer_name_is_never_taken_for_a_shorter_one() -> None:
    for longer in ("claude-opus-4-9", "gpt-4o-audio-preview", "gpt-5.7", "gemini-4-pro"):
        with pytest.raises(InvalidRequest):
            model_profile(longer)


def test_every_profile_of_the_current_lineups_has_a_window_an_output_limit_and_a_source() -> None:
    for name in ("gpt-5.6", "claude-opus-5", "claude-sonnet-5", "gemini-3-pro", "claude-opus-4-8"):
        profile = model_profile(name)
        assert profile.context_window > profile.max_output > 0
        assert profile.source is not None and profile.source.url
    assert model_profile("claude-opus-5").context_window == 1_000_000
    assert all(p.tokenizer for p in profiles() if p.provider.value == "anthropic")


def test_an_unknown_model_fits_with_its_counter_and_window() -> None:
    chat = [{"role": "user", "content": "Summarise our refund policy."}]
    fitted = assembler.fit(chat, model="llama-3.1-8b-instruct", counter=Utf8Bytes(), window=8192)
    assert fitted.budget == 8192 and fitted.body() == {"messages": chat}
    fitted = assembler.fit(
        chat, model="llama-3.1-8b-instruct", counter=Utf8Bytes(), window=8192, output_tokens=1024
    )
    assert fitted.budget == 8192 - 1024
