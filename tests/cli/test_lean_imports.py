"""The CLI, a process of nbagent's own, reads notebooks without jsonschema's IRI format checker, whose
import (rfc3987_syntax building an Earley parser) cost 1.5-5 s of CPU at the first notebook tool; a
kernel keeps it (issue 41). Each case is a fresh interpreter: the real CLI, a real notebook, the real
``openai`` client against the scripted server."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from nbagent.testing import Call, Reply, ScriptedServer

pytestmark = pytest.mark.process

NOTEBOOK = {"cells": [{"cell_type": "code", "id": "a1", "source": "x = 1", "metadata": {}, "outputs": [],
                       "execution_count": None}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
CLI = ("import json, sys\n"
       "from nbagent.cli import main\n"
       "code = main(['run', '-q', 'read it'])\n"
       "print(json.dumps({'code': code, 'nbformat': 'nbformat' in sys.modules,\n"
       "                  'iri': sys.modules.get('rfc3987_syntax', 'absent') is not None}))")


def test_the_cli_reads_a_notebook_without_the_iri_format_checker(tmp_path):
    (tmp_path / "analysis.ipynb").write_text(json.dumps(NOTEBOOK))
    replies = [Reply(tool_calls=[Call("notebook_read", {"path": "analysis.ipynb"})]), Reply(text="read")]
    with ScriptedServer(*replies) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-test", "NBAGENT_MODEL": "scripted-model",
               "NBAGENT_LOCAL": "off", "NBAGENT_MEMORY": "0", "NBAGENT_PERSIST": "0", "NBAGENT_APPROVAL": "auto"}
        done = subprocess.run([sys.executable, "-c", CLI], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=180)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "x = 1" in json.dumps(server.model_requests()[-1].body)  # the tool did read the notebook
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"code": 0, "nbformat": True, "iri": False}


def test_without_it_nbformat_still_validates_and_jsonschema_checks_the_other_formats():
    code = ("import sys\n"
            "from nbagent.workspace.lean_imports import without_iri_format_check\n"
            "without_iri_format_check()\n"
            "import jsonschema, nbformat\n"
            "nbformat.validate(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('x = 1')]))\n"
            "bad = nbformat.v4.new_notebook(); bad['cells'] = [{'cell_type': 'nonsense'}]\n"
            "try:\n    nbformat.validate(bad)\nexcept nbformat.ValidationError:\n    print('invalid refused')\n"
            "checker = jsonschema.FormatChecker()\n"
            "print(sorted(f for f in ('email', 'iri', 'ipv4') if f in checker.checkers))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[:2] == ["invalid refused", "['email', 'ipv4']"]
