"""Checkpoint figures: one snapshot of a git workspace against git's own `git add -A && git write-tree`.

For trees of 5,000 and 50,000 files (in a git repository, committed), after 1 file and after 1,000
files changed: the median time of nbagent's snapshot (GitStore.snapshot: `git add -A` into the
private index + `git write-tree`, hardened) beside `git add -A && git write-tree` run in a copy of
the same tree with its own warm index. Both sides get the same change before each measurement.
Also the first snapshot of a workspace (a cold private index hashes every file once).

Goal: within 1.5x of git's write-tree, and a cost that grows with the change, not the tree.

Run: .venv/bin/python bench/checkpoint.py   (medians of 7 runs each, measured in one run)
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from nbagent.checkpoints.gitrepo import GitRepo  # noqa: E402
from nbagent.checkpoints.gitstore import GitStore  # noqa: E402

RUNS = 7
PER_DIR = 100


def make_tree(root: Path, count: int) -> list[Path]:
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / ".gitignore").write_text(".nbagent/\n")
    files = []
    for i in range(count):
        d = root / f"d{i // (PER_DIR * PER_DIR)}" / f"s{(i // PER_DIR) % PER_DIR}"
        if i % PER_DIR == 0:
            d.mkdir(parents=True, exist_ok=True)
        f = d / f"f{i}.py"
        f.write_text(f"value_{i} = {i}\n" * 8)
        files.append(f)
    git = ["git", "-c", "user.email=b@b", "-c", "user.name=b"]
    subprocess.run(["git", "config", "gc.auto", "0"], cwd=root, check=True)  # no background gc mid-copy
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "tree"], cwd=root, check=True)
    subprocess.run(["git", "gc", "-q"], cwd=root, check=True)  # packed: the copy is quick
    return files


def touch(files: list[Path], count: int, run: int) -> None:
    step = max(1, len(files) // count)
    for f in files[::step][:count]:
        f.write_text(f"changed in run {run}\n")


def reference(root: Path) -> str:
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    return subprocess.run(["git", "write-tree"], cwd=root, check=True, capture_output=True).stdout.decode()


def measure(size: int, base: Path) -> list[tuple]:
    ours_root = base / f"ours{size}"
    files = make_tree(ours_root, size)
    ref_root = base / f"ref{size}"
    shutil.copytree(ours_root, ref_root, symlinks=True)
    ref_files = [ref_root / f.relative_to(ours_root) for f in files]
    state = ours_root / ".nbagent"
    state.mkdir()
    store = GitStore(GitRepo.find(ours_root, state), ours_root)
    started = time.perf_counter()
    store.snapshot()
    cold = time.perf_counter() - started
    reference(ref_root)
    rows = []
    run = 0
    for changed in (1, 1000):
        ours, theirs = [], []
        for _ in range(RUNS):
            run += 1
            touch(files, changed, run)
            touch(ref_files, changed, run)
            time.sleep(1.05)  # past racy-git's one-second window, so both sides see the same stat data
            t = time.perf_counter()
            store.snapshot()
            ours.append(time.perf_counter() - t)
            t = time.perf_counter()
            reference(ref_root)
            theirs.append(time.perf_counter() - t)
        rows.append((size, changed, statistics.median(ours), statistics.median(theirs)))
    return [(size, "first snapshot", cold, None), *rows]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        for size in (5_000, 50_000):
            rows += measure(size, Path(tmp))
    print(f"{'files':>7} {'changed':>15} {'nbagent snapshot':>17} {'git add+write-tree':>19} {'ratio':>6}")
    for size, changed, ours, theirs in rows:
        ref = f"{theirs * 1000:16.1f} ms" if theirs is not None else f"{'-':>19}"
        ratio = f"{ours / theirs:6.2f}" if theirs else f"{'-':>6}"
        print(f"{size:>7} {changed!s:>15} {ours * 1000:14.1f} ms {ref} {ratio}")


if __name__ == "__main__":
    main()
