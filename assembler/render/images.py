"""Images priced as the providers bill them, from their published formulas.

Input: an image's bytes (PNG, JPEG, GIF or WebP, base64 or raw) or its size in
pixels, and the pricing parameters of a model.
Output: its size (``image_size``) and its input tokens (``openai_image_tokens``,
``anthropic_image_tokens``).

* OpenAI, tiled models (gpt-4o, gpt-4.1, o-series, gpt-5): ``detail: low`` costs the
  base; otherwise the image is scaled to fit 2048 x 2048, then down so that its
  shortest side is at most 768, and costs ``base + per_tile x`` its 512-pixel tiles.
* OpenAI, patch models (gpt-4.1-mini, gpt-4.1-nano, o4-mini): 32-pixel patches,
  scaled down to at most 1,536 patches, times the model's multiplier.
* Anthropic: scaled down to a long edge of at most 1,568 pixels and at most
  1.15 megapixels, then ``ceil(width x height / 750)``.

An image whose size cannot be known (a URL, or bytes of another format) is priced at
the formula's largest value, so a count never falls below the bill.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct

__all__ = [
    "ANTHROPIC_MAX_IMAGE_TOKENS",
    "anthropic_image_tokens",
    "image_size",
    "openai_image_tokens",
]

# URL-safe base64 (as google-genai writes bytes) read as the standard alphabet
_URLSAFE = str.maketrans("-_", "+/")
_ANTHROPIC_LONG_EDGE = 1568
_ANTHROPIC_PIXELS = 1_150_000
# the largest an image can cost after Anthropic's scaling (1.15 MP / 750, rounded up)
ANTHROPIC_MAX_IMAGE_TOKENS = math.ceil(_ANTHROPIC_PIXELS / 750)


def image_size(data: bytes | str) -> tuple[int, int] | None:
    """(width, height) read from the image's header, or None when it is not a PNG,
    JPEG, GIF or WebP this can read. ``data`` may be base64 text (either alphabet)."""
    if isinstance(data, str):
        try:
            # the header is in the first bytes: decode a prefix only (4 chars -> 3 bytes)
            text = data[:65536].split(",")[-1].translate(_URLSAFE)
            raw = base64.b64decode(text + "==", validate=False)
        except (binascii.Error, ValueError):
            return None
    else:
        raw = data
    if raw[:8] == b"\x89PNG\r\n\x1a\n" and len(raw) >= 24:
        width, height = struct.unpack(">II", raw[16:24])
        return width, height
    if raw[:6] in (b"GIF87a", b"GIF89a") and len(raw) >= 10:
        width, height = struct.unpack("<HH", raw[6:10])
        return width, height
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return _webp(raw)
    if raw[:2] == b"\xff\xd8":
        return _jpeg(raw)
    return None


def _webp(raw: bytes) -> tuple[int, int] | None:
    chunk = raw[12:16]
    if chunk == b"VP8X" and len(raw) >= 30:
        width = 1 + int.from_bytes(raw[24:27], "little")
        height = 1 + int.from_bytes(raw[27:30], "little")
        return width, height
    if chunk == b"VP8L" and len(raw) >= 25:
        bits = int.from_bytes(raw[21:25], "little")
        return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
    if chunk == b"VP8 " and len(raw) >= 30:
        width, height = struct.unpack("<HH", raw[26:30])
        return width & 0x3FFF, height & 0x3FFF
    return None


def _jpeg(raw: bytes) -> tuple[int, int] | None:
    index = 2
    while index + 9 < len(raw):
        if raw[index] != 0xFF:
            return None
        marker = raw[index + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            index += 2
            continue
        length = struct.unpack(">H", raw[index + 2 : index + 4])[0]
        # start-of-frame markers (not DHT 0xC4, JPG 0xC8, DAC 0xCC) carry the size
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", raw[index + 5 : index + 9])
            return width, height
        index += 2 + length
    return None


def openai_image_tokens(
    size: tuple[int, int] | None,
    detail: str,
    *,
    base: int,
    per_tile: int,
    patch_multiplier: float | None = None,
) -> int:
    """An image's input tokens on an OpenAI model (tiles, or patches when
    ``patch_multiplier`` is set); ``size`` None prices the largest image."""
    if patch_multiplier is not None:
        if size is None:
            patches = 1536
        else:
            width, height = size
            patches = math.ceil(width / 32) * math.ceil(height / 32)
            if patches > 1536:
                shrink = math.sqrt(32 * 32 * 1536 / (width * height))
                width_p = width * shrink / 32
                height_p = height * shrink / 32
                # shrink again so whole patches fit, as the published procedure does
                shrink *= min(math.floor(width_p) / width_p, math.floor(height_p) / height_p)
                patches = min(
                    1536, math.ceil(width * shrink / 32) * math.ceil(height * shrink / 32)
                )
        return math.ceil(patches * patch_multiplier)
    if detail == "low":
        return base
    if size is None:
        # the most tiles an image can have: 768 x 2048 after scaling, 2 x 4 tiles
        return base + per_tile * 8
    w, h = float(size[0]), float(size[1])
    if max(w, h) > 2048:
        scale = 2048 / max(w, h)
        w, h = w * scale, h * scale
    if min(w, h) > 768:
        scale = 768 / min(w, h)
        w, h = w * scale, h * scale
    tiles = math.ceil(w / 512) * math.ceil(h / 512)
    return base + per_tile * tiles


def anthropic_image_tokens(size: tuple[int, int] | None) -> int:
    """An image's input tokens on a Claude model; ``size`` None prices the largest."""
    if size is None:
        return ANTHROPIC_MAX_IMAGE_TOKENS
    width, height = float(size[0]), float(size[1])
    scale = min(
        1.0,
        _ANTHROPIC_LONG_EDGE / max(width, height),
        math.sqrt(_ANTHROPIC_PIXELS / (width * height)),
    )
    return max(1, math.ceil(width * scale * height * scale / 750))
