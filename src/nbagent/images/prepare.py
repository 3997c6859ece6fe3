"""Decode, downscale and re-encode an image once, so that what a model is sent is small and fixed.

PNG and JPEG within the longest side are kept as they are (no re-encoding at all); larger ones are
shrunk (Pillow's reduce first, then an area-averaging (box) pass, a third faster than bilinear and as
sharp for a downscale: JPEG is decoded at a reduced scale
already) and encoded once: a JPEG, or an opaque image as busy as a photograph (its PNG takes more than
PHOTO_BYTES_PER_PIXEL), as JPEG; anything else, charts and drawings, as PNG. GIF and WebP become PNG
(a GIF's first frame). An alpha channel that is opaque everywhere is dropped before the resize.
SVG is rasterized by resvg at the size it will be shown at, after taking out references to files,
which resvg would otherwise read from this machine (a hostile notebook could show a local file so).
"""

from __future__ import annotations

import base64
import io
import re
from dataclasses import dataclass

from .image import Image

MIMES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
"""The formats read (Pillow's names): their MIME types."""
SVG = "image/svg+xml"
PNG_LEVEL = 1
"""zlib level of re-encoded PNGs: tokens count pixels, not bytes, so speed wins over the last bytes."""
PHOTO_BYTES_PER_PIXEL = 0.5
"""A PNG above this many bytes a pixel is noise, a photograph or a dense heatmap, not line art: JPEG
encodes it several times faster and smaller, and a model sees it the same (a chart is 0.05 to 0.2)."""
JPEG_QUALITY = 85
REDUCE_FLOOR = 0.9
"""A downscale by a whole factor is taken when it leaves at least this share of the longest side."""
MAX_PIXELS = 50_000_000
"""Larger images are refused (a decompression bomb), not decoded."""


class ImageError(ValueError):
    """The bytes are not an image that can be read (or are too large to)."""


@dataclass(frozen=True)
class Source:
    """What an image was before it was prepared: for its caption."""

    mime: str
    width: int
    height: int
    size: int
    """Bytes as found."""


def prepare(raw: bytes, mime: str, caption: str, max_side: int = 1024) -> tuple[Image, Source]:
    """The image to send for ``raw`` (of type ``mime``; SVG text as UTF-8 bytes), with ``caption``,
    and what it was. Raises ImageError for bytes that are not a readable image."""
    from PIL import Image as PILImage, UnidentifiedImageError

    if mime == SVG:
        raw, width, height = rasterize_svg(raw, max_side)
        source = Source(SVG, width, height, 0)
    try:
        im = PILImage.open(io.BytesIO(raw))
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise ImageError(f"not a readable image: {exc}") from None
    with im:
        fmt = im.format or ""
        found = MIMES.get(fmt)
        if found is None:
            raise ImageError(f"{fmt or 'unknown'} images are not read (PNG, JPEG, GIF, WebP and SVG are)")
        w, h = im.size
        if w * h > MAX_PIXELS:
            raise ImageError(f"the image is {w}x{h} pixels, more than {MAX_PIXELS:,}")
        if mime != SVG:
            source = Source(found, w, h, len(raw))
        if max(w, h) <= max_side and fmt in ("PNG", "JPEG"):
            data, out_mime, size = raw, found, (w, h)  # sent as it is
        else:
            busy = fmt == "JPEG" or len(raw) > PHOTO_BYTES_PER_PIXEL * w * h
            data, out_mime, size = _shrunk(im, fmt, max_side, busy)
    return Image(out_mime, base64.b64encode(data).decode("ascii"), size[0], size[1], caption), source


def _shrunk(im, fmt: str, max_side: int, busy: bool) -> tuple[bytes, str, tuple[int, int]]:
    target = _fit(im.size, max_side)
    if fmt == "JPEG":
        im.draft("RGB", target)  # decode at 1/2, 1/4 or 1/8 scale where that still covers the target
    if fmt == "GIF":
        im.seek(0)
    if im.mode not in ("RGB", "RGBA", "L", "LA"):
        im = im.convert("RGBA" if _has_alpha(im) else "RGB")
    if im.mode in ("RGBA", "LA") and im.getchannel("A").getextrema()[0] == 255:
        # opaque everywhere (matplotlib's figures): Pillow resizes RGBA premultiplied, five times slower
        im = im.convert(im.mode[:-1])
    im = _downscaled(im, target, max_side)
    return _encoded(im, busy), _OUT_MIME[busy and im.mode in ("RGB", "L")], im.size


_OUT_MIME = {True: "image/jpeg", False: "image/png"}


