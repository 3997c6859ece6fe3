"""Notebook outputs told in a few lines, so that reading a notebook never floods the model's context.

Each output type has its own short form: text streams and tracebacks keep their head and tail;
images become one line with their type, pixel size and bytes; HTML is reduced to its text (tables
keep their rows); a DataFrame's HTML gives way to its text/plain form; widget views name the widget.

Image sizes are read from the file headers by hand (PNG IHDR, GIF screen descriptor, JPEG SOF
marker): describing an image must not decode it. Given an image sink (nbagent.images.ImageSink), an
image output becomes the sink's caption line instead, and the image goes to a model that can see.
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
from html.parser import HTMLParser
from typing import Any

from ..render.escape import strip_ansi
from .limits import limit_output

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_DATA_URI = re.compile(r"data:([\w.+-]+/[\w.+-]+);base64,([A-Za-z0-9+/=\s]{200,})")
_TEXT_MIMES = ("text/markdown", "text/latex", "application/json")


def human_size(n: int) -> str:
    """1234567 -> "1.2 MB"; whole numbers below 10 units keep one decimal."""
    size = float(n)
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            if unit == "bytes":
                return f"{int(size)} bytes"
            return f"{size:.1f} {unit}" if size < 10 else f"{size:.0f} {unit}"
        size /= 1024
    return f"{n} bytes"


def as_text(value: Any) -> str:
    """nbformat keeps multi-line strings as lists on disk; accept both."""
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return value if isinstance(value, str) else str(value)


def clean_text(text: str) -> str:
    """Drop ANSI colours and keep what a terminal would show of carriage-return progress bars."""
    text = strip_ansi(text.replace("\r\n", "\n"))
    if "\r" not in text:
        return text
    return "\n".join(_last_segment(line) for line in text.split("\n"))


def _last_segment(line: str) -> str:
    parts = [p for p in line.split("\r") if p]
    return parts[-1] if parts else ""


def cut_middle(text: str, limit: int) -> str:
    """Head and tail within ``limit`` characters: nbagent.tools.limits' cut, with nothing saved (the notebook
    holds the whole output)."""
    return limit_output(text, limit)


# ----- images -------------------------------------------------------------------------------------

def b64_size(data: str) -> int:
    """Decoded size of base64 text without decoding it."""
    compact = "".join(data.split())
    return len(compact) * 3 // 4 - compact[-2:].count("=")


def image_dimensions(raw: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG, GIF or JPEG header, or None for anything else."""
    if raw[:8] == b"\x89PNG\r\n\x1a\n" and raw[12:16] == b"IHDR" and len(raw) >= 24:
        return struct.unpack(">II", raw[16:24])
    if raw[:6] in (b"GIF87a", b"GIF89a") and len(raw) >= 10:
        return struct.unpack("<HH", raw[6:10])
    if raw[:2] == b"\xff\xd8":
        return _jpeg_dimensions(raw)
    return None


_JPEG_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def _jpeg_dimensions(raw: bytes) -> tuple[int, int] | None:
    """Walk the JPEG segments to the first start-of-frame marker, which holds height then width."""
    i = 2
    while i + 9 <= len(raw):
        if raw[i] != 0xFF:
            i += 1
            continue
        marker = raw[i + 1]
        if marker in _JPEG_SOF:
            height, width = struct.unpack(">HH", raw[i + 5: i + 9])
            return width, height
        if marker in (0xFF, 0x01) or 0xD0 <= marker <= 0xD8:
            i += 1 if marker == 0xFF else 2  # fill byte, or a marker without a length
            continue
        (length,) = struct.unpack(">H", raw[i + 2: i + 4])
        i += 2 + length
    return None


def describe_image(mime: str, data: Any) -> str:
    """One line for an image: "image/png 640x480, 38 KB"."""
    text = as_text(data)
    if mime == "image/svg+xml":
        w = re.search(r'<svg[^>]*?\swidth="([^"]+)"', text)
        h = re.search(r'<svg[^>]*?\sheight="([^"]+)"', text)
        dims = f" {w.group(1)}x{h.group(1)}" if w and h else ""
        return f"{mime}{dims}, {human_size(len(text.encode()))}"
    # A PNG or GIF header sits in the first bytes; a JPEG's frame header may follow large EXIF blocks.
    prefix = text if mime == "image/jpeg" else "".join(text[:200].split())[:96]
    try:
        dims = image_dimensions(base64.b64decode(prefix + "=" * (-len(prefix) % 4)))
    except (binascii.Error, ValueError, struct.error):
        dims = None
    shown = f" {dims[0]}x{dims[1]}" if dims else ""
    return f"{mime}{shown}, {human_size(b64_size(text))}"


