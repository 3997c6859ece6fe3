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
echo "setup: done"
