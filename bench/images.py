"""What an image costs a step: the time to prepare it, its bytes and tokens; and the prompt cache of a
session that draws charts.

    .venv/bin/python bench/images.py [--runs 15]

1. A 2 MB PNG at 300 dpi (matplotlib's default 6.4x4.8 in figure of a dense heatmap with a line over
   it), as a notebook output holds it (base64): the time nbagent.images adds to the step that meets it
   (decode the base64, read the PNG, downscale to 1,024 px, encode once), median of --runs, as wall
   time and as this process's CPU time (the machine may be shared: the load average is printed); goal
   at most 30 ms. Bytes and estimated tokens (OpenAI's tile rule, nbagent.images.estimate_tokens)
   before and after. The same for a plain line chart at 300 dpi. Then where the time goes, each
   stage alone (median CPU ms): base64, Pillow's PNG decode (zlib inflate + unfiltering), the
   inflate alone (zlib on the PNG's IDAT stream: the floor no PNG reader on this CPU goes under
   with this zlib), and what nbagent does beyond the decode (alpha check, whole-factor reduce,
   palette or JPEG encode). With Pillow the decode is the ceiling: it alone is about the goal.
2. A scripted 30-step session (the scripted HTTP server, the real openai client, Chat Completions) that
   draws 3 charts with bash (matplotlib in a subprocess) and reads each back with read_file, between
   reads, greps and todo changes: the share of input tokens after the first request that is a
   byte-identical prefix of the previous request (bench/tokens.py's measure, images counted at their
   estimated tokens rather than their base64's length); goal at least 95%.
"""

from __future__ import annotations

import argparse
import base64
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from nbagent import Agent  # noqa: E402
from nbagent.images import ImageSink, estimate_tokens  # noqa: E402
from nbagent.testing import Call, Reply  # noqa: E402
from nbagent.testing.server import ScriptedServer  # noqa: E402

TIME_GOAL_MS, PREFIX_GOAL = 30.0, 0.95


