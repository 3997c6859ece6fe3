"""docs/internals.md's module map is generated from the module docstrings and never stale."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_module_map_is_up_to_date_and_every_module_has_a_docstring():
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_internals.py"), "--check"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr


def test_the_map_names_every_module_with_its_purpose():
    page = (ROOT / "docs" / "internals.md").read_text(encoding="utf-8")
    assert "| `nbagent.cli.terminal` | The terminal front end's two parts" in page
    assert "| `nbagent.events` | The one typed event stream that every front end renders. |" in page
    suite = ROOT / "src" / "nbagent" / "evals" / "suite"  # data: the eval tasks' own Python files
    modules = sorted(p for p in (ROOT / "src" / "nbagent").rglob("*.py") if not p.is_relative_to(suite))
    assert all(f"`{_dotted(path)}`" in page for path in modules)


def _dotted(path: Path) -> str:
    parts = path.relative_to(ROOT / "src").with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
