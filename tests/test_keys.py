"""The rule of keys and of tokens (``assembler.model.keys``, issue 46).

A key shows only itself: every kind of character that made one key look like another
is refused with its name, keys of one script (with ASCII punctuation) are kept, and a
name that breaks the rule is printed marked and escaped, never like a key.
"""

from __future__ import annotations

import json
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import assembler
from assembler.model.errors import InvalidRequest
from assembler.model.keys import key, lookalike, shown, token
from assembler.model.rules import Place

# the benchmark's table of lookalike keys, one home for the tests and the soak
CHECKOUT = Path(__file__).resolve().parents[1]
if str(CHECKOUT) not in sys.path:
    sys.path.insert(0, str(CHECKOUT))
from benchmarks.hostile import LOOKALIKES  # noqa: E402

pytestmark = pytest.mark.unit

KEPT = ("agent-7", "café", "ключ 7", "キー", "한국어", "λόγος", "Straße", "مرحبا٣", "漢字かな",
        "abc漢字", "שלום", "कि", "a/b:c@d+e=f~g_h.i", "Øresund", "Łódź", "İstanbul")  # fmt: skip


@pytest.mark.parametrize("kind", sorted(LOOKALIKES))
def test_each_kind_of_lookalike_is_refused_naming_why(kind: str) -> None:
    text = LOOKALIKES[kind]
    why = lookalike(text)
    assert why is not None, kind
    with pytest.raises(InvalidRequest) as refused:
        key(text, Place("$"), "session", assembler.Limits())
    assert refused.value.field == "session" and why in str(refused.value)
    # the message shows no character that hides (it names it by its code point)
    assert all(not unicodedata.category(c).startswith(("C", "Z")) or c == " "
               for c in str(refused.value))  # fmt: skip


@pytest.mark.parametrize("text", KEPT)
def test_keys_of_one_script_with_ascii_punctuation_are_kept(text: str) -> None:
    assert lookalike(text) is None
    assert key(text, Place("$"), "session", assembler.Limits()) == text
    assert shown(text) == text


@given(st.text(min_size=1, max_size=12))
def test_a_name_is_shown_as_itself_only_when_it_keeps_the_rule(text: str) -> None:
    printed = shown(text)
    if lookalike(text) is None:
        assert printed == text
        return
    # marked with U+FFFD, which no key holds, and otherwise printable ASCII
    assert printed.startswith("\ufffd") and lookalike(printed) is not None
    rest = printed[1:]
    assert rest.isascii() and rest.isprintable()


@given(st.text(max_size=8), st.text(max_size=8))
def test_two_names_never_print_alike(a: str, b: str) -> None:
    if a != b:
        assert shown(a) != shown(b)


def test_the_rule_refuses_what_shows_nothing_or_mixes_scripts() -> None:
    assert "shows nothing" in (lookalike("a\u034fb") or "")
    assert "mixes the scripts" in (lookalike("p\u0430y") or "")
    assert "NFKC" in (lookalike("\uff41") or "")
    assert "ASCII's" in (lookalike("a\u2013b") or "")
    assert "all look like Latin" in (lookalike("\u0421\u041e\u0420") or "")
    assert "digit" in (lookalike("\u0663\u0664") or "")


def test_a_token_is_visible_ascii_of_at_least_sixteen_characters() -> None:
    assert token("s3cret-" + "x" * 9) == b"s3cret-xxxxxxxxx"
    assert token("!" * 16 + "~") == b"!" * 16 + b"~"
    for bad in ("short", "s3cret x" + "x" * 16, "sécret-" + "x" * 16, "tab\t" + "x" * 16):
        assert isinstance(token(bad), str), bad


def test_shown_escapes_are_read_back_as_json() -> None:
    name = "\u0430gent-7\U0001f600"
    printed = shown(name)
    assert json.loads('"' + printed[1:] + '"') == name
