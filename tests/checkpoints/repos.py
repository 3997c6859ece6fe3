"""Real git repositories shaped like a user's project: dirty tree, untracked, ignored, CRLF, binary, notebook."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

NOTEBOOK = {
    "cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "execution_count": None, "outputs": [],
               "source": ["x = 1\n"]},
              {"cell_type": "markdown", "id": "m1", "metadata": {}, "source": ["# title"]}],
    "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, check=True, text=True).stdout


def user_view(repo: Path) -> tuple[str, str, str, str]:
    """What the user sees of git: status, stash, every commit, and the index file's bytes' hash."""
    import hashlib

    index = (repo / ".git" / "index").read_bytes()
    return (git(repo, "status", "--porcelain"), git(repo, "stash", "list"),
            git(repo, "log", "--all", "--oneline"), hashlib.sha256(index).hexdigest())


def files_of(root: Path) -> dict[str, bytes]:
    """Every file under root except .git/ and .nbagent/, with its bytes (node_modules included)."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if rel.split("/")[0] in (".git", ".nbagent") or not p.is_file():
            continue
        out[rel] = p.read_bytes()
    return out


def make_project(repo: Path) -> Path:
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "T")
    (repo / ".gitignore").write_text("node_modules/\nbuild/\n")
    (repo / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (repo / "data.bin").write_bytes(bytes(range(256)) * 4)
    (repo / "analysis.ipynb").write_text(json.dumps(NOTEBOOK, indent=1))
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("print('hi')\n")
    (repo / "run.sh").write_text("#!/bin/sh\necho run\n")
    (repo / "run.sh").chmod(0o755)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "initial")
    git(repo, "stash", "list")
    (repo / "src" / "app.py").write_text("print('hi, dirty')\n")  # dirty, unstaged
    (repo / "staged.txt").write_text("staged\n")
    git(repo, "add", "staged.txt")  # staged, not committed
    (repo / "notes.txt").write_text("untracked\n")
    (repo / "node_modules").mkdir()
    (repo / "node_modules" / "dep.js").write_text("module.exports = 1\n")
    return repo
