"""Real images for the image tests, drawn here (Pillow, matplotlib's Agg backend): nothing is shipped."""

from __future__ import annotations

import base64
import io
import random


def png(width: int = 2000, height: int = 1200, noise: bool = False) -> bytes:
    from PIL import Image, ImageDraw

    im = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(im)
    for i in range(0, width, max(1, width // 20)):
        draw.line([(i, height), (i + width // 40, height // 3)], fill=(30, 90, 200), width=5)
    if noise:
        rng = random.Random(7)
        im.putdata([(rng.randrange(256), rng.randrange(256), rng.randrange(256)) for _ in range(width * height)])
    out = io.BytesIO()
    im.save(out, "PNG")
    return out.getvalue()


def encoded(fmt: str, width: int = 1600, height: int = 900, mode: str = "RGB") -> bytes:
    from PIL import Image

    im = Image.new(mode, (width, height), (200, 30, 30) if mode == "RGB" else 5)
    out = io.BytesIO()
    im.save(out, fmt)
    return out.getvalue()


def chart_png(title: str = "sales by month", dpi: int = 100) -> bytes:
    from matplotlib.figure import Figure  # no pyplot: the process's backend is left as it is

    fig = Figure(figsize=(6.4, 4.8))
    ax = fig.subplots()
    ax.plot([1, 2, 3, 4], [3, 1, 4, 1], marker="o")
    ax.set_title(title)
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=dpi)
    return out.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def chart_notebook(path, outputs_per_cell: int = 1, cells: int = 1) -> list[str]:
    """A notebook whose code cells each show ``outputs_per_cell`` chart PNGs; returns the cell ids."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    for c in range(cells):
        cell = nbformat.v4.new_code_cell(f"plot({c})", id=f"cell{c}")
        cell.outputs = [nbformat.v4.new_output("display_data", data={"image/png": b64(chart_png(f"chart {c}.{o}")),
                                                                      "text/plain": "<Figure size 640x480 with 1 Axes>"})
                        for o in range(outputs_per_cell)]
        nb.cells.append(cell)
    nbformat.write(nb, str(path))
    return [c.id for c in nb.cells]
