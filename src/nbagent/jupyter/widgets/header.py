"""The header of a turn's view: its question, session, model (badged when offline), tokens and cost.

The bold part is the question the cell asked (its first line), not the session's title: every turn of a
session shares the title, and a notebook of ``%%agent`` cells would show the same words on each. The
title stays beside the session id, in grey."""

from __future__ import annotations


import ipywidgets as widgets
from traitlets import Bool, Float, Int, Unicode, observe

from ...render.escape import escape_html
from .format import cost, tokens


OFFLINE_BADGE = (' <span class="nbagent-offline-badge" title="A tiny model on this machine, to try nbagent: it may '
                 'invent what is in your files. Configure a real model for real work (docs/offline.md)." '
                 'style="border:1px solid #9a6700;color:#9a6700;border-radius:3px;padding:0 3px">offline model</span>')


class Header(widgets.HTML):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_class("nbagent-header")

    session_id = Unicode("")
    question = Unicode("")
    """This turn's prompt as the user typed it (its first line is the header's bold part)."""
    title = Unicode("")
    model = Unicode("")
    input_tokens = Int(0)
    output_tokens = Int(0)
    cached_tokens = Int(0)
    """Of input_tokens, those the provider read from its prompt cache."""
    image_tokens = Int(0)
    """Of input_tokens, the estimate for the images the requests carried."""
    cost = Float(None, allow_none=True)
    status = Unicode("")
    """What the turn is doing: queued, running, done, aborted, error, max_steps."""
    offline = Bool(False)
    """The offline model answers (settings["offline"]): the header says so, beside the model's name."""
    mode = Unicode("")
    """The approval mode and whether the sandbox is on, e.g. "sandboxed · sandbox on"."""

    @observe("session_id", "question", "title", "model", "input_tokens", "output_tokens", "cached_tokens", "cost",
             "status", "offline", "mode", "image_tokens")
    def _render(self, change=None) -> None:
        session = f"<code>{escape_html(self.session_id)}</code>" if self.session_id else ""
        if self.title and self.question:
            session += f' <span style="color:var(--jp-ui-font-color2,#666)">({escape_html(self.title)})</span>'
        parts = [f"<b>{escape_html(question_line(self.question) or self.title or 'new session')}</b>", session,
                 escape_html(self.model) + (OFFLINE_BADGE if self.offline else ""),
                 f"{tokens(self.input_tokens)} in"
                 + (f" ({tokens(self.cached_tokens)} cached)" if self.cached_tokens else "")
                 + (f" (~{tokens(self.image_tokens)} images)" if self.image_tokens else "")
                 + f" / {tokens(self.output_tokens)} out",
                 cost(self.cost),
                 f"approval {escape_html(self.mode)}" if self.mode else "",
                 f"<i>{escape_html(self.status)}</i>" if self.status else ""]
        self.value = ('<div style="font-size:12px;color:var(--jp-ui-font-color1,#333)">'
                      + " · ".join(p for p in parts if p) + "</div>")


QUESTION_CHARS = 100


def question_line(prompt: str) -> str:
    """The header's words for a prompt: its first non-empty line, cut at QUESTION_CHARS."""
    line = next((part.strip() for part in prompt.splitlines() if part.strip()), "")
    return line if len(line) <= QUESTION_CHARS else line[: QUESTION_CHARS - 1] + "…"
