"""Finding the notebook and the workspace; splitting options from the prompt; the text view."""

from __future__ import annotations

import pytest
import shlex
import subprocess

from nbagent.jupyter.kernel.magics import AgentMagics
from nbagent.jupyter.kernel.notebook_path import Place, find_place, find_workspace
from nbagent.jupyter.kernel.options import split_options

PARSER = AgentMagics.agent.parser


def test_notebook_from_jpy_session_name(tmp_path):
    nb = tmp_path / "sub" / "analysis.ipynb"
    nb.parent.mkdir()
    nb.write_text("{}")
    place = find_place(env={"JPY_SESSION_NAME": str(nb)}, cwd=tmp_path)
    assert place.notebook == nb and place.directory == nb.parent and place.origin == str(nb)
    relative = find_place(env={"JPY_SESSION_NAME": "sub/analysis.ipynb"}, cwd=nb.parent)
    assert relative.notebook == nb


def test_outside_a_notebook_the_place_is_the_directory(tmp_path):
    place = find_place(env={}, cwd=tmp_path)
    assert place.notebook is None and place.origin == str(tmp_path.resolve())
    assert find_place(env={"JPY_SESSION_NAME": "not-a-notebook"}, cwd=tmp_path).notebook is None


@pytest.mark.process
def test_workspace_is_the_git_repo_then_the_server_root_then_the_folder(tmp_path):
    repo, loose = tmp_path / "repo", tmp_path / "root" / "loose"
    (repo / "nbs").mkdir(parents=True)
    loose.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert find_workspace(Place(repo / "nbs" / "a.ipynb", repo / "nbs")) == repo
    assert find_workspace(Place(loose / "b.ipynb", loose, server_root=tmp_path / "root")) == tmp_path / "root"
    assert find_workspace(Place(loose / "b.ipynb", loose)) == loose
    assert find_workspace(Place(None, loose), "..") == tmp_path / "root"
    assert find_workspace(Place(None, loose), str(repo)) == repo


def test_options_end_at_the_first_word_of_the_prompt():
    assert split_options("--wait -r 01abc fix it -n now", PARSER) == ("--wait -r 01abc", "fix it -n now")
    assert split_options("--model=gpt-x what's up?", PARSER) == ("--model=gpt-x", "what's up?")
    assert split_options("--approval auto -- --strange prompt", PARSER) == ("--approval auto ", "--strange prompt")
    assert split_options("/todos", PARSER) == ("", "/todos")
    assert split_options("--wait", PARSER) == ("--wait", "")
    options, _ = split_options('--workspace "/a b" go', PARSER)
    assert PARSER.parse_args(shlex.split(options)).workspace == "/a b"


def test_widgets_only_where_a_notebook_frontend_started_the_kernel():
    from nbagent.jupyter.kernel.frontend import use_widgets

    class Kernelled:
        kernel = object()
        user_ns: dict = {}

    assert not use_widgets(None, None, env={})  # a script
    assert not use_widgets(None, type("Terminal", (), {"kernel": None})(), env={})  # terminal IPython
    assert not use_widgets(None, Kernelled(), env={})  # nbconvert, nbval
    assert use_widgets(None, Kernelled(), env={"JPY_SESSION_NAME": "/x/a.ipynb"})  # JupyterLab
    vscode = Kernelled()
    vscode.user_ns = {"__vsc_ipynb_file__": "/x/a.ipynb"}
    assert use_widgets(None, vscode, env={})
    assert use_widgets("widgets", None, env={}) and not use_widgets(None, Kernelled(), env={"NBAGENT_VIEW": "text"})
