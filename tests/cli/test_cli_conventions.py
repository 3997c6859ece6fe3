"""The CLI behaves like the tools people already use: --version, a sub-command's own usage, quiet on a
closed pipe, one message per mistake, one spelling per meaning, exit code 2 for usage and 1 for failures.
Each runs the real console script in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import nbagent
from nbagent.store.sessions import SessionStore
from nbagent.testing.replies import Call, Reply
from nbagent.testing.server import ScriptedServer

pytestmark = pytest.mark.integration


def cli(*args: str, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "NBAGENT_LOCAL": "off", **env}
    return subprocess.run([sys.executable, "-m", "nbagent.cli", *args], capture_output=True, text=True,
                          env=environment, timeout=60, stdin=subprocess.DEVNULL)


@pytest.mark.process
def test_version_comes_from_the_distribution():
    out = cli("--version")
    assert out.returncode == 0, out.stderr
    first, sandbox = out.stdout.strip().splitlines()
    assert first == f"nbagent {nbagent.__version__} (jupyter-nbagent)"
    assert sandbox.startswith(("sandbox: bubblewrap", "sandbox: landlock", "sandbox: none: commands nbagent starts "
                                                                          "are NOT confined"))
    assert nbagent.__version__ and nbagent.__version__ != "0+unknown"


@pytest.mark.process
def test_an_unknown_option_prints_the_usage_of_its_sub_command():
    out = cli("run", "--bogus", "hi")
    assert out.returncode == 2
    assert out.stderr.startswith("usage: nbagent run "), out.stderr
    assert "unrecognized arguments: --bogus" in out.stderr
    nested = cli("sessions", "list", "--bogus")
    assert nested.returncode == 2 and nested.stderr.startswith("usage: nbagent sessions list "), nested.stderr


@pytest.mark.process
def test_help_says_what_offline_mode_is():
    for args in (["--help"], ["run", "--help"]):
        out = cli(*args)
        assert out.returncode == 0
        text = " ".join(out.stdout.split())
        assert "offline model" in text and "not for real work" in text and "docs/offline.md" in text


@pytest.mark.process
def test_a_missing_workspace_is_one_message_for_every_command(tmp_path):
    missing = str(tmp_path / "nonexistent")
    messages = set()
    for args in (["run", "hi"], ["sessions", "list"], ["context", "list"], ["memory", "list"], ["undo"]):
        out = cli(*args, "-w", missing)
        assert out.returncode == 2, (args, out.stderr)
        messages.add(out.stderr.strip().splitlines()[-1].split(": error: ", 1)[1])
        assert not (tmp_path / "nonexistent").exists()
    assert messages == {f"argument --workspace/-w: workspace {missing} is not a directory"}


@pytest.mark.process
def test_a_listing_cut_short_by_its_reader_exits_quietly(tmp_path):
    """``nbagent sessions list | head -1`` with more sessions than a pipe holds."""
    with SessionStore(tmp_path) as store:  # rows of ~600 characters: far more than the pipe's 64 KiB
        for i in range(400):
            store.create(origin="cli", provider="openai", model=f"model-{i}-" + "x" * 500).begin_turn(f"prompt {i}")
    child = subprocess.Popen([sys.executable, "-m", "nbagent.cli", "sessions", "list", "-w", str(tmp_path)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "NBAGENT_LOCAL": "off"})
    assert child.stdout is not None and child.stderr is not None
    assert child.stdout.readline().startswith(b"ID ")
    child.stdout.close()  # what head does after its first line
    error = child.stderr.read().decode()
    assert child.wait(60) == 141
    assert error == ""


@pytest.mark.process
def test_sessions_list_shows_whole_model_names_and_one_word_for_an_unknown_cost(tmp_path):
    long_name = "accounts/fireworks/models/qwen3-coder-480b-a35b-instruct"
    with SessionStore(tmp_path) as store:
        store.create(origin="cli", provider="http://x", model=long_name).begin_turn("unpriced")
    out = cli("sessions", "list", "-w", str(tmp_path))
    assert out.returncode == 0, out.stderr
    row = out.stdout.splitlines()[1]
    assert long_name in row and " unknown " in row and "?" not in row
    shown = cli("sessions", "show", row.split()[0], "-w", str(tmp_path))
    assert "cost unknown" in shown.stdout


def listed(help_text: str) -> set[str]:
    """The sub-command names a --help lists (the lines indented under COMMAND)."""
    return {line.split()[0] for line in help_text.splitlines() if line.startswith("    ") and not line.startswith("     ")}


@pytest.mark.process
def test_one_removal_verb_with_the_old_names_kept_unlisted(tmp_path):
    with SessionStore(tmp_path) as store:
        first = store.create(origin="cli", provider="openai", model="gpt-4o")
        second = store.create(origin="cli", provider="openai", model="gpt-4o")
    assert "remove" in listed(cli("sessions", "--help").stdout) and "delete" not in listed(cli("sessions", "--help").stdout)
    assert "remove" in listed(cli("memory", "--help").stdout) and "forget" not in listed(cli("memory", "--help").stdout)
    removed = cli("sessions", "remove", first.id, "-w", str(tmp_path))
    assert removed.returncode == 0 and removed.stdout.strip() == f"removed {first.id}"
    assert cli("sessions", "delete", second.id, "-w", str(tmp_path)).returncode == 0  # the old spelling
    assert "no sessions yet" in cli("sessions", "list", "-w", str(tmp_path)).stdout


@pytest.mark.process
def test_short_flags_mean_one_thing_and_old_spellings_still_work(tmp_path):
    attach_help = cli("context", "attach", "--help").stdout
    assert "--command COMMAND" in attach_help and "-c" not in attach_help.replace("--", "")
    out = cli("context", "attach", "greeting", "-c", "echo hello", "-w", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "hello" in cli("context", "list", "-w", str(tmp_path)).stdout


@pytest.mark.process
def test_a_base_url_without_a_model_names_the_cli_option(tmp_path):
    out = cli("run", "hi", "-w", str(tmp_path), "--base-url", "http://127.0.0.1:9/v1")
    assert out.returncode == 2
    assert out.stderr.strip() == ("nbagent: no model name for http://127.0.0.1:9/v1: set NBAGENT_MODEL or pass "
                                  "--model NAME")


@pytest.mark.process
def test_a_named_model_with_no_endpoint_is_an_error_not_the_offline_model(tmp_path):
    out = cli("run", "hi", "-w", str(tmp_path), NBAGENT_MODEL="gpt-4.1-mini", NBAGENT_LOCAL="auto")
    assert out.returncode == 2
    assert "'gpt-4.1-mini' needs an endpoint" in out.stderr and "OPENAI_API_KEY" in out.stderr
    assert "OPENAI_BASE_URL" in out.stderr
    assert not (tmp_path / ".nbagent" / "nbagent.db").exists() or "gpt-4.1-mini" not in cli(
        "sessions", "list", "-w", str(tmp_path)).stdout


@pytest.mark.process
def test_a_change_nobody_could_approve_says_so_and_how_to_allow_it(tmp_path):
    with ScriptedServer() as server:
        server.enqueue(Reply(tool_calls=[Call("write_file", {"path": "x.txt", "content": "x"})]), "Denied, fine.")
        out = cli("run", "write", "-w", str(tmp_path), OPENAI_BASE_URL=server.url, OPENAI_API_KEY="sk-test",
                  NBAGENT_MODEL="scripted-model", NBAGENT_MAX_RETRIES="0")
        result = server.model_requests()[-1].body["messages"][-1]["content"]
    assert out.returncode == 0, out.stderr
    assert not (tmp_path / "x.txt").exists()
    assert "by the user" not in out.stderr and "by the user" not in result
    assert "no one could be asked" in out.stderr and "--yes" in out.stderr
    assert "no one could be asked" in result and "--yes" in result


def test_every_short_flag_means_one_long_option_in_every_command():
    import argparse

    from nbagent.cli.app import _parser

    meanings: dict[str, set[str]] = {}

    def walk(parser: argparse.ArgumentParser) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    walk(sub)
                continue
            shorts = [o for o in action.option_strings if len(o) == 2 and action.help != argparse.SUPPRESS]
            longs = [o for o in action.option_strings if o.startswith("--")]
            for short in shorts:
                meanings.setdefault(short, set()).update(longs or [action.dest])

    walk(_parser())
    assert {s: m for s, m in meanings.items() if len(m) > 1} == {}
