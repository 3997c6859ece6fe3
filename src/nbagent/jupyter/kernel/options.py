"""Splitting ``%agent`` input into options and the prompt.

Only the leading options are parsed; the rest of the line is the prompt exactly as typed, so
apostrophes, quotes and "--" inside a prompt ("what's wrong with --foo?") need no escaping.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"""\s*("[^"]*"|'[^']*'|\S+)""")


def split_options(line: str, parser) -> tuple[str, str]:
    """(the option part, the prompt). Options end at the first word that is not one, or at "--"."""
    actions = parser._option_string_actions
    pos = 0
    while True:
        match = _TOKEN.match(line, pos)
        if match is None:
            return line[:pos], ""
        word = match.group(1)
        if word == "--":
            return line[:match.start(1)], line[match.end():].strip()
        if not word.startswith("-") or word == "-":
            return line[:pos], line[match.start(1):].strip()
        pos = match.end()
        action = actions.get(word.split("=", 1)[0])
        if action is not None and action.nargs != 0 and "=" not in word:
            value = _TOKEN.match(line, pos)  # the option's value
            if value is not None:
                pos = value.end()
