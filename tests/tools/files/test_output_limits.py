"""limit_output: head and tail around a gap line, the whole output saved where read_file can page it."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from .files_helpers import call, make_ctx
from nbagent.tools import limits
from nbagent.tools.limits import limit_output, limit_tool_output
from nbagent.tools.files import READ_FILE

LOG = "".join(f"step {i}: ok\n" for i in range(1, 5001))


def test_output_within_the_limit_is_unchanged():
    assert limit_output("short", 30_000) == "short"
    assert limit_output("x" * 100, 100) == "x" * 100


def test_long_output_keeps_head_and_tail_with_a_gap_line(tmp_path):
    out = limit_output(LOG, 2000, tmp_path / "outputs", "bash", shown_root=tmp_path)
    assert len(out) <= 2000
    assert out.startswith("step 1: ok\n") and out.endswith("step 5000: ok\n")
    gap = re.search(r"\[\.\.\. ([\d,]+) characters cut from the middle \(lines ([\d,]+)-([\d,]+) of 5,000\); "
                    r"the whole output is in (outputs/bash-\w+\.txt) \(page it with read_file offset/limit\) \.\.\.\]", out)
    assert gap, out
    saved = tmp_path / gap.group(4)
    assert saved.read_text() == LOG
    head, tail = out.split(gap.group(0))
    first_cut = int(gap.group(2).replace(",", ""))
    assert head.rstrip("\n").endswith(f"step {first_cut - 1}: ok")
    assert tail.lstrip("\n").startswith(f"step {int(gap.group(3).replace(',', '')) + 1}: ok")


def test_without_a_save_dir_the_gap_line_says_nothing_was_saved():
    out = limit_output("y" * 10_000, 1000)
    assert "the whole output was not saved" in out and len(out) <= 1000


async def test_the_context_helper_saves_under_nbagent_outputs_and_read_file_pages_it(root):
    ctx = make_ctx(root, output_limit=3000)
    out = limit_tool_output(ctx, LOG, "bash")
    path = re.search(r"the whole output is in (\S+)", out).group(1)
    assert path.startswith(".nbagent/outputs/bash-")
    page = await call(ctx, READ_FILE, path=path, offset=2500, limit=2)
    assert page.splitlines() == ["  2500\tstep 2500: ok", "  2501\tstep 2501: ok",
                                 "[lines 2500-2501 of 5000 shown; read on with offset=2502]"]
    assert (root / ".nbagent" / ".gitignore").read_text() == "*\n"


def test_old_saved_outputs_are_pruned(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "KEEP_SAVED", 3)
    for i in range(5):
        limit_output(f"{i}" * 5000, 1000, tmp_path, "out")
    kept = sorted(p.read_text()[0] for p in tmp_path.iterdir())
    assert kept == ["2", "3", "4"]


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.sampled_from("ab\n\u00e9"), max_size=5000), limit=st.integers(400, 3000))
def test_the_result_fits_and_is_a_true_head_and_tail(text, limit):
    out = limit_output(text, limit)
    assert len(out) <= limit
    if len(text) <= limit:
        assert out == text
        return
    gap = re.search(r"\n\[\.\.\. [^\]]*\.\.\.\]\n", out)
    head, tail = out[: gap.start()], out[gap.end():]
    assert text.startswith(head) and text.endswith(tail)
    cut = len(text) - len(head) - len(tail)
    assert f"{cut:,} characters cut" in gap.group(0)


def test_a_save_dir_under_nbagent_is_shown_relative_to_the_workspace(tmp_path):
    out = limit_output(LOG, 2000, tmp_path / ".nbagent" / "outputs", "grep")
    assert " .nbagent/outputs/grep-" in out and str(tmp_path) not in out