def _downscaled(im, target: tuple[int, int], max_side: int):
    """``im`` at ``target``, or at an integer fraction of its size when that is at least REDUCE_FLOOR
    of ``max_side``: reduce() averages whole blocks of pixels (a box filter, as sharp), several times
    faster than resampling to an arbitrary size (a 300-dpi figure, 1920 px, becomes 960 px)."""
    from PIL import Image as PILImage

    if im.size == target:
        return im
    factor = -(-max(im.size) // max_side)
    if factor > 1 and max(im.size) / factor >= REDUCE_FLOOR * max_side:
        return im.reduce(factor)
    return im.resize(target, PILImage.Resampling.BOX, reducing_gap=2.0)


def _encoded(im, busy: bool) -> bytes:
    """JPEG for a busy opaque image; PNG otherwise, in a palette when the image is opaque (a chart):
    exact when it has at most 256 colours, else the 256 an octree finds (only anti-aliased edges
    move, by a few levels). A palette PNG skips the per-row filter search that makes an RGB PNG
    five times slower to write, and is half the bytes."""
    from PIL import Image as PILImage

    out = io.BytesIO()
    if busy and im.mode in ("RGB", "L"):
        im.save(out, "JPEG", quality=JPEG_QUALITY)
        return out.getvalue()
    if im.mode == "RGB":
        exact = im.getcolors(256) is not None  # median cut keeps every colour then; the octree may not
        method = PILImage.Quantize.MEDIANCUT if exact else PILImage.Quantize.FASTOCTREE
        im = im.quantize(256, method=method, dither=PILImage.Dither.NONE)
    im.save(out, "PNG", compress_level=PNG_LEVEL)
    return out.getvalue()


def _fit(size: tuple[float, float], max_side: int) -> tuple[int, int]:
    w, h = size
    if max(w, h) <= max_side:
        return round(w), round(h)
    scale = max_side / max(w, h)
    return max(1, round(w * scale)), max(1, round(h * scale))


def _has_alpha(im) -> bool:
    return im.mode in ("RGBA", "LA", "PA") or "transparency" in im.info


_REF = re.compile(r"""((?:xlink:)?href\s*=\s*)(["'])(?!data:|#)[^"']*\2""", re.I)
_CSS_URL = re.compile(r"""url\(\s*(["']?)(?!data:|#)[^)"']*\1\s*\)""", re.I)
_SVG_TAG = re.compile(r"<svg\b[^>]*>", re.I | re.S)
_SIZE = re.compile(r"""\s(width|height)\s*=\s*["']\s*([\d.]+)\s*(px|pt)?\s*["']""", re.I)


def rasterize_svg(svg: bytes, max_side: int) -> tuple[bytes, int, int]:
    """PNG bytes of an SVG drawn no larger than ``max_side``, and the SVG's own size (0x0 if it does
    not say). References to anything but inline data and the document itself are removed first."""
    import resvg_py

    text = svg.decode("utf-8", errors="replace")
    text = _CSS_URL.sub("none", _REF.sub(r"\1\2\2", text))
    width, height = _svg_size(text)
    if width and height:
        text = _in_pixels(text, width, height)
    args: dict = {}
    if width and height and max(width, height) > max_side:
        fit = _fit((width, height), max_side)
        args = {"width": fit[0], "height": fit[1]}
    try:
        png = resvg_py.svg_to_bytes(svg_string=text, **args)
    except Exception as exc:  # resvg raises its own error types (a parse error, an empty image)
        raise ImageError(f"the SVG could not be drawn: {exc}") from None
    return bytes(png), int(width), int(height)


def _in_pixels(text: str, width: float, height: float) -> str:
    """The root element's size in pixels: resvg refuses point sizes (matplotlib's "460.8pt"). Without a
    viewBox a user unit is a pixel either way, so the drawing is unchanged."""
    tag = _SVG_TAG.search(text)
    if tag is None:
        return text
    sizes = {"width": f"{width:g}", "height": f"{height:g}"}
    new = _SIZE.sub(lambda m: f' {m.group(1)}="{sizes[m.group(1).lower()]}"', tag.group(0))
    return text[:tag.start()] + new + text[tag.end():]


def _svg_size(text: str) -> tuple[float, float]:
    """The root element's width and height in pixels (matplotlib writes points: 4/3 of a pixel each)."""
    tag = _SVG_TAG.search(text[:8192])
    found = {m.group(1).lower(): float(m.group(2)) * (4 / 3 if (m.group(3) or "").lower() == "pt" else 1)
             for m in _SIZE.finditer(tag.group(0))} if tag else {}
    return found.get("width", 0.0), found.get("height", 0.0)
