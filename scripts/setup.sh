#!/usr/bin/env bash
# Set up everything nbagent needs on a fresh Debian machine (run as root, or with sudo available):
# system packages, a virtual environment in .venv with nbagent (distribution jupyter-nbagent) and its test
# and offline-model extras, and the JupyterLab extension. Safe to run again: it skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi

need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v git >/dev/null 2>&1 || need_apt+=(git)
command -v node >/dev/null 2>&1 || need_apt+=(nodejs npm)
command -v cmake >/dev/null 2>&1 || need_apt+=(cmake)
command -v g++ >/dev/null 2>&1 || need_apt+=(g++)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing system packages: ${need_apt[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
# tests/jupyter/ai' environment: Jupyter AI 3 and its ACP client beside nbagent WITHOUT the [mcp] extra (they
# cannot share .venv: Jupyter AI 3.2 needs mcp<2, nbagent's MCP client mcp>=2; pyproject's jai-test extra).
# Made in the background, beside the main install: its time is the network's (here about 7 minutes from an
# empty pip cache, 1 minute of CPU), so it adds nothing when the llama-cpp build below runs, and little else.
# Made once; the editable nbagent in it follows the checkout. SKIP_JUPYTER_BUILDER: the main install below
# builds the labextension in labextension/; two builds at once in one node_modules break each other (a CI
# run failed so), and Jupyter AI's tests do not load the side panel.
jai_pid=""
if ! .venv-jai/bin/python -c "import jupyter_ai_acp_client, nbagent.acp" >/dev/null 2>&1; then
  echo "setup: creating .venv-jai (Jupyter AI 3 beside nbagent, for tests/jupyter/ai) in the background"
  mkdir -p .cache
  ( $PY -m venv .venv-jai && .venv-jai/bin/python -m pip install -q --upgrade pip \
      && SKIP_JUPYTER_BUILDER=1 .venv-jai/bin/python -m pip install -q -e '.[jai-test]' ) >.cache/setup-jai.log 2>&1 &
  jai_pid=$!
fi
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  $PY -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
# llama-cpp-python builds from source here (about 7 minutes on 2 cores, cached by pip afterwards);
# a portable build, so a wheel cached on one machine runs on another of the same kind.
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}"
# Installed before the distribution was renamed (nbagent -> jupyter-nbagent): remove the old metadata first.
if .venv/bin/python -m pip show -q nbagent >/dev/null 2>&1; then
  .venv/bin/python -m pip uninstall -q -y nbagent
fi
echo "setup: installing jupyter-nbagent (editable) with its test and local extras"
.venv/bin/python -m pip install -q -e '.[test,local]'
# The README's `.venv/bin/jupyter lab ...` as root (containers, CI) needs no --allow-root: this
# environment's Jupyter allows root when root runs it, and nobody else is affected.
bash scripts/install_jupyter_config.sh .venv
# The JupyterHub test's proxy (tests/jupyter/server/hub/): configurable-http-proxy from npm, kept out of the repository.
if [ ! -x .cache/chp/node_modules/.bin/configurable-http-proxy ]; then
  echo "setup: installing configurable-http-proxy (npm) for the JupyterHub test"
  mkdir -p .cache/chp
  npm install --silent --no-audit --no-fund --prefix .cache/chp configurable-http-proxy@5 >/dev/null
fi
if [ -n "$jai_pid" ]; then
  echo "setup: waiting for .venv-jai"
  if ! wait "$jai_pid"; then
    # CI shows only this script's output: the log's end says why.
    grep -v "WARNING: Location" .cache/setup-jai.log | tail -40 >&2
    echo "setup: .venv-jai failed; see .cache/setup-jai.log" >&2
    exit 1
  fi
fi
# rfc3987-syntax comes with jsonschema's [format-nongpl] extra (through jupyter-events) and builds an Earley
# parser of the IRI grammar when it is imported: 1.8 s of CPU in every process that imports nbformat (each
# Jupyter server, pytest worker, nbclient run and eval check), against 0.3 s without it (`time python -c
# "import nbformat"`), several minutes of the test run. Without it jsonschema leaves the "iri" formats
# unchecked, which nothing in these environments uses.
for env in .venv .venv-jai; do
  if [ -x "$env/bin/python" ]; then "$env/bin/python" -m pip uninstall -q -y rfc3987-syntax 2>/dev/null; fi
done
echo "setup: done"
