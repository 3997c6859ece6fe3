"""DSEval's problem sets as files: a benchmark folder of ``.py`` problem sets, read into questions.

DSEval (MetaCopilot/dseval, MIT) writes a problem set as a Python file cut into sections by
``# %%`` lines. A section that starts with a docstring holding YAML (``question``, ``validator``,
``data``, ``execution``) is a question whose code is the reference solution; one without is context
code that runs as given. A benchmark folder holds the sets, ``_manifest.yaml`` (name, version) and
``_inputs/`` (the data every set reads as ``inputs/...``; ``_inputs/<set>/`` when a set has its own).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import ConfigError

_SECTION = re.compile(r'r?"""([\s\S]+?)"""\n([\s\S]+)')


@dataclass(frozen=True)
class Section:
    code: str
    """The reference solution (a question), or the given code (context)."""
    question: str | None = None
    validator: dict[str, Any] | None = None
    execution: dict[str, Any] = field(default_factory=dict)

    @property
    def is_question(self) -> bool:
        return self.question is not None and bool(self.code)


@dataclass(frozen=True)
class ProblemSet:
    name: str
    path: Path
    sections: tuple[Section, ...]
    inputs: Path | None
    """The folder copied to the workspace as ``inputs/``."""

    @property
    def questions(self) -> list[Section]:
        return [s for s in self.sections if s.is_question]


@dataclass(frozen=True)
class Benchmark:
    name: str
    version: str
    folder: Path
    sets: tuple[ProblemSet, ...]


def load_benchmark(folder: Path) -> Benchmark:
    """The benchmark in ``folder`` (its ``_manifest.yaml`` and problem sets)."""
    import yaml

    manifest = folder / "_manifest.yaml"
    if not manifest.is_file():
        raise ConfigError(f"{folder} is not a DSEval benchmark folder: it has no _manifest.yaml")
    meta = yaml.safe_load(manifest.read_text(encoding="utf-8")) or {}
    sets = tuple(read_problem_set(p) for p in sorted(folder.glob("*.py")) if not p.name.startswith("_"))
    if not sets:
        raise ConfigError(f"{folder} holds no problem sets (*.py)")
    return Benchmark(str(meta.get("name", folder.name)), str(meta.get("version", "")), folder, sets)


def read_problem_set(path: Path) -> ProblemSet:
    import yaml

    sections = []
    for raw in path.read_text(encoding="utf-8").split("# %%\n")[1:]:
        raw = raw.strip()
        if not raw:
            continue
        found = _SECTION.match(raw)
        if found is None:
            sections.append(Section(code=raw))
            continue
        try:
            setup = yaml.safe_load(found.group(1)) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: a section's YAML cannot be read: {exc}") from None
        if not isinstance(setup, dict):
            raise ConfigError(f"{path}: a section's docstring must hold YAML settings")
        sections.append(Section(code=found.group(2).strip(), question=setup.get("question"),
                                validator=setup.get("validator"), execution=setup.get("execution") or {}))
    own = path.parent / "_inputs" / path.stem
    shared = path.parent / "_inputs"
    inputs = own if own.is_dir() else shared if shared.is_dir() else None
    return ProblemSet(path.stem, path, tuple(sections), inputs)
