"""grep and the ignore-aware walk against plain ripgrep, on a tree of 50,000+ files.

    .venv/bin/python bench/search.py [--runs 9] [--rebuild]

The tree (built once, cached in bench/.cache/search-tree, gitignored) is a git
repository holding a hard-linked copy of this venv's site-packages, generated
source files with nested .gitignore files, and ignored build output and
node_modules. Every figure is a median of ``--runs`` timed runs after one warm-up,
measured in this one run, side by side with the reference and as a ratio.
Goals: grep within 1.1x of rg, the walk within 1.3x of ``rg --files``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from nbagent.config import AgentConfig  # noqa: E402
from nbagent.tools.context import ToolContext  # noqa: E402
from nbagent.tools.search import GREP_TOOL  # noqa: E402
from nbagent.workspace.walker import find_rg, list_files  # noqa: E402
from nbagent.workspace.root import Workspace  # noqa: E402

TREE = REPO / "bench" / ".cache" / "search-tree"
MIN_FILES = 50_000


def build_tree(rebuild: bool) -> Path:
    done = TREE / ".built"
    if done.exists() and not rebuild:
        return TREE
    shutil.rmtree(TREE, ignore_errors=True)
    TREE.mkdir(parents=True)
    site = Path(sysconfig.get_paths()["purelib"])
    print(f"building {TREE} from {site} ...", file=sys.stderr)
    shutil.copytree(site, TREE / "site-packages", copy_function=_link_or_copy, symlinks=True)
    (TREE / ".gitignore").write_text("__pycache__/\n*.pyc\n/build/\nnode_modules/\n*.log\n")
    for i in range(40):  # kept source, with nested rules
        pkg = TREE / "generated" / f"pkg{i:02}"
        for j in range(300):
            sub = pkg / f"mod{j // 50}"
            sub.mkdir(parents=True, exist_ok=True)
            (sub / f"file{j}.py").write_text(f"def handler_{i}_{j}(event):\n    return event  # TODO review\n")
        (pkg / ".gitignore").write_text("*.tmp\n!keep.tmp\n")
        (pkg / "scratch.tmp").write_text("ignored\n")
        (pkg / "keep.tmp").write_text("kept\n")
    for i in range(15_000):  # ignored build output
        d = TREE / "build" / f"out{i // 500}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"artifact{i}.js").write_text(f"function handler_{i}(e) {{ return e }}\n")
    for i in range(5_000):
        d = TREE / "web" / "node_modules" / f"dep{i // 100}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"index{i}.js").write_text("module.exports = {}\n")
    subprocess.run(["git", "init", "-q", str(TREE)], check=True)
    done.write_text("")
    return TREE


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def paired(ours, reference, runs: int) -> tuple[float, float, float]:
    """Medians of ours and of the reference, and the median of per-run ratios.

    The two are timed alternately, one pair per run with the order swapped each
    time, so a busy machine slows both sides alike.
    """
    ours(), reference()  # warm-up: page cache and imports
    a, b = [], []
    for i in range(runs):
        for fn, out in ((ours, a), (reference, b)) if i % 2 == 0 else ((reference, b), (ours, a)):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
    return statistics.median(a), statistics.median(b), statistics.median(x / y for x, y in zip(a, b))


def rg_run(*args: str) -> bytes:
    return subprocess.run([find_rg(), *args], cwd=TREE, capture_output=True, check=False).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args()
    root = build_tree(args.rebuild)
    total = sum(len(files) for _, _, files in os.walk(root))
    kept = len(rg_run("--files", "--hidden", "-g", "!.git").split(b"\n")) - 1
    print(f"tree: {root}  files on disk: {total:,}  kept by the ignore rules: {kept:,}  rg: {find_rg()}")
    assert total >= MIN_FILES, f"the tree needs at least {MIN_FILES:,} files"

    ws = Workspace(root)
    ctx = ToolContext(workspace=ws, config=AgentConfig.load(workspace=root), emit=lambda e: None, processes=None)
    loop = asyncio.new_event_loop()

    def ours(pattern: str, max_results: int):
        return lambda: loop.run_until_complete(GREP_TOOL.fn(ctx, pattern=pattern, max_results=max_results))

    rows = []
    for label, pattern, cap in [
        ("grep, rare pattern", r"def __init_subclass__\(cls", 5000),
        ("grep, 12,000 matches", r"TODO review", 20_000),
        ("grep, default cap (200)", r"TODO review", 200),
    ]:
        rows.append((label, "rg -n PATTERN", *paired(ours(pattern, cap), lambda: rg_run("-n", pattern), args.runs)))

    def walk():
        return list(Workspace(root).walk())

    rows.append(("walk (Workspace.walk, all)", "rg --files", *paired(walk, lambda: rg_run("--files"), args.runs)))
    rows.append(("  same, pathspec engine", "rg --files",
                 *paired(lambda: list_files(root, ".", "pathspec"), lambda: rg_run("--files"), 3)))
    picker = Workspace(root)
    picker.files()
    rows.append(("@ picker: pick('site/req')", "rg --files",
                 *paired(lambda: picker.pick("site/req"), lambda: rg_run("--files"), args.runs)))
    loop.close()

    print(f"{'ours':28} {'median':>9}   {'reference':14} {'median':>9}   {'ratio of medians':>16}   median ratio")
    for label, ref_label, ours_s, ref_s, ratio in rows:
        print(f"{label:28} {ours_s * 1000:7.1f}ms   {ref_label:14} {ref_s * 1000:7.1f}ms   "
              f"{ours_s / ref_s:15.2f}x   {ratio:11.2f}x")
    print("goals: grep within 1.10x of rg; walk within 1.30x of rg --files")
    print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
          "(the median ratio of paired runs is the steadier figure on a busy machine)")


if __name__ == "__main__":
    main()