def elide_data_uris(source: str) -> tuple[str, int]:
    """Replace long base64 data URIs (images pasted into Markdown) by their description."""
    count = 0

    def repl(m: re.Match) -> str:
        nonlocal count
        count += 1
        return f"data:{m.group(1)};base64,<{describe_image(m.group(1), m.group(2))}: elided>"

    return _DATA_URI.sub(repl, source), count


# ----- HTML ---------------------------------------------------------------------------------------

class _HtmlText(HTMLParser):
    """The visible text of an HTML fragment; table rows on their own lines, cells split by " | "."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0
        self.scripts = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skip += 1
            self.scripts += tag == "script"
        elif tag in ("tr", "br", "p", "div", "li", "h1", "h2", "h3", "h4"):
            self.parts.append("\n")
        elif tag in ("td", "th"):
            self.parts.append(" | ")

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self.skip:
            self.skip -= 1

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def html_text(html: str) -> tuple[str, int]:
    """(visible text, number of <script> blocks) of an HTML fragment."""
    parser = _HtmlText()
    parser.feed(html)
    parser.close()
    lines = (re.sub(r"[ \t]+", " ", line).strip(" |") for line in "".join(parser.parts).split("\n"))
    return "\n".join(line for line in lines if line), parser.scripts


def is_dataframe_html(html: str) -> bool:
    return 'class="dataframe' in html


# ----- outputs ------------------------------------------------------------------------------------

def _widget_line(data: dict, widget_models: dict[str, str]) -> str:
    view = data.get(WIDGET_VIEW) or {}
    model_id = view.get("model_id", "?") if isinstance(view, dict) else "?"
    plain = as_text(data.get("text/plain", "")).strip()
    label = plain if plain and len(plain) <= 200 else widget_models.get(model_id, "")
    return f"[widget {label or 'view'} (model {str(model_id)[:8]}); its live state is in the kernel]"


def render_bundle(data: dict, limit: int, widget_models: dict[str, str] | None = None,
                  images: Any = None, where: str = "") -> list[str]:
    """The lines for one MIME bundle (execute_result or display_data); with ``images`` (an ImageSink),
    the bundle's first image in the order a front end would pick it goes to the sink."""
    parts: list[str] = []
    shown: set[str] = set()
    if WIDGET_VIEW in data:
        parts.append(_widget_line(data, widget_models or {}))
        shown |= {WIDGET_VIEW, "text/plain", "text/html"}
    seen = _seen_image(data) if images is not None else None
    for mime in data:
        if mime.startswith("image/"):
            parts.append(images.add_output(mime, data[mime], where) if images is not None and mime == seen
                         else f"[{describe_image(mime, data[mime])}]")
            shown.add(mime)
    html = as_text(data["text/html"]) if "text/html" in data and "text/html" not in shown else None
    plain = as_text(data["text/plain"]) if "text/plain" in data else None
    if plain and any(m.startswith("image/") for m in shown) and plain.startswith("<") and plain.endswith(" object>"):
        shown.add("text/plain")  # "<IPython.core.display.Image object>" beside the image tells nothing
    if html is not None and is_dataframe_html(html) and plain:
        shown.add("text/html")  # the text form of a DataFrame says the same in far fewer characters
    elif html is not None:
        parts.append(_html_summary(html, limit))
        shown.add("text/html")
        if plain and plain.startswith("<") and plain.endswith(">"):
            shown.add("text/plain")  # "<IPython.core.display.HTML object>" tells nothing
    for mime in _TEXT_MIMES:
        if mime in data and mime not in shown:
            parts.append(cut_middle(clean_text(_json_or_text(data[mime])), limit))
            shown.add(mime)
            shown.add("text/plain")
    if plain is not None and "text/plain" not in shown:
        parts.append(cut_middle(clean_text(plain), limit))
        shown.add("text/plain")
    rest = [f"{m} ({human_size(len(as_text(data[m]).encode()))})" for m in data if m not in shown]
    if rest:
        parts.append("[not shown: " + ", ".join(rest) + "]")
    return parts


