# Installed into .venv/etc/jupyter/ by scripts/setup.sh (scripts/install_jupyter_config.sh), so that the
# README's `.venv/bin/jupyter lab notebooks/quickstart.ipynb` works as written for whoever ran the
# set-up. Jupyter refuses to run as root without --allow-root; set-up as root is common (containers, CI),
# so the server of this virtual environment allows root, and only when it is root that runs it: for any
# other user this file changes nothing.
import os

if hasattr(os, "geteuid") and os.geteuid() == 0:
    c.ServerApp.allow_root = True  # type: ignore[name-defined]  # noqa: F821  (c: Jupyter's config object)
