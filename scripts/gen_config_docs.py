"""Print the options table of docs/configuration.md from AgentConfig's attribute docstrings."""

from __future__ import annotations

import ast
import pathlib
import re

from nbagent.config import ENV_VARS

ROOT = pathlib.Path(__file__).resolve().parents[1]


def rows():
    tree = ast.parse((ROOT / "src/nbagent/config.py").read_text())
    body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "AgentConfig").body
    for node, after in zip(body, body[1:] + [None]):
        if not isinstance(node, ast.AnnAssign):
            continue
        doc = ""
        if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
            doc = " ".join(after.value.value.split())
        yield node.target.id, ast.unparse(node.annotation), ast.unparse(node.value) if node.value else "", doc


def table() -> str:
    env = {name: var for var, name in ENV_VARS.items()}
    bar = "\\|"
    lines = ["| option | type | default | environment | meaning |", "|---|---|---|---|---|"]
    for name, typ, default, doc in rows():
        default = "the current directory" if "cwd" in default else f"`{default}`"
        doc = re.sub(r"\s*Env: [A-Z_]+[^.]*\.", "", doc).strip()
        var = f"`{env[name]}`" if name in env else ""
        lines.append(f"| `{name}` | `{typ.replace('|', bar)}` | {default.replace('|', bar)} | {var} | "
                     f"{doc.replace('|', bar)} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
