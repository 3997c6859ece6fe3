#!/usr/bin/env bash
# Put scripts/jupyter_server_config.py into VENV/etc/jupyter/ (default .venv): Jupyter run as root from
# this environment then needs no --allow-root. A jupyter_server_config.py that is not ours is left alone.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${1:-.venv}"
target="$venv/etc/jupyter/jupyter_server_config.py"
mkdir -p "$venv/etc/jupyter"
if [ -e "$target" ] && ! grep -q "scripts/install_jupyter_config.sh" "$target"; then
  echo "setup: $target exists and is not nbagent's: left as it is (add --allow-root to run Jupyter as root)"
  exit 0
fi
cp "$here/jupyter_server_config.py" "$target"