def heatmap_png(target_bytes: int = 2_000_000) -> bytes:
    """A 300-dpi figure of a dense heatmap whose PNG is about ``target_bytes``."""
    import numpy as np
    from matplotlib.figure import Figure

    rng = np.random.default_rng(3)
    made = []
    for cols in (640, 720, 800, 880):
        fig = Figure(figsize=(6.4, 4.8))
        ax = fig.subplots()
        ax.imshow(rng.random((cols * 3 // 4, cols)), cmap="viridis", interpolation="nearest", aspect="auto")
        ax.plot(np.linspace(0, cols - 1, 200), cols * 3 // 8 + cols / 8 * np.sin(np.linspace(0, 12, 200)), "w-")
        ax.set_title("sensor grid with its mean")
        out = io.BytesIO()
        fig.savefig(out, format="png", dpi=300)
        made.append(out.getvalue())
    return min(made, key=lambda png: abs(len(png) - target_bytes))


def line_chart_png() -> bytes:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.8))
    ax = fig.subplots()
    ax.plot(range(50), [x * x % 37 for x in range(50)], marker="o")
    ax.set_title("a line chart")
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=300)
    return out.getvalue()


def timed(raw: bytes, runs: int) -> dict:
    text = base64.b64encode(raw).decode()
    wall, cpu = [], []
    for _ in range(runs):
        sink = ImageSink(1024)
        w, c = time.perf_counter(), time.process_time()
        sink.add_output("image/png", text, "cell a output 1")
        cpu.append((time.process_time() - c) * 1000)
        wall.append((time.perf_counter() - w) * 1000)
    (image,) = sink.images
    from PIL import Image as PILImage

    w, h = PILImage.open(io.BytesIO(raw)).size
    return {"bytes": len(raw), "size": (w, h), "tokens": estimate_tokens(w, h), "wall": statistics.median(wall),
            "cpu": statistics.median(cpu), "out_bytes": len(base64.b64decode(image.data)), "out_mime": image.mime,
            "out_size": (image.width, image.height), "out_tokens": image.tokens}


CHART_SCRIPT = """import sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
n = int(sys.argv[1])
plt.figure(figsize=(6.4, 4.8))
plt.plot(range(30), [(x * (n + 2)) % 17 for x in range(30)])
plt.title(f"chart {n}")
plt.savefig(f"chart_{n}.png", dpi=150)
"""


def session_script() -> list[Reply]:
    """30 model calls: three charts drawn and read back, among reads, greps and todo changes."""
    replies: list[Reply] = []
    fillers = [Call("read_file", {"path": "data.csv"}), Call("grep", {"pattern": "region"}),
               Call("read_file", {"path": "notes.md"}), Call("glob", {"pattern": "*.csv"})]
    for step in range(29):
        if step in (4, 14, 24):
            n = (4, 14, 24).index(step) + 1
            replies.append(Reply(tool_calls=[Call("bash", {"command": f"{sys.executable} plot.py {n}"})]))
        elif step in (5, 15, 25):
            n = (5, 15, 25).index(step) + 1
            replies.append(Reply(tool_calls=[Call("read_file", {"path": f"chart_{n}.png"})]))
        elif step % 7 == 3:
            replies.append(Reply(tool_calls=[Call("todo_write", {"todos": [
                {"content": f"chart {k}", "status": "completed" if k * 10 < step else "pending"}
                for k in (1, 2, 3)]})]))
        else:
            replies.append(Reply(tool_calls=[fillers[step % len(fillers)]]))
    replies.append(Reply(text="The three charts are drawn and look right."))
    return replies


def normalized(body: dict) -> dict:
    """The body with each image's data URL replaced by as many characters as its estimated tokens
    take at four a token (the same image gives the same text: prefixes compare as before)."""
    import json

    from PIL import Image as PILImage

    def walk(value):
        if isinstance(value, str) and value.startswith("data:image/"):
            raw = base64.b64decode(value.split(",", 1)[1])
            w, h = PILImage.open(io.BytesIO(raw)).size
            return f"<image {hash(value) & 0xffffff:06x}>" + "." * (4 * estimate_tokens(w, h))
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return json.loads(json.dumps(walk(body)))


def session_share() -> tuple[float, int, int]:
    from tokens import figures  # bench/tokens.py's measure

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "plot.py").write_text(CHART_SCRIPT)
        (root / "data.csv").write_text("region,units\n" + "".join(f"r{i},{i * 3}\n" for i in range(200)))
        (root / "notes.md").write_text("# Notes\nDraw one chart per region group.\n" * 20)
        with ScriptedServer(*session_script()) as server:
            with Agent(workspace=root, model="gpt-5-mini", base_url=server.url, api_key="sk-test", approval="auto",
                       max_retries=0, max_steps=40, repo_map=False, memory_embeddings="off", vision=True) as agent:
                result = agent.run("draw three charts of the data and check each")
            server.assert_complete()
            bodies = [normalized(r.body or {}) for r in server.model_requests()]
    images = sum(1 for c in result.tool_calls if "[image 1:" in (c.get("output") or ""))
    f = figures(bodies)
    return sum(f.shared[1:]) / sum(f.tokens[1:]), len(bodies), images


def stages(raw: bytes, runs: int) -> dict[str, float]:
    """Median CPU ms of each stage alone, for one PNG as a notebook holds it."""
    import struct
    import zlib

    from PIL import Image as PILImage

    text = base64.b64encode(raw).decode()
    chunks, pos = [], 8
    while pos < len(raw):  # the IDAT stream: PNG chunks are length, type, data, CRC
        (length,) = struct.unpack(">I", raw[pos:pos + 4])
        if raw[pos + 4:pos + 8] == b"IDAT":
            chunks.append(raw[pos + 8:pos + 8 + length])
        pos += 12 + length
    idat = b"".join(chunks)

    def decode() -> None:
        with PILImage.open(io.BytesIO(raw)) as im:
            im.load()

    def cpu_ms(fn) -> float:
        times = []
        for _ in range(runs):
            c = time.process_time()
            fn()
            times.append((time.process_time() - c) * 1000)
        return statistics.median(times)

    return {"base64": cpu_ms(lambda: base64.b64decode(text)), "decode": cpu_ms(decode),
            "inflate": cpu_ms(lambda: zlib.decompress(idat))}


BEYOND_DECODE_GOAL_MS = 20.0
"""What nbagent does after Pillow's decode (alpha check, reduce, encode), for bench/guard.py: the decode
alone is about the whole 30 ms goal on a 2-core machine, so this is the part a change here can move."""


