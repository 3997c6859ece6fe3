"""What a process of nbagent's own leaves out of its imports: jsonschema's IRI format checker.

nbformat imports jsonschema, and jsonschema loads its optional IRI format checker (rfc3987_syntax)
whenever that is installed (Jupyter's event library asks for it); that module builds an Earley
parser for RFC 3987 at import: 1.5-5 s of CPU at the first notebook a process reads, for a format
no notebook schema uses. Marked as not installed, it is left out exactly as jsonschema leaves it
out when it is absent (it suppresses that ImportError), and every other format is still checked.
Only for processes nbagent owns (the CLI, an eval's checks): never in a kernel or a Jupyter server,
where the user's code and Jupyter's event schemas may want that format.
"""

from __future__ import annotations

import sys


def without_iri_format_check() -> None:
    """Call before anything imports jsonschema (after, it changes nothing)."""
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
