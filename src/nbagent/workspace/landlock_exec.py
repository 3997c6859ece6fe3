"""The Landlock launcher: ``python -P -m nbagent.workspace.landlock_exec SPEC -- argv...``.

Restricts itself with Landlock (the kernel's own unprivileged filesystem sandbox, through the PyPI
``landlock`` binding), then executes ``argv``, which inherits the restriction and can never lift it.
Landlock grants, never subtracts: "read everything but the secret stores" is granted as every entry of
each folder on the way to a secret store except the store itself (so listing the home folder itself is
refused, reading a file in it is not). Writes are granted in the workspace, the extra writable folders,
a private temporary folder (``TMPDIR``) and ``/dev`` (``/dev/null``, terminals).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path


def readable(hidden: list[Path], top: Path = Path("/")) -> list[Path]:
    """Paths whose subtrees together cover ``top`` except the ``hidden`` paths."""
    if any(h == top for h in hidden):
        return []
    if not any(top in h.parents for h in hidden):
        return [top]
    out: list[Path] = []
    try:
        entries = sorted(top.iterdir())
    except OSError:
        return []
    for entry in entries:
        if entry.is_symlink():
            continue  # reached through its target's own rule
        out += readable(hidden, entry)
    return out


def restrict(spec: dict) -> None:
    from landlock import FSAccess, Ruleset  # type: ignore[import-not-found]

    read = FSAccess.EXECUTE | FSAccess.READ_FILE | FSAccess.READ_DIR
    rules = Ruleset()
    hidden = [Path(p) for p in spec.get("hidden", [])]
    for path in readable(hidden):
        _allow(rules, path, read)
    private_tmp = Path(tempfile.mkdtemp(prefix="nbagent-sandbox-"))
    os.environ["TMPDIR"] = str(private_tmp)
    writable = [private_tmp, *map(Path, spec.get("writable", []))]
    if spec.get("write_workspace", True):
        writable.append(Path(spec["workspace"]))
    for path in writable:
        _allow(rules, path, FSAccess.all())
    _allow(rules, Path("/dev"), read | FSAccess.WRITE_FILE)
    rules.apply()


def _allow(rules, path: Path, access) -> None:
    try:
        if path.is_dir():
            rules.allow(str(path), rules=access)
        else:  # a file takes file rights only
            from landlock import FSAccess  # type: ignore[import-not-found]

            rules.allow(str(path), rules=access & FSAccess.all_file())
    except OSError:
        pass  # gone since it was listed, or not ours to open


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: python -P -m nbagent.workspace.landlock_exec SPEC -- COMMAND...", file=sys.stderr)
        return 2
    restrict(json.loads(argv[0]))
    os.execvp(argv[2], argv[2:])
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
