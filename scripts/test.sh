#!/usr/bin/env bash
# Run every test: pyright over src/, unit, integration (real servers and subprocesses), the llama.cpp
# protocol test, browser tests in headless Chromium, the TypeScript unit tests and the example notebooks (nbval).
# `--fast`: the unit tests only (no process, kernel, server, browser or llama.cpp), in under a minute;
# a test that starts a process anyway fails there and names the marker it lacks (tests/conftest.py).
# Tests without a browser or llama.cpp (and --fast) run on $NBAGENT_TEST_WORKERS pytest-xdist workers (default 2, one a
# core here; 0: in this process), a test file on one worker (its module-scoped server, kernel or cluster is
# started once); the browser and llama.cpp tests run after them, alone: each drives a whole JupyterLab or a
# model server, and side by side they would only wait on each other and on their timeouts.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
WORKERS=${NBAGENT_TEST_WORKERS:-2}
PARALLEL=()
if [ "$WORKERS" != "0" ]; then PARALLEL=(-n "$WORKERS" --dist loadfile); fi
status=0

if [ "${1:-}" = "--fast" ]; then
  shift
  NBAGENT_TEST_FAST=1 exec $PY -m pytest -q -p no:randomly "${PARALLEL[@]}" \
    -m "not (process or kernel or server or browser or llama or integration)" \
    --ignore=tests/browser --ignore=tests/jupyter/server/hub --ignore=tests/install "$@" tests
fi

echo "== pyright (basic) over src/"
.venv/bin/pyright || status=$?

echo "== python tests without a browser or llama.cpp (${WORKERS} workers)"
$PY -m pytest -q -p no:randomly --durations=10 "${PARALLEL[@]}" -m "not (browser or llama)" tests || status=$?

echo "== python tests with llama.cpp or a browser (one at a time)"
$PY -m pytest -q -p no:randomly --durations=10 -m "browser or llama" tests || status=$?

# Jupyter AI 3 cannot be installed beside nbagent's [mcp] extra: its end-to-end test runs in .venv-jai
# (scripts/setup.sh; in .venv it skips itself).
echo "== Jupyter AI persona, end to end (tests/jupyter/ai in .venv-jai)"
if [ -x .venv-jai/bin/python ]; then
  .venv-jai/bin/python -m pytest -q tests/jupyter/ai || status=$?
else
  echo "no .venv-jai: run scripts/setup.sh" >&2
  status=1
fi

if [ -f labextension/package.json ] && [ -d labextension/node_modules ]; then
  echo "== typescript unit tests"
  (cd labextension && npm test --silent) || status=$?
fi

if ls notebooks/*.ipynb >/dev/null 2>&1; then
  echo "== example notebooks (nbval)"
  $PY -m pytest -q --nbval notebooks --nbval-sanitize-with notebooks/sanitize.cfg -p no:cacheprovider \
    || status=$?
fi
exit $status
