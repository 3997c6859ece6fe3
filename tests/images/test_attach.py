"""agent.run(prompt, attach=[...]) with each kind: a matplotlib Figure, a PIL image, PNG and JPEG bytes,
a path, a DataFrame, an IPython display object, a notebook output; through the real openai client."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from PIL import Image as PILImage

from nbagent import Agent
from nbagent.engine.attachments import attach
from nbagent.testing import Reply
from nbagent.testing.server import ScriptedServer

from .pictures import b64, chart_png, encoded, png

pytestmark = pytest.mark.integration


def _figure():
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3, 2), dpi=100)
    fig.subplots().plot([1, 2, 3])
    return fig


def test_each_kind_becomes_its_caption_and_image():
    from IPython.display import HTML, Image as IPyImage

    frame = pd.DataFrame({"city": ["Lyon", "Oslo"] * 20, "temp": [12.5, 3.0] * 20})
    attached = attach([_figure(), PILImage.new("RGB", (64, 32), "blue"), png(100, 50), encoded("JPEG", 40, 30),
                       frame, IPyImage(data=chart_png()), HTML("<b>total</b> 42"),
                       {"output_type": "stream", "name": "stdout", "text": "hello\n"}])
    lines = attached.text.split("\n")
    assert lines[0].startswith("[image 1: attachment 1 (Figure): image/png 300x200, ")
    assert lines[1].startswith("[image 2: attachment 2 (a RGB image): image/png 64x32, ")
    assert lines[2].startswith("[image 3: attachment 3: image/png 100x50")
    assert lines[3].startswith("[image 4: attachment 4: image/jpeg 40x30")
    assert "[attachment 5: DataFrame of 40 rows x 2 columns; dtypes: city: " in attached.text
    assert ", temp: float64\n" in attached.text
    assert "Lyon" in attached.text and "(30 more rows)" in attached.text
    assert "[image 5: attachment 6: image/png 640x480" in attached.text
    assert "[attachment 7: an output]" in attached.text and "total 42" in attached.text
    assert "[attachment 8: an output]\n[stdout]\nhello" in attached.text
    assert [i.mime for i in attached.images] == ["image/png"] * 3 + ["image/jpeg", "image/png"]


def test_a_path_to_an_image_or_a_text_file(tmp_path):
    (tmp_path / "plot.png").write_bytes(png(3000, 1000))
    (tmp_path / "notes.txt").write_text("the peak is in March\n")
    attached = attach([tmp_path / "plot.png", str(tmp_path / "notes.txt")], max_side=600)
    assert attached.text.startswith("[image 1: attachment 1 (plot.png): image/png 3000x1000")
    assert "[attachment 2: notes.txt]\nthe peak is in March" in attached.text
    assert (attached.images[0].width, attached.images[0].height) == (600, 200)


def test_what_cannot_be_attached_is_refused_plainly(tmp_path):
    with pytest.raises(TypeError, match="cannot attach a object"):
        attach(object())
    with pytest.raises(ValueError, match="neither PNG nor JPEG"):
        attach(b"GIF89a....")
    with pytest.raises(ValueError, match="is not a file"):
        attach(tmp_path / "missing.png")


def test_agent_run_sends_the_attachments_with_the_prompt(tmp_path):
    with ScriptedServer(Reply(text="A rising line."), Reply(text="ok")) as server:
        with Agent(workspace=tmp_path, model="m1", base_url=server.url, api_key="sk-test", max_retries=0,
                   repo_map=False, memory_embeddings="off") as agent:
            result = agent.run("what does this show?", attach=[_figure(), pd.DataFrame({"x": [1, 2]})])
            agent.run("and now?")
        first, second = (r.body for r in server.model_requests())
    user = [m for m in first["messages"] if m["role"] == "user"][-1]
    parts = user["content"]
    assert parts[0]["type"] == "text" and parts[0]["text"].startswith("what does this show?\n\n[image 1: attachment 1")
    assert "[attachment 2: DataFrame of 2 rows x 1 columns; dtypes: x: int64" in parts[0]["text"]
    assert parts[1]["text"].startswith("attachment 1 (Figure): image/png 300x200, ")
    assert parts[1]["text"].endswith(" (shown at 300x200)")
    assert parts[2]["image_url"]["url"].startswith("data:image/png;base64,")
    assert second["messages"][: len(first["messages"])] == first["messages"]  # the next request extends it
    assert result.text == "A rising line."
