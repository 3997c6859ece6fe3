"""Property tests (hypothesis) of the hardened parsers: hostile input gives a clear refusal or a safe value."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings, strategies as st

from nbagent.errors import ToolError
from nbagent.model.parts import split_content
from nbagent.model.provider_data import LABELS, merge_delta
from nbagent.render.redaction import public_url
from nbagent.tools.listing import glob_match


@settings(max_examples=300, deadline=None)
@given(pattern=st.text(alphabet="*?[]{},!/ab.\\-", max_size=60), name=st.text(max_size=80))
def test_any_glob_is_matched_at_once_or_refused_clearly(pattern, name):
    try:
        matched = glob_match(pattern, name)
    except ToolError as refusal:  # too many alternatives, too long, or a class RE2 cannot compile
        assert str(refusal).strip(), "a refusal says why"
        return
    assert isinstance(matched, bool)
    if re.fullmatch(r"[ab][ab.,-]*", pattern):  # a plain file name (no glob syntax) matches itself
        assert glob_match(pattern, pattern)


@settings(max_examples=300, deadline=None)
@given(user=st.text(min_size=1, alphabet=st.characters(blacklist_characters="@/?#[]", blacklist_categories=("Cs",))),
       secret=st.text(min_size=4, alphabet="abcdefXYZ0123456789"), port=st.integers(1, 65535))
def test_public_url_never_keeps_credentials_or_queries(user, secret, port):
    url = f"https://{user}:{secret}@host.example:{port}/v1?key={secret}#{secret}"
    shown = public_url(url)
    # The host and the port are kept, and a digits-only secret may be part of the port's digits.
    assert secret not in shown.replace("host.example", "").replace(f":{port}/", "/")
    assert shown in (f"https://host.example:{port}/v1", "(invalid URL)")


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                                        max_size=4), max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(content=json_values)
def test_any_content_value_splits_into_text_and_reasoning(content):
    text, reasoning = split_content(content)
    assert isinstance(text, str) and isinstance(reasoning, str)


@settings(max_examples=300, deadline=None)
@given(deltas=st.lists(st.dictionaries(st.text(max_size=6), json_values, max_size=4), max_size=6))
def test_any_stream_of_provider_fields_merges_without_error(deltas):
    acc: dict = {}
    for delta in deltas:
        assert merge_delta(acc, delta) is acc
    assert set(acc) == {key for delta in deltas for key in delta}, "no field is lost or invented"
    for key in acc:  # a field streamed as text only is the text of every delta, in order
        values = [d[key] for d in deltas if key in d and d[key] is not None]
        if key not in LABELS and values and all(isinstance(v, str) for v in values):
            assert acc[key] == "".join(values)


# ----- the state directory: random trees of links, FIFOs, foreign owners and modes (issue 26) -----
STATE_NAMES = ["checkpoints", "checkpoints/copies", "checkpoints/copies/objects", "checkpoints/copies/snapshots",
               "checkpoints/copies/pins", "checkpoints/copies/pins/S1", "checkpoints/sessions", "journal",
               "journal/S1.jsonl", "outputs", "tasks", "traces.jsonl", "repomap.json", "nbagent.db",
               "context-poller.lock", "mcp.json", "checkpoints/sessions/S1.json", ".gitignore"]
STATE_KINDS = ["dir", "file", "link_out_dir", "link_out_file", "fifo", "foreign_dir", "foreign_file", "open_dir",
               "open_file"]


def _plant(path, kind, outside):
    """Make ``path`` what ``kind`` says; the outside folder is what a link points at."""
    import os

    if kind.endswith("dir") and not kind.startswith("link"):
        os.mkdir(path)
    elif kind.startswith("link"):
        os.symlink(outside / ("sub" if kind.endswith("dir") else "victim.txt"), path)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.write_bytes(b"planted\n")
    if kind.startswith("foreign"):
        os.chown(path, 4242, 4242)
    if kind.startswith("open"):
        os.chmod(path, 0o777 if kind.endswith("dir") else 0o666)


def _outside_view(folder):
    import hashlib
    import os
    import stat

    seen = {}
    for dirpath, dirs, files in os.walk(folder):
        for name in dirs + files:
            info = os.lstat(os.path.join(dirpath, name))
            data = open(os.path.join(dirpath, name), "rb").read() if stat.S_ISREG(info.st_mode) else b""
            seen[os.path.relpath(os.path.join(dirpath, name), folder)] = (
                info.st_mode, info.st_uid, info.st_mtime_ns, hashlib.sha256(data).hexdigest())
    return seen


def _use_the_state(ws):
    """Everything nbagent does in a state directory, each refusal taken as an outcome."""
    from nbagent.checkpoints import Checkpoints
    from nbagent.checkpoints.journal import RecoveryJournal
    from nbagent.checkpoints.turn_guard import forget_session
    from nbagent.knowledge.repomap import RepoMap
    from nbagent.knowledge.telemetry import TraceRecorder, read_traces
    from nbagent.mcp.config import load_servers
    from nbagent.store.db import workspace_db_path
    from nbagent.tools.limits import limit_output
    from nbagent.workspace.state_dir import OUTPUTS, POLLER_LOCK, TRACES, location, open_lock_file, state_file
    from nbagent.workspace.state_dir import usable_state_dir

    def edit_and_undo():
        cp = Checkpoints(ws, location(ws), "S1")
        cp.begin_turn(1, "turn_1")
        cp.before_change()
        (ws / "a.txt").write_text("changed\n")
        cp.end_turn()
        cp.undo(force=True)

    def journal():
        j = RecoveryJournal(location(ws), "S1", ws)
        j.create()
        j.pending("c1", "write_file", 1, {"path": "a.txt"})
        j.unresolved()

    steps = [
        lambda: workspace_db_path(ws), edit_and_undo, journal,
        lambda: TraceRecorder(location(ws) / TRACES, root=ws).write({"turn": 1}), lambda: read_traces(ws),
        lambda: RepoMap(ws).block(), lambda: limit_output("x" * 200, 20, usable_state_dir(ws, OUTPUTS)),
        lambda: open_lock_file(state_file(ws, POLLER_LOCK)).close(), lambda: load_servers(ws),
        lambda: forget_session(ws, "S1"),
    ]
    for step in steps:
        try:
            step()
        except Exception:
            pass  # a clear refusal is a fine outcome; what matters is below


@settings(max_examples=25, deadline=20_000)
@given(top=st.sampled_from(["missing", "dir", "open_dir", "foreign_dir", "link_out_dir", "file", "fifo"]),
       plan=st.dictionaries(st.sampled_from(STATE_NAMES), st.sampled_from(STATE_KINDS), max_size=6))
@pytest.mark.process
def test_no_tree_in_the_state_directory_changes_a_file_outside_or_hangs(top, plan):
    import shutil
    import tempfile
    import threading
    from pathlib import Path

    base = Path(tempfile.mkdtemp(prefix="nbagent-prop-"))
    try:
        ws, outside = base / "ws", base / "outside"
        ws.mkdir()
        (ws / "a.txt").write_text("original\n")
        (outside / "sub").mkdir(parents=True)
        for name in ("victim.txt", "sub/victim.txt", "sub/S1.json", "sub/S1.jsonl"):
            (outside / name).write_text("precious\n")
        state = ws / ".nbagent"
        if top != "missing":
            _plant(state, top, outside)
        for name in sorted(plan, key=lambda n: n.count("/")):
            if state.is_dir() and not state.is_symlink() and (state / name).parent.is_dir() \
                    and not (state / name).parent.is_symlink() and not (state / name).exists():
                _plant(state / name, plan[name], outside)
        before = _outside_view(outside)
        worker = threading.Thread(target=_use_the_state, args=(ws,), daemon=True)
        worker.start()
        worker.join(15)
        assert not worker.is_alive(), f"hung on {top} / {plan}"
        assert _outside_view(outside) == before, f"{top} / {plan} changed a file outside"
    finally:
        shutil.rmtree(base, ignore_errors=True)
