"""One way to the screen: text nbagent did not write, escaped for a terminal, HTML or Markdown, and cut short.

What a tool printed, a file held, a kernel answered or the model wrote may carry characters that
change what the reader sees rather than show themselves: ANSI sequences (colour, cursor moves, a
cleared screen), C0/C1 controls, bidi overrides and isolates that reorder a line (U+202E makes
``rm -rf /tmp/x`` read differently from what runs), zero-width characters that hide text, and the
Unicode line and paragraph separators that break a line where none shows. Every front end takes one
rule from here: the terminal shows each as ``\\u202e``, HTML (and Markdown, through render/markdown.py's
renderer) as a marked-up ``<U+202E>`` (as GitHub's hidden-Unicode warning does), and text that goes on
into a prompt or a one-line summary drops them.

The ANSI pattern is written here, not taken from a package: the ones on PyPI (strip-ansi and the like)
are this one regex behind a function, unmaintained, and would be one more dependency for one line.
"""

from __future__ import annotations

import html
import re
import unicodedata
from typing import Sequence

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][A-Za-z0-9]")
"""CSI sequences (colours, cursor moves) and character-set switches, as terminals and tracebacks emit them."""

HIDDEN = ("\u00ad\u034f\u061c\u115f\u1160\u180e\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064"
          "\u2066-\u2069\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f\U000e0100-\U000e01ef")
"""Characters that hide or reorder text: zero-width marks, line/paragraph separators, bidi controls, BOM,
the soft hyphen, the Arabic letter mark, the Mongolian vowel separator, the combining grapheme joiner,
variation selectors, the tag block, and the Hangul fillers (U+3164 is a valid Python name: a parameter
``ㅤ='$(id)'`` would otherwise be invisible on an approval card). The panel's twin: hiddenChars.tsx."""

_CONTROLS = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{HIDDEN}]")
"""C0 and C1 controls and DEL (newline and tab are kept where a caller keeps lines), and HIDDEN."""
_CONTROLS_AND_LINES = re.compile(f"[\x00-\x1f\x7f-\x9f{HIDDEN}]")


def strip_ansi(text: str) -> str:
    """``text`` without ANSI escape sequences (a coloured traceback becomes plain text)."""
    return ANSI.sub("", text)


def escape_controls(text: str, *, keep_newlines: bool = True) -> str:
    """``text`` for a terminal: every control or hidden character shown as ``\\xNN`` / ``\\uNNNN``.

    Newlines and tabs stay as they are when ``keep_newlines`` (multi-line commands and diffs keep
    their lines); otherwise they are escaped too, so the result is one line.
    """
    escaped = _CONTROLS.sub(_code_escape, text)
    if not keep_newlines:
        escaped = escaped.replace("\n", "\\n").replace("\t", "\\t")
    return escaped


def strip_controls(text: str, replacement: str = "", *, keep_newlines: bool = True) -> str:
    """``text`` with every control or hidden character replaced by ``replacement`` (for text that goes
    on into a prompt or a one-line summary, where an escape would only be noise)."""
    pattern = _CONTROLS if keep_newlines else _CONTROLS_AND_LINES
    return pattern.sub(replacement, text)


def escape_html(text: str) -> str:
    """``text`` as HTML text: markup escaped, and every control or hidden character shown marked up."""
    return mark_hidden(html.escape(text))


def escape_attribute(text: str) -> str:
    """``text`` as an HTML attribute value (either quote): markup and quotes escaped, each control or
    hidden character written as its code point (``<U+202E>``: an attribute holds no markup)."""
    return html.escape(_CONTROLS.sub(lambda m: _code_point(m.group()), text), quote=True)


def mark_hidden(escaped: str) -> str:
    """Already escaped HTML text (never markup or an attribute) with each control or hidden character
    replaced by a visible, marked-up ``<U+202E>`` whose title names it."""
    return _CONTROLS.sub(_html_mark, escaped)


def truncate(text: str, limit: int, *, one_line: bool = False) -> str:
    """``text`` cut to at most ``limit`` characters, ending in "…" when cut; runs of white space
    become one space first when ``one_line``. For summaries and previews, never for an approval."""
    if one_line:
        text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def first_of(items: Sequence[str], limit: int, sep: str = ", ") -> str:
    """The first ``limit`` of ``items`` joined by ``sep``, then how many were left out ("a, b … and 3 more"):
    the one way nbagent lists "the first N, then an ellipsis"."""
    shown = sep.join(items[:limit])
    return shown if len(items) <= limit else f"{shown} … and {len(items) - limit} more"


def _code_escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _code_point(char: str) -> str:
    return f"<U+{ord(char):04X}>"


def _html_mark(match: re.Match) -> str:
    char = match.group()
    name = unicodedata.name(char, "control character")
    return (f'<span class="nbagent-hidden-char" title="hidden character: {name}" '
            'style="color:#cf222e;background:#fff8c5;border:1px solid #d4a72c;border-radius:3px;'
            f'font-size:0.85em;padding:0 2px">{html.escape(_code_point(char))}</span>')
