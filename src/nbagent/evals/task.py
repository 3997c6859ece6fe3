"""Eval tasks and suites on disk: a task folder (task.toml, workspace/, check.py, solution/) read and checked.

A task is a folder::

    fix-failing-cell/
      task.toml     prompt = "...", tags = [...], [settings] toolsets, approval, max_steps, time_limit
      workspace/    the files and notebooks the agent starts from
      check.py      pytest-style asserts, run in a fresh process in the finished workspace
      solution/     a reference result: files laid over workspace/ that pass the check
      solution.md   optional: the reference's final answer, for checks that read the answer

``task.yaml`` may stand in for ``task.toml``. A suite is a folder of task folders, with an optional
``suite.toml`` naming it and giving its version (the built-in suite is ``nbagent/evals/suite``).
"""

from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import UNATTENDED_MODES
from ..errors import ConfigError

SETTINGS = ("toolsets", "approval", "max_steps", "time_limit", "profile")
"""What a task may set for its agent (anything else in [settings] is refused: a typo must not pass
silently as a default)."""
APPROVALS = UNATTENDED_MODES
DEFAULT_TIME_LIMIT = 600.0
BUILTIN_SUITE = Path(__file__).parent / "suite"


@dataclass(frozen=True)
class Task:
    name: str
    folder: Path
    prompt: str
    tags: tuple[str, ...] = ()
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def workspace(self) -> Path:
        return self.folder / "workspace"

    @property
    def check(self) -> Path:
        return self.folder / "check.py"

    @property
    def solution(self) -> Path:
        return self.folder / "solution"

    @property
    def solution_answer(self) -> str:
        answer = self.folder / "solution.md"
        return answer.read_text(encoding="utf-8") if answer.is_file() else ""

    @property
    def approval(self) -> str:
        return self.settings.get("approval", "auto")

    @property
    def time_limit(self) -> float:
        return float(self.settings.get("time_limit", DEFAULT_TIME_LIMIT))

    def agent_options(self) -> dict[str, Any]:
        """The task's settings as Agent options (the time limit is the harness's, not the agent's)."""
        return {k: v for k, v in self.settings.items() if k != "time_limit"}


@dataclass(frozen=True)
class Suite:
    name: str
    version: str
    folder: Path
    tasks: tuple[Task, ...]

    def select(self, pattern: str | None) -> "Suite":
        """The tasks whose name or a tag matches ``pattern`` (globs, comma-separated); all for None."""
        if not pattern:
            return self
        globs = [g.strip() for g in pattern.split(",") if g.strip()]
        chosen = tuple(t for t in self.tasks
                       if any(fnmatch.fnmatchcase(name, g) for g in globs for name in (t.name, *t.tags)))
        if not chosen:
            raise ConfigError(f"no task of suite {self.name!r} matches {pattern!r}")
        return Suite(self.name, self.version, self.folder, chosen)


def load_suite(folder: str | Path | None = None) -> Suite:
    """The suite in ``folder`` (a folder of task folders, or one task folder), or the built-in one."""
    root = Path(folder).expanduser().resolve() if folder is not None else BUILTIN_SUITE
    if not root.is_dir():
        raise ConfigError(f"no suite at {root}: give a folder of task folders")
    if _task_file(root) is not None:  # one task on its own
        return Suite(root.name, "", root.parent, (load_task(root),))
    meta = _read_table(root / "suite.toml") if (root / "suite.toml").is_file() else {}
    tasks = tuple(load_task(child) for child in sorted(root.iterdir())
                  if child.is_dir() and _task_file(child) is not None)
    if not tasks:
        raise ConfigError(f"{root} holds no task folders (each needs a task.toml or task.yaml)")
    return Suite(str(meta.get("name", root.name)), str(meta.get("version", "")), root, tasks)


def load_task(folder: Path) -> Task:
    """Read and check one task folder; a clear ConfigError names what is wrong."""
    spec_file = _task_file(folder)
    if spec_file is None:
        raise ConfigError(f"{folder} has no task.toml or task.yaml")
    spec = _read_table(spec_file)
    prompt = spec.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ConfigError(f"{spec_file}: 'prompt' must be a non-empty string")
    if not (folder / "check.py").is_file():
        raise ConfigError(f"{folder} has no check.py: a task passes only when its check says so")
    if not (folder / "workspace").is_dir():
        raise ConfigError(f"{folder} has no workspace/ folder to start from")
    tags = spec.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise ConfigError(f"{spec_file}: 'tags' must be a list of strings")
    return Task(name=folder.name, folder=folder.resolve(), prompt=prompt.strip(), tags=tuple(tags),
                settings=_settings(spec.get("settings", {}), spec_file))


def _settings(raw: Any, where: Path) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: [settings] must be a table")
    unknown = sorted(set(raw) - set(SETTINGS))
    if unknown:
        raise ConfigError(f"{where}: unknown setting {unknown[0]!r} (a task may set {', '.join(SETTINGS)})")
    settings = dict(raw)
    if settings.get("approval", "auto") not in APPROVALS:
        raise ConfigError(f"{where}: approval must be one of {APPROVALS} (an eval never waits on a person)")
    for key in ("max_steps", "time_limit"):
        value = settings.get(key)
        if value is not None and (not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0):
            raise ConfigError(f"{where}: {key} must be a positive number")
    if isinstance(settings.get("toolsets"), list):
        settings["toolsets"] = ",".join(settings["toolsets"])
    return settings


def _task_file(folder: Path) -> Path | None:
    for name in ("task.toml", "task.yaml", "task.yml"):
        if (folder / name).is_file():
            return folder / name
    return None


def _read_table(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix == ".toml":
            return tomllib.loads(text)
        import yaml

        data = yaml.safe_load(text)
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        raise ConfigError(f"{path} cannot be read: {exc}") from None
    except ImportError:
        raise ConfigError(f"{path}: reading YAML needs PyYAML (pip install pyyaml), or write task.toml") from None
    except Exception as exc:  # yaml.YAMLError: its module may not be importable above
        raise ConfigError(f"{path} cannot be read: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a table of settings")
    return data
