"""``python -m nbagent.cli``: the ``nbagent`` command, as the console script runs it."""

import sys

from . import main

sys.exit(main())
