"""DABStep in ``nbagent eval``: each question becomes "produce a notebook that prints the answer".

DABStep (Adyen and Hugging Face, CC-BY-4.0: https://huggingface.co/datasets/adyen/DABstep) asks 450
multi-step questions over one set of payments data (``payments.csv``, fee rules, merchant data and
a manual). Only the 10 questions of its ``dev`` split publish their answers; the others are scored
by the benchmark's leaderboard, so the dev split is what runs here by default and is all that can
be scored on this machine.

Each question is a task: the data files in ``data/`` of its workspace, and a prompt asking for
``answer.ipynb`` whose last cell prints the answer. The check (``dabstep_check``) re-runs the
notebook in a fresh kernel as ``notebook_check`` does (it must run clean) and scores the printed
answer with the benchmark's own rule (``dabstep_score``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ...errors import ConfigError
from .fetch import cache_root, download, link_or_copy

REVISION = "9cef9a2976ccce4d306bf220604597788b090d43"
"""The dataset's commit on the Hugging Face hub that the checksums below belong to."""
BASE_URL = "https://huggingface.co/datasets/adyen/DABstep/resolve/{revision}/data/{path}"
PINNED = {
    "tasks/dev.jsonl": "c1da755a6fe9cb538fc84719f51e1db0bff0190a1d6905767ac18c755e66a07b",
    "context/acquirer_countries.csv": "6744cf1962e4b5086342821e627f4557c32f06c3c58e8b0ff3b449dcc634f37f",
    "context/fees.json": "9a833666ae9be5a8e756dd1fe076c72e7c502d64161315ffa8fee9e5bf2599dc",
    "context/manual.md": "bb7f4ca6fdc759af1f480702b3a3b12e17e9293b0d38a1dbfbbc8ffc1e572d2c",
    "context/merchant_category_codes.csv": "83247d79f5ddcdd180e02f184b644f4912731942a2fc58d91f2a06b911d04b41",
    "context/merchant_data.json": "f158e834de27ee8407e99d9c32da690357981d2770958fd302a9bb79ced83581",
    "context/payments-readme.md": "8754b92d0b3127856ff72266ea482995d2a1f6a34d0a12732f7c26f527f2c4a5",
    "context/payments.csv": "5fbb26210a45427d7a6560cfab3a362a08e4067f27cd03695f211a51c47ffc25",
}
"""sha256 of every file at REVISION: a download that differs is refused."""
NOTEBOOK = "answer.ipynb"

PROMPT = """Answer this question from the data in data/ ({files}).

Question: {question}

Guidelines: {guidelines}

Write the analysis as the notebook {notebook}: it must run from top to bottom in a fresh kernel, and its
last code cell must print the answer alone, as its last line of output (formatted as the guidelines say).
When you are done, give the answer as your final message too."""


@dataclass(frozen=True)
class Question:
    task_id: str
    question: str
    guidelines: str
    level: str
    answer: str


def locate(data: str | Path | None = None, *, revision: str = REVISION, base_url: str = BASE_URL) -> Path:
    """The folder holding ``context/`` and ``tasks/``: ``data`` (a local copy: that folder, or a
    clone of the dataset's repository around it), else the pinned revision, downloaded once into the
    cache and checked file by file."""
    if data is not None:
        root = Path(data).expanduser().resolve()
        for folder in (root, root / "data"):
            if (folder / "context").is_dir() and (folder / "tasks").is_dir():
                return folder
        raise ConfigError(f"{root} is not a copy of DABStep's data: it needs context/ and tasks/ folders")
    folder = cache_root() / f"dabstep-{revision[:12]}"
    for path, sha256 in PINNED.items():
        download(base_url.format(revision=revision, path=path), folder / path, sha256)
    return folder


def questions(folder: Path, split: str = "dev") -> list[Question]:
    """The split's questions that have answers (only those can be scored here)."""
    path = folder / "tasks" / f"{split}.jsonl"
    if not path.is_file():
        raise ConfigError(f"{folder} has no tasks/{split}.jsonl")
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if row.get("answer") in (None, ""):
            continue
        found.append(Question(str(row["task_id"]), str(row["question"]), str(row.get("guidelines") or ""),
                              str(row.get("level") or ""), str(row["answer"])))
    if not found:
        raise ConfigError(f"{path} holds no questions with answers: they are scored by DABStep's leaderboard")
    return found


def make_workspace(folder: Path, dest: Path) -> Path:
    """``dest/workspace/data/`` with the benchmark's context files (stored once, linked for each task)."""
    workspace = dest / "workspace"
    for source in sorted((folder / "context").iterdir()):
        if source.is_file():
            target = workspace / "data" / source.name
            if not target.exists():
                link_or_copy(source, target)
    return workspace


def prompt(question: Question, folder: Path) -> str:
    files = ", ".join(sorted(p.name for p in (folder / "context").iterdir() if p.is_file()))
    return PROMPT.format(files=files, question=question.question, guidelines=question.guidelines or "none",
                         notebook=NOTEBOOK)
