"""The turn as it happened: its items (answer paragraphs, reasoning, tool rows, notices) in state order.

Each item of the turn (agent_state.Turn.items) has one widget, at the same index. Rendering is
incremental: ``reduce`` shares the items that did not change, so an item that is the same object as
last time is skipped, a changed one updates its widget in place, and new ones are appended.
"""

from __future__ import annotations

from typing import Callable

import ipywidgets as widgets

from ...render.agent_state import NoticeItem, ReasoningItem, TextItem, ToolItem, TurnItem
from .answer import Answer
from .notice import Notice
from .reasoning import Reasoning
from .tools import ToolRow

Thinking = Callable[[int], "float | None"]
"""Seconds the reasoning item at an index took (None: not known)."""


class Timeline(widgets.VBox):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_class("nbagent-timeline")
        self._items: tuple[TurnItem, ...] = ()
        self._ended = False
        self._final: Answer | None = None

    def render(self, items: tuple[TurnItem, ...], ended: bool = False, final_text: str = "",
               thinking: Thinking = lambda index: None) -> None:
        """Show ``items``; ``ended``: the turn is over (reasoning folds to its summary, and the final
        text shows when no paragraph streamed)."""
        if items is self._items and ended == self._ended:
            return
        if not _continues(self._items, items):
            self.children, self._items, self._final = (), (), None  # another turn's items: start over
        shown: list[widgets.Widget] = list(self.children[:len(self._items)])
        for index, item in enumerate(items):
            if index >= len(shown):
                shown.append(_widget_for(item))
            elif item is self._items[index] and not (ended and isinstance(item, ReasoningItem)):
                continue
            _show(shown[index], item, ended, thinking(index))
        if ended and final_text and self._final is None and not _streamed(items):
            self._final = Answer(markdown=final_text)  # the model answered without streaming text
        self.children = (*shown, *(() if self._final is None else (self._final,)))
        self._items, self._ended = items, ended

    @property
    def paragraphs(self) -> list[Answer]:
        return [child for child in self.children if isinstance(child, Answer) and child.markdown]

    @property
    def reasonings(self) -> list[Reasoning]:
        return [child for child in self.children if isinstance(child, Reasoning)]

    @property
    def rows(self) -> dict[str, ToolRow]:
        """The tool rows by call id."""
        return {child.call_id: child for child in self.children if isinstance(child, ToolRow)}

    @property
    def markdown(self) -> str:
        """The answer's Markdown source so far, paragraphs of different steps a blank line apart."""
        paragraphs = [str(p.markdown) for p in self.paragraphs]
        return paragraphs[0] if len(paragraphs) == 1 else "\n\n".join(p.strip("\n") for p in paragraphs)

    @property
    def value(self) -> str:
        """The HTML of the answer's paragraphs and notices, in order."""
        return "".join(str(c.value) for c in self.children if isinstance(c, (Answer, Notice)))


def _streamed(items: tuple[TurnItem, ...]) -> bool:
    return any(isinstance(item, TextItem) and item.text.strip() for item in items)


def _continues(before: tuple[TurnItem, ...], after: tuple[TurnItem, ...]) -> bool:
    """True when ``after`` grows ``before`` item by item (what reduce does within a turn)."""
    return len(after) >= len(before) and all(a.kind == b.kind for a, b in zip(before, after))


def _widget_for(item: TurnItem) -> widgets.Widget:
    if isinstance(item, TextItem):
        return Answer()
    if isinstance(item, ReasoningItem):
        return Reasoning()
    if isinstance(item, ToolItem):
        return ToolRow()
    return Notice()


def _show(widget, item: TurnItem, ended: bool, seconds: float | None) -> None:
    if isinstance(item, TextItem):
        widget.markdown = item.text.lstrip("\n")  # a paragraph after a tool row starts apart already
    elif isinstance(item, ReasoningItem):
        widget.show(item.text, ended, seconds)
    elif isinstance(item, (ToolItem, NoticeItem)):
        widget.show(item)
