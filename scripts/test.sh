#!/usr/bin/env bash
# Run every test: pyright over src/, unit, integration (real servers and subprocesses), the llama.cpp
# protocol test, browser tests in headless Chromium, the TypeScript unit tests and the example notebooks (nbval).
# `--fast`: the unit tests only (no process, kernel, server, browser or llama.cpp), in under a minute;
# a test that starts a process anyway fails there and names the marker it lacks (tests/conftest.py).
# Tests without a browser or llama.cpp (and --fast) run on $NBAGENT_TEST_WORKERS pytest-xdist workers (0: in this
# process), a test file on one worker (its module-scoped server, kernel or cluster is started once), the
# longest files first (tests/conftest.py, LONGEST_FIRST). By default 3 workers on these 2 cores (with 2, the
# tier waited on kernels, servers and subprocesses a quarter of the cores' time: /proc/stat's idle), and 2
# for --fast, which waits on nothing (a third worker only collected every test module once more). The browser and llama.cpp tests
# run after them, one at a time: each drives a whole JupyterLab or a model server, and side by side they would
# only wait on each other and on their timeouts. They leave about a third of the two cores idle (waiting on
# Chromium and the lab), so the light tiers (pyright, Jupyter AI, TypeScript, nbval) run beside them, their
# output printed afterwards under their headings.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
# Python may cache bytecode here (.gitignore'd __pycache__/): with PYTHONDONTWRITEBYTECODE=1, as set on these
# machines, every pytest worker and every process a test starts (kernels, servers, CLI runs, eval checks)
# compiled nbagent and the test modules again: 0.2 s of CPU a process that imports nbagent, 3-4 s a worker.
unset PYTHONDONTWRITEBYTECODE
CLEANUP=()
cleanup() { for path in "${CLEANUP[@]}"; do rm -rf "$path"; done; }
trap cleanup EXIT
# The tests' temporary folders (pytest's tmp_path; the servers', kernels' and clones' own) are in RAM when
# /dev/shm is a tmpfs with room: on disk, waiting on writes and fsyncs took 75 s of the cores' time in the
# tier without a browser. They are removed at the end; a TMPDIR you set is used as it is, and kept.
if [ -z "${TMPDIR:-}" ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] \
   && [ "$(df --output=avail -k /dev/shm | tail -1)" -gt 4000000 ]; then
  TMPDIR=$(mktemp -d /dev/shm/nbagent-tests.XXXXXX)
  export TMPDIR
  CLEANUP+=("$TMPDIR")
fi
FAST=0
if [ "${1:-}" = "--fast" ]; then FAST=1; shift; fi
WORKERS=${NBAGENT_TEST_WORKERS:-$((FAST ? 2 : 3))}
PARALLEL=()
if [ "$WORKERS" != "0" ]; then PARALLEL=(-n "$WORKERS" --dist loadfile --no-loadscope-reorder); fi
status=0

if [ "$FAST" = 1 ]; then
  NBAGENT_TEST_FAST=1 $PY -m pytest -q -p no:randomly "${PARALLEL[@]}" \
    -m "not (process or kernel or server or browser or llama or integration)" \
    --ignore=tests/browser --ignore=tests/jupyter/server/hub --ignore=tests/install "$@" tests || status=$?
  exit $status
fi

echo "== python tests without a browser or llama.cpp (${WORKERS} workers)"
$PY -m pytest -q -p no:randomly --durations=10 "${PARALLEL[@]}" -m "not (browser or llama)" tests || status=$?

LIGHT=$(mktemp -d)
CLEANUP+=("$LIGHT")
LIGHT_TIERS=()
# `light NAME HEADING COMMAND...`: run COMMAND in the background, its output and exit status kept in $LIGHT.
light() {
  local name=$1 heading=$2
  shift 2
  LIGHT_TIERS+=("$name")
  echo "$heading" > "$LIGHT/$name.heading"
  ( set +e; "$@" > "$LIGHT/$name.log" 2>&1; echo $? > "$LIGHT/$name.rc" ) &
}

light pyright "== pyright (basic) over src/" .venv/bin/pyright
# Jupyter AI 3 cannot be installed beside nbagent's [mcp] extra: its end-to-end test runs in .venv-jai
# (scripts/setup.sh; in .venv it skips itself).
if [ -x .venv-jai/bin/python ]; then
  light jai "== Jupyter AI persona, end to end (tests/jupyter/ai in .venv-jai)" \
    .venv-jai/bin/python -m pytest -q tests/jupyter/ai
else
  echo "no .venv-jai: run scripts/setup.sh" >&2
  status=1
fi
if [ -f labextension/package.json ] && [ -d labextension/node_modules ]; then
  light typescript "== typescript unit tests" bash -c "cd labextension && npm test --silent"
fi
if ls notebooks/*.ipynb >/dev/null 2>&1; then
  light nbval "== example notebooks (nbval)" $PY -m pytest -q --nbval notebooks \
    --nbval-sanitize-with notebooks/sanitize.cfg -p no:cacheprovider
fi

echo "== python tests with llama.cpp or a browser (one at a time; ${LIGHT_TIERS[*]} beside them)"
$PY -m pytest -q -p no:randomly --durations=10 -m "browser or llama" tests || status=$?
wait

for name in "${LIGHT_TIERS[@]}"; do
  cat "$LIGHT/$name.heading" "$LIGHT/$name.log"
  rc=$(cat "$LIGHT/$name.rc" 2>/dev/null || echo 1)
  if [ "$rc" != "0" ]; then
    echo "($name exited with $rc)"
    status=$rc
  fi
done
exit $status
