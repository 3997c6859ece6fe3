"""Markdown from the model rendered to HTML that cannot run anything or phone home.

The model's text is hostile input (a file it read can steer it): raw HTML in it is
escaped, links with script-capable schemes are dropped (mistune's ``safe_url``),
and a remote image becomes a link the user can click instead of an ``<img>``
the browser would fetch at once (its URL could carry data out). Images that are
``data:`` URIs are local and shown as they are. Used by the live view's answer
and by ``RunResult``'s notebook display; the panel has the same rule in TypeScript.
"""

from __future__ import annotations

import html

import mistune

REMOTE_PREFIXES = ("http://", "https://", "//", "ftp://")


class _SafeRenderer(mistune.HTMLRenderer):
    def image(self, text: str, url: str, title: str | None = None) -> str:
        if not url.strip().lower().startswith(REMOTE_PREFIXES):
            return super().image(text, url, title)
        label = html.escape(text or url)
        return (f'<a class="nbagent-remote-image" href="{self.safe_url(url)}" target="_blank" '
                f'rel="noopener noreferrer nofollow" title="remote image, not loaded: click to open">'
                f"[image: {label}]</a>")


_render = mistune.create_markdown(escape=True, renderer=_SafeRenderer(escape=True),
                                  plugins=["table", "strikethrough"])


def markdown_to_html(text: str) -> str:
    """Safe HTML for ``text`` (Markdown written by the model)."""
    return str(_render(text)) if text else ""