def split_timed(raw: bytes, runs: int) -> dict[str, float]:
    """Median CPU ms of the sink's whole call, split within each call into the floor (the base64 and
    Pillow's decode, timed where the sink calls them) and the rest, nbagent's own part. (Subtracting the
    decode's median, timed alone, from the call's swung nbagent's part from 4 to 21 ms between runs.)"""
    from PIL import ImageFile

    from nbagent.images import sink as sink_module

    spent = [0.0]

    def timing(fn):
        def timed_fn(*args, **kwargs):
            started = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[0] += time.process_time() - started
        return timed_fn

    text = base64.b64encode(raw).decode()
    load, b64 = ImageFile.ImageFile.load, sink_module.base64
    ImageFile.ImageFile.load = timing(load)
    sink_module.base64 = type("timed_base64", (), {"b64decode": staticmethod(timing(base64.b64decode)),
                                                   "b64encode": staticmethod(base64.b64encode)})
    floors, rests = [], []
    try:
        for _ in range(runs):
            spent[0] = 0.0
            started = time.process_time()
            ImageSink(1024).add_output("image/png", text, "cell a output 1")
            whole = time.process_time() - started
            floors.append(spent[0] * 1000)
            rests.append((whole - spent[0]) * 1000)
    finally:
        ImageFile.ImageFile.load, sink_module.base64 = load, b64
    return {"floor": statistics.median(floors), "beyond": statistics.median(rests)}


def guard() -> list[tuple[str, float, str, bool]]:
    """The figures bench/guard.py shows (CPU ms, medians of 9; about 8 s): each image's time to the
    step, and the part of it beyond Pillow's PNG decode and the base64, timed within the same calls. Where the decode leaves less
    than nbagent's own 20 ms of the 30 ms goal on this machine (a ceiling: a PNG has no shortcut, it is
    inflated whole, and zlib's inflate is most of it, docs/tools.md "Images"), the total is judged by
    the part nbagent owns, and the goal column says so with the decode's time. (Judging by "the decode
    alone reaches the goal" made the 300-dpi line chart, whose decode takes 27-36 ms here, pass or miss
    by which side of 30 ms its decode fell on.)
    The session's prefix share is left out (deterministic, and slow to run: `main` prints it)."""
    rows = []
    for name, raw in (("2 MB PNG", heatmap_png()), ("300-dpi line chart", line_chart_png())):
        r, parts = timed(raw, 9), split_timed(raw, 9)
        floor, beyond = parts["floor"], parts["beyond"]
        beyond_ok = beyond <= BEYOND_DECODE_GOAL_MS
        ceiling = floor + BEYOND_DECODE_GOAL_MS > TIME_GOAL_MS
        goal = f"<= {TIME_GOAL_MS:.0f} ms" + (f" (ceiling: decode {floor:.0f} ms)" if ceiling else "")
        rows.append((f"image prepare, {name} (CPU ms)", r["cpu"], goal,
                     r["cpu"] <= TIME_GOAL_MS or (ceiling and beyond_ok)))
        rows.append((f"image prepare, {name}, beyond the decode (CPU ms)", beyond,
                     f"<= {BEYOND_DECODE_GOAL_MS:.0f} ms", beyond_ok))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"load average {load:.1f} on {os.cpu_count()} cores")
    for name, raw in (("2 MB heatmap PNG, 300 dpi", heatmap_png()), ("line chart PNG, 300 dpi", line_chart_png())):
        r = timed(raw, args.runs)
        print(f"{name}: {r['bytes'] / 1e6:.2f} MB {r['size'][0]}x{r['size'][1]}, ~{r['tokens']} tokens -> "
              f"{r['out_mime']} {r['out_bytes'] / 1e3:.0f} KB {r['out_size'][0]}x{r['out_size'][1]}, ~{r['out_tokens']} tokens")
        print(f"  time added to the step (median of {args.runs}): {r['wall']:.1f} ms wall, {r['cpu']:.1f} ms CPU; "
              f"goal <= {TIME_GOAL_MS:.0f} ms: ratio {r['cpu'] / TIME_GOAL_MS:.2f} (CPU)")
        st = stages(raw, args.runs)
        beyond = r["cpu"] - st["decode"] - st["base64"]
        print(f"  where (CPU ms, each alone): base64 {st['base64']:.1f}, Pillow's PNG decode {st['decode']:.1f} "
              f"(of which zlib inflate {st['inflate']:.1f}: the floor), nbagent beyond the decode {beyond:.1f}; "
              f"the decode alone is {st['decode'] / TIME_GOAL_MS:.2f} of the goal")
    share, requests, images = session_share()
    print(f"30-step session drawing 3 charts: {requests} requests, {images} images read back; prefix share after "
          f"the first request {share:.1%} (goal >= {PREFIX_GOAL:.0%}: ratio {share / PREFIX_GOAL:.3f})")


if __name__ == "__main__":
    main()