SEEN_ORDER = ("image/png", "image/jpeg", "image/svg+xml", "image/gif", "image/webp")
"""The image a bundle is seen as when it holds several (matplotlib can give PNG and SVG of one figure)."""


def _seen_image(data: dict) -> str | None:
    return next((m for m in SEEN_ORDER if m in data), None)


def _json_or_text(value: Any) -> str:
    if isinstance(value, (dict, list)) and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        import json

        return json.dumps(value, ensure_ascii=False)
    return as_text(value)


def _html_summary(html: str, limit: int) -> str:
    text, scripts = html_text(html)
    note = f", {scripts} script(s) not run" if scripts else ""
    body = cut_middle(text, max(limit // 2, 200)) if text else "(no visible text)"
    return f"[text/html, {human_size(len(html.encode()))}{note}]\n{body}"


def render_output(output: dict, limit: int, widget_models: dict[str, str] | None = None,
                  images: Any = None, where: str = "") -> str:
    """One notebook output as a few lines: a bracketed header, then its shrunk content. ``images`` and
    ``where`` (the output's place, for its image's caption): see render_bundle."""
    kind = output.get("output_type")
    if kind == "stream":
        text = cut_middle(clean_text(as_text(output.get("text", ""))), limit)
        return f"[{output.get('name', 'stream')}]\n{text.rstrip(chr(10))}"
    if kind == "error":
        trace = clean_text("\n".join(as_text(t) for t in output.get("traceback", [])))
        head = f"[error] {output.get('ename', 'Error')}: {output.get('evalue', '')}"
        return f"{head}\n{cut_middle(trace, limit)}" if trace else head
    if kind in ("execute_result", "display_data"):
        count = output.get("execution_count")
        head = f"[result {count}]" if kind == "execute_result" else "[display]"
        lines = render_bundle(output.get("data") or {}, limit, widget_models, images, where)
        if len(lines) == 1 and lines[0].startswith("[") and "\n" not in lines[0]:
            return lines[0] if kind == "display_data" else f"{head} {lines[0]}"
        return "\n".join([head, *lines])
    return f"[{kind or 'unknown output'}]"


def output_kind(output: dict) -> str:
    """A short name for an output, for the one-line list shown when outputs are not asked for."""
    kind = output.get("output_type", "?")
    if kind == "stream":
        return output.get("name", "stream")
    if kind == "error":
        return f"error {output.get('ename', '')}".strip()
    data = output.get("data") or {}
    if WIDGET_VIEW in data:
        return "widget"
    images = [m for m in data if m.startswith("image/")]
    if images:
        return images[0]
    return "html" if "text/html" in data else "text"


class OutputBudget:
    """Shrinks the outputs of one read, within a per-output limit and a total for the whole read.

    Once the total is spent, further outputs shrink to one line that says how to see them.
    """

    def __init__(self, per_output: int, total: int, widget_models: dict[str, str] | None = None,
                 images: Any = None):
        self.per_output = per_output
        self.remaining = total
        self.widget_models = widget_models or {}
        self.withheld = 0
        self.images = images
        """An ImageSink (nbagent.images) that takes the outputs' images, or None: captions only."""

    def render(self, output: dict, where: str = "") -> str:
        """``where`` names the output in its image's caption ("cell 3f2a output 2")."""
        if self.remaining <= 0:
            self.withheld += 1
            return f"[{output_kind(output)}: withheld, this read's output budget is spent]"
        text = render_output(output, min(self.per_output, max(self.remaining, 200)), self.widget_models,
                             self.images, where)
        self.remaining -= len(text)
        return text


def widget_models(notebook_metadata: dict) -> dict[str, str]:
    """model_id -> widget class name, from the widget state a notebook may store in its metadata."""
    widgets = notebook_metadata.get("widgets") if isinstance(notebook_metadata, dict) else None
    state = widgets.get("application/vnd.jupyter.widget-state+json") if isinstance(widgets, dict) else None
    models = state.get("state") if isinstance(state, dict) else None
    if not isinstance(models, dict):  # a file can hold anything here: no widget names then
        return {}
    return {mid: str(m.get("model_name", "")).removesuffix("Model") for mid, m in models.items()
            if isinstance(m, dict)}
