"""``nbagent context``: attach, push (from standard input), list, mute, remove, on a real workspace."""

from __future__ import annotations

import pytest
import json
import subprocess
import sys

from nbagent.cli.app import main
from nbagent.attached.store import ContextStore
from nbagent.store.sessions import SessionStore


@pytest.mark.process
def test_cli_attach_push_list_mute_remove(tmp_path, capsys):
    (tmp_path / "train.log").write_text("epoch 1\nepoch 2: loss 0.5\n")
    assert main(["context", "-w", str(tmp_path), "attach", "log", "--file", "train.log", "--why", "training"]) == 0
    assert "attached log: epoch 1" in capsys.readouterr().out
    pushed = subprocess.run([sys.executable, "-m", "nbagent.cli", "context", "push", "tests", "-w", str(tmp_path)],
                            input="12 passed\x1b[31m, 1 failed\n", capture_output=True, text=True, timeout=60)
    assert pushed.returncode == 0 and "tests: new revision" in pushed.stdout, pushed.stderr
    assert main(["context", "list", "-w", str(tmp_path), "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["name"], r["kind"], r["status"], r["serial"]) for r in rows] == [
        ("log", "file", "ok", 1), ("tests", "push", "ok", 1)]
    assert rows[1]["summary"] == "12 passed [31m, 1 failed"  # no escape sequence reaches a terminal
    assert main(["context", "mute", "log", "-w", str(tmp_path)]) == 0
    assert main(["context", "remove", "tests", "-w", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["context", "list", "-w", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "log" in out and "muted" in out and "tests" not in out


def test_cli_errors_are_clear_and_change_nothing(tmp_path, capsys):
    assert main(["context", "-w", str(tmp_path), "attach", "bad name", "--command", "true"]) == 1
    assert "bad source name" in capsys.readouterr().err
    assert main(["context", "-w", str(tmp_path), "attach", "out", "--file", "../outside.txt"]) == 1
    assert "outside the workspace" in capsys.readouterr().err
    assert main(["context", "-w", str(tmp_path), "mute", "nothing"]) == 1
    assert "no attached source named 'nothing'" in capsys.readouterr().err
    with SessionStore(tmp_path) as sessions:
        sources = ContextStore(sessions.db).sources(None)
    assert sources == []  # nothing was attached
