#!/usr/bin/env python3
"""Generate the Gemini Desktop application icons (RGBA PNGs) with the standard library only.

The mark is a rounded square filled with a diagonal blue -> violet -> pink gradient, carrying a
white four-pointed sparkle (an astroid, |x|^p + |y|^p <= r^p with p < 1) and a small companion
sparkle. Every size is rendered directly with supersampling, so small icons stay crisp.

Usage: python3 scripts/gen-icons.py            # writes icons/*.png and ui/public/favicon.png
"""

from __future__ import annotations

import math
import struct
import sys
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (file name, pixel size). The packages install one PNG for every size of the freedesktop hicolor
# icon theme (16, 22, 24, 32, 48, 64, 128, 256, 512: tauri.conf.json's bundle.icon lists them),
# each rendered at its own size: a launcher or panel that asks for 22 px gets a drawn 22 px icon,
# not a blurry downscale of the 512 px one.
OUTPUTS = [
    ("icons/16x16.png", 16),
    ("icons/22x22.png", 22),
    ("icons/24x24.png", 24),
    ("icons/32x32.png", 32),
    ("icons/48x48.png", 48),
    ("icons/64x64.png", 64),
    ("icons/128x128.png", 128),
    ("icons/128x128@2x.png", 256),
    ("icons/256x256.png", 256),
    ("icons/icon.png", 512),
    ("ui/public/favicon.png", 64),
]

GRADIENT = [  # (position along the diagonal, RGB)
    (0.0, (0x4F, 0x8C, 0xFF)),
    (0.55, (0x7B, 0x61, 0xFF)),
    (1.0, (0xD9, 0x6C, 0xF5)),
]

MARGIN = 0.04  # transparent border around the square, as a fraction of the size
CORNER = 0.23  # corner radius of the square, as a fraction of its side


def gradient(t: float) -> tuple[float, float, float]:
    t = min(max(t, 0.0), 1.0)
    for (p0, c0), (p1, c1) in zip(GRADIENT, GRADIENT[1:]):
        if t <= p1:
            u = (t - p0) / (p1 - p0)
            return tuple(a + (b - a) * u for a, b in zip(c0, c1))  # type: ignore[return-value]
    return tuple(float(c) for c in GRADIENT[-1][1])  # type: ignore[return-value]


def in_rounded_square(x: float, y: float) -> bool:
    """x, y in [0, 1]; the square spans [MARGIN, 1 - MARGIN]."""
    lo, hi = MARGIN, 1.0 - MARGIN
    if x < lo or x > hi or y < lo or y > hi:
        return False
    r = CORNER * (hi - lo)
    cx = min(max(x, lo + r), hi - r)
    cy = min(max(y, lo + r), hi - r)
    return (x - cx) ** 2 + (y - cy) ** 2 <= r * r


def in_sparkle(x: float, y: float, cx: float, cy: float, radius: float, p: float = 0.55) -> bool:
    dx = abs(x - cx) / radius
    dy = abs(y - cy) / radius
    if dx > 1.0 or dy > 1.0:
        return False
    return dx**p + dy**p <= 1.0


def shade(x: float, y: float) -> tuple[float, float, float, float]:
    """Colour (premultiplied-free RGBA, 0..255 floats) of the sample at x, y in [0, 1]."""
    if not in_rounded_square(x, y):
        return (0.0, 0.0, 0.0, 0.0)
    if in_sparkle(x, y, 0.47, 0.53, 0.33) or in_sparkle(x, y, 0.74, 0.26, 0.11):
        return (255.0, 255.0, 255.0, 255.0)
    r, g, b = gradient((x + y) / 2.0)
    # A soft highlight towards the top-left corner gives the flat square some depth.
    d = math.hypot(x - 0.2, y - 0.15)
    glow = max(0.0, 1.0 - d / 0.75) ** 2 * 0.22
    r, g, b = (c + (255.0 - c) * glow for c in (r, g, b))
    return (r, g, b, 255.0)


def render(size: int) -> bytes:
    ss = 8 if size <= 128 else 4  # samples per axis
    n = ss * ss
    rows = []
    for py in range(size):
        row = bytearray([0])  # PNG filter type: none
        for px in range(size):
            acc_r = acc_g = acc_b = acc_a = 0.0
            for sy in range(ss):
                y = (py + (sy + 0.5) / ss) / size
                for sx in range(ss):
                    x = (px + (sx + 0.5) / ss) / size
                    r, g, b, a = shade(x, y)
                    acc_r += r * a
                    acc_g += g * a
                    acc_b += b * a
                    acc_a += a
            if acc_a > 0:
                row += bytes(
                    (
                        round(acc_r / acc_a),
                        round(acc_g / acc_a),
                        round(acc_b / acc_a),
                        round(acc_a / n),
                    )
                )
            else:
                row += b"\0\0\0\0"
        rows.append(bytes(row))
    return png(size, size, b"".join(rows))


def png(width: int, height: int, raw: bytes) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def main() -> int:
    cache: dict[int, bytes] = {}
    for name, size in OUTPUTS:
        data = cache.get(size) or render(size)
        cache[size] = data
        path = ROOT / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        print(f"wrote {name} ({size}x{size})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
