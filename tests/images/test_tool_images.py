"""The tools that meet images: kernel_run in a real InteractiveShell (an inline figure, display(), a
last value that shows as an image), read_file on image files, notebook_read's per-call limit."""

from __future__ import annotations

import base64

import pytest
from IPython.core.interactiveshell import InteractiveShell

from nbagent.errors import ToolError
from nbagent.jupyter.kernel.bridge import bridge_from_shell
from nbagent.testing import tool_context
from nbagent.tools import files as ft
from nbagent.tools import kernel as kt
from nbagent.tools import notebook as nbt

from .pictures import chart_notebook, chart_png, encoded, png


@pytest.fixture
def ctx(tmp_path):
    return tool_context(tmp_path, state=False)


@pytest.fixture
def shell():
    sh = InteractiveShell.instance()
    # A plain InteractiveShell has no %matplotlib; the inline backend is wired as ipykernel does it.
    assert sh.run_cell("import matplotlib\nmatplotlib.use('module://matplotlib_inline.backend_inline')\n"
                       "from matplotlib_inline.backend_inline import configure_inline_support\n"
                       "configure_inline_support(get_ipython(), 'module://matplotlib_inline.backend_inline')\n"
                       "matplotlib.interactive(True)\nimport matplotlib.pyplot as plt").success
    yield sh
    InteractiveShell.clear_instance()


def test_kernel_run_shows_the_model_an_inline_figure_and_a_displayed_image(ctx, shell):
    ctx.kernel = bridge_from_shell(shell)
    shell.user_ns["png_bytes"] = chart_png("displayed")
    code = ("plt.figure(figsize=(4, 3)); plt.plot([1, 3, 2]); plt.title('drawn')\n"
            "from IPython.display import Image, display\n"
            "display(Image(data=png_bytes))\n"
            "print('done')")
    text = kt.kernel_run(ctx, code)
    assert "done" in text.split("displayed:")[0] and "displayed:" in text
    assert "[image 1: kernel_run display 1: image/png 640x480" in text  # display() first
    assert "[image 2: kernel_run display 2: image/png" in text  # the figure, flushed after the run
    assert [i.mime for i in ctx.sink.images] == ["image/png", "image/png"]
    assert base64.b64decode(ctx.sink.images[1].data)[:4] == b"\x89PNG"


def test_a_last_value_that_shows_as_an_image_is_seen_once(ctx, shell):
    ctx.kernel = bridge_from_shell(shell)
    shell.user_ns["png_bytes"] = png(300, 200)
    text = kt.kernel_run(ctx, "from IPython.display import Image\nImage(data=png_bytes)")
    assert text.count("[image ") == 1 and "image/png 300x200" in text
    assert len(ctx.sink.images) == 1


def test_a_run_without_displays_has_no_images(ctx, shell):
    ctx.kernel = bridge_from_shell(shell)
    assert kt.kernel_run(ctx, "1 + 1") == "value:\n2" and ctx.sink is None


def test_read_file_shows_png_jpeg_gif_and_webp_and_refuses_a_broken_one(ctx, tmp_path):
    (tmp_path / "plots").mkdir()
    files = {"plots/a.png": png(2400, 1200), "plots/b.jpg": encoded("JPEG", 640, 480),
             "plots/c.gif": encoded("GIF", 50, 40, "P"), "plots/d.webp": encoded("WEBP", 80, 60)}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    lines = [ft.read_file(ctx.for_call(name), name) for name in files]
    assert lines[0].startswith("[image 1: plots/a.png: image/png 2400x1200")
    assert "plots/b.jpg: image/jpeg 640x480" in lines[1] and "image/gif 50x40" in lines[2]
    assert "image/webp 80x60" in lines[3]
    ctx2 = ctx.for_call("x")
    ft.read_file(ctx2, "plots/a.png")
    assert (ctx2.sink.images[0].width, ctx2.sink.images[0].height) == (1024, 512)
    (tmp_path / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(50))
    with pytest.raises(ToolError, match="binary file .*not a readable image"):
        ft.read_file(ctx.for_call("y"), "broken.png")


def test_notebook_read_attaches_images_only_with_outputs_and_at_most_its_limit(ctx, tmp_path):
    chart_notebook(tmp_path / "many.ipynb", outputs_per_cell=5, cells=2)
    c = ctx.for_call("a")
    nbt.notebook_read(c, "many.ipynb")
    assert c.sink is None  # outputs not asked for: no image prepared
    c = ctx.for_call("b")
    text = nbt.notebook_read(c, "many.ipynb", include_outputs=True)
    assert len(c.sink.images) == 8 and text.count("not attached: this call already has 8") == 2
    assert "[image 8: cell cell1 output 3: image/png 640x480" in text
