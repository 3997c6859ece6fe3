"""The open-context block: what the panel or a %%agent cell sends with a prompt, checked and shown."""

from __future__ import annotations

import pytest

from nbagent.engine.open_in_jupyter import BadContext, OpenContext, with_context


def test_the_block_names_notebook_cell_and_selection():
    context = OpenContext.from_dict({"notebook": "work/a.ipynb", "cell_id": "c-1", "selection": "df.plot()\x1b[31m"})
    text = with_context("explain this cell", context)
    assert text.startswith("explain this cell\n\n<open_in_jupyter>\nactive notebook: work/a.ipynb\nactive cell: c-1")
    assert text.endswith("selected text:\ndf.plot()[31m\n</open_in_jupyter>")  # no escape byte


def test_nothing_open_leaves_the_prompt_alone():
    assert OpenContext.from_dict(None) is None and OpenContext.from_dict({}) is None
    assert with_context("hi", None) == "hi"


@pytest.mark.parametrize("bad", [[], {"notebook": 3}, {"cell_id": "a b"}, {"path": "x"}])
def test_a_malformed_context_is_refused(bad):
    with pytest.raises(BadContext):
        OpenContext.from_dict(bad)


def test_a_long_selection_is_cut():
    context = OpenContext.from_dict({"selection": "x" * 5000})
    assert len(context.selection) < 4100 and "1000 more characters" in context.selection


def test_a_session_title_shows_only_what_the_user_typed():
    """The %agent header and the session list show the title: never the open-context block after the prompt."""
    from nbagent.session.model import Session

    sent = with_context("Make the colour in notes.txt blue", OpenContext(notebook="analysis.ipynb", cell_id="c1"))
    assert "<open_in_jupyter>" in sent
    session = Session()
    session.begin_turn(sent)
    assert session.title == "Make the colour in notes.txt blue"
