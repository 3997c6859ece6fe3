"""The DataFrame API and `nbagent sessions ...` on a real store."""

from __future__ import annotations

import json

import pandas as pd

from nbagent.store import views as api
from nbagent.cli.app import main as cli_main
from nbagent.store.sessions import SessionStore


def _session(store: SessionStore, title: str = "look at the data"):
    session = store.create(origin="nb.ipynb", provider="openai", model="gpt-4o")
    session.begin_turn(title)
    session.append([{"role": "user", "content": title}])
    session.append([
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "read_file",
                                                              "arguments": '{"path": "a.csv"}'}]},
        {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "x,y", "is_error": False},
    ])
    session.add_tool_call({"call_id": "c1", "name": "read_file", "arguments": '{"path": "a.csv"}',
                           "status": "done", "duration_ms": 250.0})
    session.add_usage(100, 10, 0.001)
    session.add_usage(200, 20, 0.002)
    session.begin_turn("next")
    session.add_usage(50, 5, None)
    return session


def test_dataframes_of_sessions_messages_tool_calls_and_usage(store, workspace):
    session = _session(store)
    df = api.sessions(workspace)
    assert {"id", "title", "model", "updated", "turns", "input_tokens", "output_tokens", "cost"} <= set(df.columns)
    row = df.iloc[0]
    assert (row["id"], row["turns"], row["input_tokens"], row["cost"]) == (session.id, 2, 350, 0.003)
    assert isinstance(row["updated"], pd.Timestamp) and df.attrs["problems"] == []

    msgs = api.messages(workspace, session.id[:16])
    assert list(msgs["role"]) == ["user", "assistant", "tool"]
    assert msgs.iloc[1]["tool_calls"][0]["id"] == "c1" and msgs.iloc[2]["tool_call_id"] == "c1"

    calls = api.tool_calls(workspace, session.id)
    assert calls.iloc[0][["name", "status", "duration"]].tolist() == ["read_file", "done", 0.25]
    assert calls.iloc[0]["arguments"] == {"path": "a.csv"}

    usage = api.usage(workspace, session.id)
    assert usage[["turn", "calls", "input_tokens", "output_tokens"]].values.tolist() == [[1, 2, 300, 30],
                                                                                        [2, 1, 50, 5]]
    assert usage.iloc[0]["cost"] == 0.003 and pd.isna(usage.iloc[1]["cost"])


def _cli(workspace, *argv):
    return cli_main(["sessions", "--workspace", str(workspace), *argv])


def test_cli_list_show_export_import_delete_purge(store, workspace, tmp_path, capsys):
    session = _session(store, "why is the plot empty?")
    assert _cli(workspace, "list") == 0
    out = capsys.readouterr().out
    assert session.id[:12] in out and "why is the plot empty?" in out and "gpt-4o" in out

    assert _cli(workspace, "show", session.id[:10]) == 0
    out = capsys.readouterr().out
    assert "read_file" in out and "x,y" in out

    target = tmp_path / "s.json"
    assert _cli(workspace, "export", session.id, "-o", str(target)) == 0
    assert json.loads(target.read_text())["session"]["id"] == session.id
    assert _cli(workspace, "delete", session.id) == 0
    assert _cli(workspace, "import", str(target)) == 0
    assert f"imported as {session.id}" in capsys.readouterr().out
    assert _cli(workspace, "purge", "--days", "0") == 0
    assert "keeps everything" in capsys.readouterr().out

    assert _cli(workspace, "show", "zzzz") == 1
    assert "no session matches" in capsys.readouterr().err
    assert _cli(workspace, "import", str(tmp_path / "missing.json")) == 1


def test_the_nbagent_console_script_has_the_sessions_command(store, workspace, capsys):
    from nbagent.cli.app import main

    session = _session(store, "through main")
    assert main(["sessions", "-w", str(workspace), "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[0])["id"] == session.id


def test_cli_list_reports_a_corrupt_database(workspace, capsys):
    (workspace / ".nbagent").mkdir()
    (workspace / ".nbagent" / "nbagent.db").write_bytes(b"junk" * 1000)
    assert _cli(workspace, "list") == 0
    captured = capsys.readouterr()
    assert "no readable sessions" in captured.out and "cannot be read as a database" in captured.err
