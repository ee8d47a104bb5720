"""The rule of keys: names a person tells apart by reading them (the server's session
keys), and the rule of its token.

Input: a candidate key (a decoded string), or the text of a token file.
Output: ``key``: the key as it is, or ``InvalidRequest`` naming the character and
why; ``lookalike``: why a name breaks the rule (None when it keeps it); ``shown``: how
a name is printed by ``ledger list`` and the logs; ``token``: a token's bytes, or why
it cannot be one.

A key is shown as it is, so it must show only itself: two keys that differ must look
different. ``models/session.md`` ("Keys") states the rule; each clause closes one way
of making a key that looks like another:

1. every character is printable ASCII (the space included), a letter, a combining mark
   or a decimal digit: no control, format, separator, private-use or unassigned
   character, and no punctuation or symbol beyond ASCII's (a hyphen U+2010, a ratio
   U+2236 or a braille blank U+2800 looks like an ASCII one, or like nothing);
2. no character that shows nothing (Unicode's default-ignorable ones: the combining
   grapheme joiner U+034F, variation selectors U+FE0F, the Hangul fillers U+3164);
3. the space only between two other characters, one at a time;
4. in Unicode NFKC: no compatibility form (fullwidth, mathematical letters, ligatures,
   superscripts), which shows as the plain character it stands for;
5. letters and digits of one script (Latin, Cyrillic, Greek, ...), or Latin with the
   scripts written together in Japanese (Han, Hiragana, Katakana), Korean (Han,
   Hangul) or Chinese (Han, Bopomofo); ASCII digits go with any, other digits only
   beside a letter of their own script;
6. no letter made to look like another: a Latin letter beyond ASCII is an ASCII letter
   with marks (é, ş, ı's dot aside: NFD says so) or one of a few letters of their own
   (ß, æ, ø, ł, þ, ŋ, ə, ...), never a lookalike such as ɑ, ɡ or a small capital; a
   combining mark follows a letter of a script whose marks NFC does not compose
   (Latin, Greek and Cyrillic accents come composed); and a key of Cyrillic, Greek,
   Armenian, Cherokee, Lisu or Coptic letters that all look like Latin ones (Cyrillic
   "аре") is refused.

A token is at least 16 characters of visible ASCII (``!`` to ``~``): it is compared,
in constant time, as those bytes against the bytes of the ``Authorization`` header.

Names that were never judged by this rule (a task id, a session named in Python, an
older ledger's keys) are shown as they are when they keep it, and otherwise marked
with U+FFFD and escaped as JSON does (``\ufffdagent-\\u0430``): no key can look like
that.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from .rules import Place, name
from .rules import shown as shown_value

__all__ = ["LEAST_TOKEN", "key", "lookalike", "shown", "token"]

# a shared secret shorter than this could be guessed
LEAST_TOKEN = 16

# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt, 15.1): characters
# that render as nothing; the format ones among them are refused as format already
_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)  # fmt: skip
# scripts a key may mix with Latin (and with each other, within one group)
_TOGETHER = (
    frozenset({"HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"HAN", "HANGUL"}),
    frozenset({"HAN", "BOPOMOFO"}),
)
# Latin letters beyond ASCII that are letters of their own (no decomposition) and look
# like no ASCII letter
_OWN_LATIN = frozenset("ßẞæÆœŒøØđĐłŁħĦþÞðÐŋŊəƏıɛƐɔƆŧŦ")
# scripts whose marks NFC composes with their letters (a mark left over is a disguise)
_COMPOSED = frozenset({"LATIN", "GREEK", "CYRILLIC", "ARMENIAN"})
# letters of other scripts that look like Latin ones: a key of nothing else is refused
_LIKE_LATIN = {
    "CYRILLIC": frozenset("АВЕЅІЈКМНОРСТУХҮӀԀԌԚԜаеѕіјорсухүһӏԁԛԝԍ"),
    "GREEK": frozenset("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧϒϲϳαικνορυχγ"),
    "ARMENIAN": frozenset("ԼՍՏՕհոսօզցռ"),
}
# scripts most of whose letters are shaped like Latin capitals: any of their letters
_LATIN_SHAPED = frozenset({"CHEROKEE", "LISU", "COPTIC"})


def key(value: Any, place: Place, field: Any, limits: Any) -> str:
    """``value`` as a key: a name (``rules.name``) that keeps the rule of keys."""
    checked = name(value, place, field, limits)
    why = lookalike(checked)
    if why is not None:
        place.fail(field, f"{why}; {_RULE}")
    return checked


_RULE = (
    "a key is printable text that shows only itself (models/session.md, 'Keys': letters"
    " and digits of one script, ASCII punctuation, single inner spaces, nothing"
    " invisible or made to look like another character)"
)


def lookalike(text: str) -> str | None:
    """Why ``text`` breaks the rule of keys, or None when it keeps it."""
    if text.isascii():
        return _ascii(text)
    scripts: set[str] = set()
    digits: dict[str, int] = {}
    previous = ""
    for at, character in enumerate(text):
        why = _character(character, previous, at, scripts, digits)
        if why is not None:
            return why
        previous = character
    spaces = _ascii_spaces(text)
    if spaces is not None:
        return spaces
    if not unicodedata.is_normalized("NFKC", text):
        return (
            "is not in Unicode NFKC (a character is written decomposed, or as a"
            " compatibility form such as a fullwidth or mathematical letter); send it as"
            f" {shown_value(unicodedata.normalize('NFKC', text))}"
        )
    others = scripts - {"LATIN"}
    if len(scripts) > 1 and not any(others <= group for group in _TOGETHER):
        return f"mixes the scripts {', '.join(sorted(s.title() for s in scripts))}"
    for script, count in digits.items():
        if script not in scripts:
            return f"holds {count} {script.title()} digit(s) without a letter of that script"
    if len(scripts) == 1:
        (script,) = scripts
        letters = [c for c in text if unicodedata.category(c)[0] == "L"]
        if script in _LATIN_SHAPED or (
            script in _LIKE_LATIN and all(c in _LIKE_LATIN[script] for c in letters)
        ):
            return (
                f"is written in {script.title()} letters that all look like Latin ones"
                " (it would read as another key)"
            )
    return None


def _ascii(text: str) -> str | None:
    for at, character in enumerate(text):
        if not character.isprintable():
            return f"holds {_described(character)} at character {at}"
    return _ascii_spaces(text)


def _ascii_spaces(text: str) -> str | None:
    if text.startswith(" ") or text.endswith(" "):
        return "starts or ends with a space"
    if "  " in text:
        return "holds two spaces in a row"
    return None


def _character(
    character: str, previous: str, at: int, scripts: set[str], digits: dict[str, int]
) -> str | None:
    """Why one character may not be in a key (clauses 1, 2 and 6); its script noted."""
    if character.isascii():
        if not character.isprintable():
            return f"holds {_described(character)} at character {at}"
        if character.isalpha():
            scripts.add("LATIN")
        return None
    if _ignorable(character):
        return f"holds {_described(character)}, which shows nothing, at character {at}"
    category = unicodedata.category(character)
    if category[0] not in "LM" and category != "Nd":
        return (
            f"holds {_described(character)} at character {at}; punctuation and symbols"
            " are ASCII's"
        )
    script = _script(character)
    if category[0] == "M":
        base = "" if not previous else _script(previous)
        if not previous or previous.isascii() or base in _COMPOSED or base is None:
            return (
                f"holds the combining mark {_described(character)} at character {at},"
                " after a letter NFC would have composed it with (or after none)"
            )
        return None
    if script is None:
        return f"holds {_described(character)} at character {at}, of no script"
    if category == "Nd":
        digits[script] = digits.get(script, 0) + 1
        return None
    if script == "LATIN" and character not in _OWN_LATIN:
        decomposed = unicodedata.normalize("NFD", character)
        if not decomposed[0].isascii():
            return (
                f"holds {_described(character)} at character {at}, a Latin letter that"
                " looks like another (beyond ASCII, a key's Latin letters are accented"
                " ASCII ones or letters of their own such as ß, æ, ø, ł)"
            )
    scripts.add(script)
    return None


def _ignorable(character: str) -> bool:
    point = ord(character)
    return any(low <= point <= high for low, high in _IGNORABLE)


def _script(character: str) -> str | None:
    """A character's script, from its Unicode name (the standard library has no
    script property): the name's first word, ``HAN`` for ideographs."""
    named = unicodedata.name(character, "")
    if not named:
        return None
    if named.startswith("CJK ") or "IDEOGRAPH" in named:
        return "HAN"
    first = named.split(" ", 1)[0]
    if first in ("MODIFIER", "COMBINING"):
        return None
    if first == "EXTENDED":
        first = named.split(" ", 2)[1]
    return first.split("-", 1)[0]


