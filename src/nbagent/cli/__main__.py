"""``python -m nbagent.cli``: the ``nbagent`` command, as the console script runs it."""

import sys

from .app import main

sys.exit(main())
