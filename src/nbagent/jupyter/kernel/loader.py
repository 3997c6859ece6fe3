"""The one way a line sent into a user's kernel imports nbagent: never from the notebook's folder.

A kernel puts the notebook's folder first on its import path, so ``__import__("nbagent...")`` would run
a cloned repository's own ``nbagent/`` package in the user's kernel (issue 35, finding 2). The line made
here imports with that folder (``""``, ``"."`` and the working directory) taken off the path for the
import only, the way the eval runner's ``python -P`` does, and refuses to use an ``nbagent`` already
loaded from that folder.
"""

from __future__ import annotations

import json

_LOADER = """\
import importlib, os, sys
_cwd = os.path.realpath(os.getcwd())
_loaded = sys.modules.get('nbagent')
_file = os.path.realpath(getattr(_loaded, '__file__', None) or '/') if _loaded is not None else ''
if os.path.dirname(os.path.dirname(_file)) == _cwd:
    raise ImportError('the nbagent loaded in this kernel comes from the notebook folder ' + _file + ': not used')
_saved = sys.path[:]
sys.path[:] = [p for p in _saved if p not in ('', '.') and os.path.realpath(p) != _cwd]
try:
    _module = importlib.import_module(MODULE)
finally:
    sys.path[:] = _saved
_module.CALL
"""


def import_line(module: str, call: str) -> str:
    """One line that imports ``module`` (of nbagent) as above and evaluates ``module.<call>``; ``call``
    is made by nbagent (its data as JSON literals), never by the kernel's user or a model."""
    code = _LOADER.replace("MODULE", json.dumps(module)).replace("CALL", call)
    return f"exec({json.dumps(code)}, {{'__name__': '__nbagent_loader__'}})"