def _described(character: str) -> str:
    """``U+202E (RIGHT-TO-LEFT OVERRIDE, a format character)``."""
    kind = _KINDS.get(unicodedata.category(character), "")
    described = unicodedata.name(character, "")
    inside = ", ".join(part for part in (described, f"a {kind} character" if kind else "") if part)
    return f"U+{ord(character):04X}" + (f" ({inside})" if inside else "")


# what a character a key may not hold is, by its Unicode general category
_KINDS = {"Cc": "control", "Cf": "format", "Cs": "surrogate", "Co": "private-use",
          "Cn": "unassigned", "Zs": "space", "Zl": "line separator",
          "Zp": "paragraph separator"}  # fmt: skip


def shown(text: str) -> str:
    """``text`` as a key is printed: as it is when it keeps the rule, else marked with
    U+FFFD (which no key holds) and written as a JSON string's inside, every character
    beyond printable ASCII escaped (``\ufffd\\u0430gent-7``): two names never print
    alike."""
    if lookalike(text) is None:
        return text
    return "\ufffd" + json.dumps(text)[1:-1]


def token(text: str) -> bytes | str:
    """A token's bytes (what the ``Authorization`` header must carry after ``Bearer``),
    or why ``text`` cannot be one."""
    if len(text) < LEAST_TOKEN:
        return f"the token must be at least {LEAST_TOKEN} characters"
    for at, character in enumerate(text):
        if not ("!" <= character <= "~"):
            return (
                f"the token holds {_described(character)} at character {at}: a token is"
                " visible ASCII (! to ~), the bytes an HTTP header carries the same in"
                " every client"
            )
    return text.encode("ascii")
