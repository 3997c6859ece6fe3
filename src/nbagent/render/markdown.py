"""Markdown from the model rendered to HTML that cannot run anything or phone home.

The model's text is hostile input (a file it read can steer it): raw HTML in it is
escaped, links with script-capable schemes are dropped (mistune's ``safe_url``),
hidden and control characters show as marked-up ``<U+202E>`` (render/escape.py),
and an image loads only when it is an inline ``data:image/`` URI or a relative URL
on the page's own origin; any other image becomes a link the user can click instead
of an ``<img>`` the browser would fetch at once (its URL could carry data out).

Whether an image is remote is decided as the browser decides it: the URL is parsed by a
WHATWG URL parser (ada, the parser Node.js uses), not matched by a prefix, so ``https:HOST/x``,
``\\\\HOST/x``, ``/\\HOST``, ``ht<TAB>tps://`` and mixed case all count as remote. The page may be
served over http or https, and a scheme-relative spelling like ``https:x`` resolves differently
under each, so an image must stay on the page's origin under both. Used by the live view's answer
and by ``RunResult``'s notebook display; the panel has the same rule in TypeScript (remoteImages.ts).
"""

from __future__ import annotations

import html

import mistune
from ada_url import URL

from .escape import escape_html, mark_hidden

_ORIGINS = ("http://nbagent.invalid/", "https://nbagent.invalid/")
"""Stand-ins for the page's origin, one per scheme it may be served over (.invalid never resolves)."""


def loads_on_its_own(src: str) -> bool:
    """True when an ``<img src>`` of ``src`` may load: an inline ``data:image/`` URI, or a URL that
    stays on the page's own origin (relative), whatever scheme the page is served over."""
    return all(_stays_home(src, base) for base in _ORIGINS)


def _stays_home(src: str, base: str) -> bool:
    try:
        url = URL(src, base)
    except ValueError:  # a browser would not load what it cannot parse; nor do we show it as an image
        return False
    if url.protocol == "data:":
        return url.href[len("data:"):].lstrip().lower().startswith("image/")
    return url.origin == base.rstrip("/")


class _SafeRenderer(mistune.HTMLRenderer):
    def image(self, text: str, url: str, title: str | None = None) -> str:
        # Checked as written and as the browser will read the attribute mistune writes (URL-quoted).
        if loads_on_its_own(url) and loads_on_its_own(html.unescape(self.safe_url(url))):
            return super().image(text, url, title)
        return (f'<a class="nbagent-remote-image" href="{self.safe_url(url)}" target="_blank" '
                f'rel="noopener noreferrer nofollow" title="remote image, not loaded: click to open">'
                f"[image: {escape_html(text or url)}]</a>")

    # Text content (never attributes) shows hidden characters; mistune escapes it first.
    def text(self, text: str) -> str:
        return mark_hidden(super().text(text))

    def codespan(self, text: str) -> str:
        return mark_hidden(super().codespan(text))

    def escape_raw(self, value: str) -> str:
        return mark_hidden(super().escape_raw(value))

    def block_code(self, code: str, info: str | None = None) -> str:
        out = super().block_code(code, info)
        start = out.index(">", len("<pre><code")) + 1  # past the opening tag and its attributes
        return out[:start] + mark_hidden(out[start:])


_render = mistune.create_markdown(escape=True, renderer=_SafeRenderer(escape=True),
                                  plugins=["table", "strikethrough"])


def markdown_to_html(text: str) -> str:
    """Safe HTML for ``text`` (Markdown written by the model)."""
    return str(_render(text)) if text else ""
