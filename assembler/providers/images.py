"""An image's size, read from its bytes: what every room's image price starts from.

Input: an image's bytes (PNG, JPEG, GIF or WebP, base64 or raw, or a ``data:`` URL).
Output: its size in pixels (``image_size``), or None when it cannot be known (a URL,
bytes of another format): each room then prices the largest image its formula allows,
so a count never falls below the bill.
"""

from __future__ import annotations

import base64
import binascii
import struct

__all__ = ["image_size"]

# URL-safe base64 (as some SDKs write bytes) read as the standard alphabet
_URLSAFE = str.maketrans("-_", "+/")


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
