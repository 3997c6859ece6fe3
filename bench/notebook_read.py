"""Notebook figures: what notebook_read costs and returns, against nbformat.read of the same file.

Two notebooks: a small one (20 cells with short outputs) and a heavy one (a 2 MB PNG and a
200,000-line stream output). For each: median time of notebook_read(include_outputs=True) and of
nbformat.read (the reference: parsing alone), their ratio, and the characters the model gets against
the file's size. Also an edit (read + validate + atomic write) against nbformat.read + nbformat.write.

Run: .venv/bin/python bench/notebook_read.py   (medians of several runs, measured in one run)
"""

from __future__ import annotations

import base64
import statistics
import struct
import sys
import tempfile
import time
import zlib
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from nbagent.config import AgentConfig  # noqa: E402
from nbagent.tools import notebook as nbt  # noqa: E402
from nbagent.tools.context import ToolContext  # noqa: E402
from nbagent.workspace.root import Workspace  # noqa: E402


def noise_png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    import os

    rows = b"".join(b"\x00" + os.urandom(width * 3) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 1)) + chunk(b"IEND", b"")


def small() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    for i in range(10):
        nb.cells.append(nbformat.v4.new_markdown_cell(f"## Step {i}\nWhat this step does."))
        nb.cells.append(nbformat.v4.new_code_cell(f"x{i} = {i} * 2\nprint(x{i})", execution_count=i + 1,
                                                  outputs=[nbformat.v4.new_output("stream", name="stdout",
                                                                                  text=f"{i * 2}\n")]))
    return nb


def heavy() -> nbformat.NotebookNode:
    png = base64.b64encode(noise_png(820, 820)).decode()
    lines = "".join(f"step {i}: loss {1 / (i + 1):.6f}\n" for i in range(200_000))
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Training"), nbformat.v4.new_code_cell("train()", outputs=[
        nbformat.v4.new_output("stream", name="stdout", text=lines),
        nbformat.v4.new_output("display_data", data={"image/png": png, "text/plain": "<Figure>"})])]
    return nb


def median_seconds(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="nbagent-bench-"))
    ctx = ToolContext(workspace=Workspace(root), config=AgentConfig.load(workspace=root), emit=lambda e: None,
                      processes=None)
    print(f"{'notebook':<8} {'file':>10} {'read chars':>10} {'notebook_read':>14} {'nbformat.read':>14} {'ratio':>6}")
    for name, nb, runs in (("small", small(), 30), ("heavy", heavy(), 5)):
        path = root / f"{name}.ipynb"
        nbformat.write(nb, path)
        text = nbt.notebook_read(ctx, path.name, include_outputs=True)
        ours = median_seconds(lambda: nbt.notebook_read(ctx, path.name, include_outputs=True), runs)
        ref = median_seconds(lambda: nbformat.read(path, as_version=4), runs)
        size = path.stat().st_size
        print(f"{name:<8} {size:>10,} {len(text):>10,} {ours * 1000:>11.1f} ms {ref * 1000:>11.1f} ms {ours / ref:>6.2f}")

    path = root / "small.ipynb"
    first_id = nbformat.read(path, as_version=4).cells[0].id
    counter = iter(range(10_000))

    def edit():
        nbt.notebook_read(ctx, path.name)
        nbt.notebook_edit(ctx, path.name, first_id, f"## Step {next(counter)}")

    def plain():
        nb = nbformat.read(path, as_version=4)
        nb.cells[0].source = f"## Plain {next(counter)}"
        nbformat.write(nb, path)

    ours, ref = median_seconds(edit, 30), median_seconds(plain, 30)
    print(f"edit (read + notebook_edit) {ours * 1000:.1f} ms vs nbformat read + write {ref * 1000:.1f} ms: "
          f"ratio {ours / ref:.2f}")


if __name__ == "__main__":
    main()
