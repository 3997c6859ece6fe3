"""Finding 13: temporary files left by a write killed mid-way are swept at start-up, and only those."""

from __future__ import annotations

import pytest
import os
import signal
import subprocess
import sys
import textwrap
import time

from nbagent.workspace.tempfiles import sweep, temp_path

pytestmark = pytest.mark.process

KILLED_WRITER = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    from nbagent.workspace.tempfiles import temp_path
    tmp = temp_path(Path(sys.argv[1]))
    tmp.write_text("half a notebook")
    print(tmp, flush=True)
    os.kill(os.getpid(), 9)  # killed between writing and os.replace
""")


def test_a_killed_writers_temp_file_is_swept_at_start(tmp_path, make_agent):
    target = tmp_path / "sub" / "nb.ipynb"
    target.parent.mkdir()
    out = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(target)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == -signal.SIGKILL
    left = tmp_path / "sub" / os.path.basename(out.stdout.strip())
    assert left.exists()
    mine = temp_path(target)  # this process is alive: its temporary file is in use
    mine.write_text("in progress")
    lookalikes = [tmp_path / "sub" / n for n in (".nb.ipynb.1-abc.nbagent-tmp", "notes.nbagent-tmp", ".x.tmp")]
    for path in lookalikes:
        path.write_text("user file")
        os.utime(path, (1, 1))
    old = tmp_path / ".data.csv.0badc0de.nbagent-tmp"  # an old name without a pid, a day old
    old.write_text("x")
    os.utime(old, (time.time() - 86400,) * 2)

    agent = make_agent("ok")
    deadline = time.monotonic() + 30
    while (left.exists() or old.exists()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left.exists() and not old.exists()
    assert mine.exists() and all(p.exists() for p in lookalikes)
    agent.close()
    assert sweep(tmp_path) == []


def test_an_agent_told_not_to_sweep_leaves_the_workspace_alone(tmp_path, make_agent):
    old = tmp_path / ".data.csv.0badc0de.nbagent-tmp"
    old.write_text("x")
    os.utime(old, (time.time() - 86400,) * 2)
    make_agent("ok", sweep_temp_files=False).run("hi")
    time.sleep(0.2)
    assert old.exists()
    assert sweep(tmp_path) == [old]
