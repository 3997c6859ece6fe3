"""Outputs told in a few lines: big images, long streams, HTML, DataFrames, widgets, errors."""

from __future__ import annotations

import base64
import struct
import zlib

import nbformat
import numpy as np
import pandas as pd

from nbagent.tools import nbshrink
from nbagent.tools import notebook as nbt

from .conftest import cell_ids


def png_bytes(width: int, height: int, seed: int = 0) -> bytes:
    """A real PNG of random RGB noise (incompressible, so its size follows its pixels)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    pixels = np.random.default_rng(seed).integers(0, 256, (height, width * 3), dtype=np.uint8)
    rows = b"".join(b"\x00" + row.tobytes() for row in pixels)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 1)) + chunk(b"IEND", b"")


def jpeg_header(width: int, height: int) -> bytes:
    """The segments before a JPEG's scan: SOI, a JFIF APP0 and a baseline SOF0 frame header."""
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 17, 8, height, width, 3) + b"\x01\x22\x00\x02\x11\x01\x03\x11\x01"
    return b"\xff\xd8" + app0 + sof0 + b"\xff\xda"


def test_a_2mb_png_and_a_200000_line_stream_read_back_under_10000_characters(ctx, tmp_path):
    png = png_bytes(820, 820)
    assert len(png) > 2_000_000
    lines = "".join(f"step {i}: loss {1 / (i + 1):.6f}\n" for i in range(200_000))
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("train()", execution_count=1, outputs=[
        nbformat.v4.new_output("stream", name="stdout", text=lines),
        nbformat.v4.new_output("display_data", data={"image/png": base64.b64encode(png).decode(),
                                                     "text/plain": "<Figure size 820x820 with 1 Axes>"}),
    ])]
    nbformat.write(nb, tmp_path / "train.ipynb")
    assert (tmp_path / "train.ipynb").stat().st_size > 7_000_000

    text = nbt.notebook_read(ctx, "train.ipynb", include_outputs=True)
    assert len(text) < 10_000
    assert f"output 2: image/png 820x820, {nbshrink.human_size(len(png))}]" in text  # the image's caption
    assert len(ctx.sink.images) == 1 and max(ctx.sink.images[0].width, ctx.sink.images[0].height) <= 1024
    assert "step 0: loss 1.000000" in text and "step 199999: loss 0.000005" in text
    assert "characters cut from the middle" in text
    assert "<Figure size 820x820 with 1 Axes>" in text


def test_image_sizes_from_headers():
    assert nbshrink.image_dimensions(png_bytes(64, 48)) == (64, 48)
    assert nbshrink.image_dimensions(b"GIF89a" + struct.pack("<HH", 320, 200) + b"\x00" * 8) == (320, 200)
    assert nbshrink.image_dimensions(jpeg_header(1024, 768)) == (1024, 768)
    assert nbshrink.image_dimensions(b"not an image") is None
    jpeg = base64.b64encode(jpeg_header(1024, 768) + b"\x00" * 5000).decode()
    assert nbshrink.describe_image("image/jpeg", jpeg) == "image/jpeg 1024x768, 4.9 KB"
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="300" height="150"><rect/></svg>'
    assert nbshrink.describe_image("image/svg+xml", svg) == f"image/svg+xml 300x150, {len(svg)} bytes"


def test_a_dataframe_shows_its_text_form():
    df = pd.DataFrame({"city": ["Oslo", "Lima"], "temp": [3.5, 19.0]})
    output = nbformat.v4.new_output("execute_result", execution_count=4,
                                    data={"text/html": df._repr_html_(), "text/plain": repr(df)})
    text = nbshrink.render_output(output, 3000)
    assert text == "[result 4]\n" + repr(df)
    assert "<table" not in text


def test_html_is_summarised_to_its_text():
    html = ("<div><style>.x{color:red}</style><h2>Report</h2><table><tr><th>a</th><th>b</th></tr>"
            "<tr><td>1</td><td>2</td></tr></table><script>" + "var x = 1;" * 5000 + "</script></div>")
    output = nbformat.v4.new_output("display_data", data={"text/html": html,
                                                          "text/plain": "<IPython.core.display.HTML object>"})
    text = nbshrink.render_output(output, 3000)
    assert text.startswith(f"[display]\n[text/html, {nbshrink.human_size(len(html))}, 1 script(s) not run]")
    assert "Report\na | b\n1 | 2" in text
    assert "var x" not in text and "IPython.core.display.HTML" not in text


def test_widget_views_are_named():
    data = {"application/vnd.jupyter.widget-view+json": {"model_id": "0123456789abcdef", "version_major": 2,
                                                         "version_minor": 0},
            "text/plain": "IntSlider(value=3)"}
    text = nbshrink.render_output(nbformat.v4.new_output("display_data", data=data), 3000)
    assert text == "[widget IntSlider(value=3) (model 01234567); its live state is in the kernel]"
    bare = {"application/vnd.jupyter.widget-view+json": {"model_id": "abc"}}
    models = nbshrink.widget_models({"widgets": {"application/vnd.jupyter.widget-state+json": {
        "state": {"abc": {"model_name": "FloatSliderModel"}}}}})
    assert "[widget FloatSlider (model abc)" in nbshrink.render_output(
        nbformat.v4.new_output("display_data", data=bare), 3000, models)


def test_errors_lose_their_colours_and_keep_head_and_tail():
    frames = [f"\x1b[0;32mFile\x1b[0m frame_{i}.py, line {i}" for i in range(3000)]
    output = nbformat.v4.new_output("error", ename="KeyError", evalue="'price'", traceback=frames)
    text = nbshrink.render_output(output, 2000)
    assert text.startswith("[error] KeyError: 'price'\nFile frame_0.py, line 0")
    assert text.rstrip().endswith("File frame_2999.py, line 2999")
    assert "\x1b" not in text and len(text) < 2200


def test_progress_bars_keep_what_a_terminal_shows():
    text = "epoch 1\r 10%|#\r 50%|#####\r100%|##########\nfinished\n"
    output = nbformat.v4.new_output("stream", name="stderr", text=text)
    assert nbshrink.render_output(output, 3000) == "[stderr]\n100%|##########\nfinished"


def test_many_outputs_share_one_budget(ctx, tmp_path):
    outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"{i}\n" + "x" * 5000) for i in range(40)]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("loop()", outputs=outputs)]
    nbformat.write(nb, tmp_path / "many.ipynb")
    text = nbt.notebook_read(ctx, "many.ipynb", include_outputs=True)
    assert len(text) < ctx.config.output_limit
    assert "[stdout: withheld, this read's output budget is spent]" in text


def test_pasted_images_in_markdown_are_described_not_shown(ctx, tmp_path):
    png = base64.b64encode(png_bytes(40, 30)).decode()
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_markdown_cell(f"See ![chart](data:image/png;base64,{png}) above.")
    cell.attachments = {"logo.png": {"image/png": png}}
    nb.cells = [cell]
    nbformat.write(nb, tmp_path / "doc.ipynb")
    text = nbt.notebook_read(ctx, "doc.ipynb")
    assert png[:100] not in text
    assert "data:image/png;base64,<image/png 40x30" in text and "rewriting this cell would drop them" in text
    assert "[attachment logo.png: image/png 40x30," in text
    assert cell_ids(tmp_path / "doc.ipynb")[0] in text
