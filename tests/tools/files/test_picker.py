"""The @ picker narrows from the previous keystroke and still ranks exactly like a full scan."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from nbagent.workspace.picker import Picker

FILES = sorted({"src/app.py", "src/util/io.py", "README.md", "docs/api.md", "tests/test_app.py",
                "src/models/view.py", "lib/vendor/src_map.js", "Src/Upper.PY", "a/b/c/d/e.txt", "apps/x.py"})


def reference(files: list[str], query: str, limit: int) -> list[str]:
    """The documented order, by brute force over every file."""
    q = query.strip().lstrip("@").lower()
    ranked = []
    for path in files:
        low = path.lower()
        tail = (low.count("/"), len(low), path)
        if q in low:
            rank = 0 if low.startswith(q) else 1 if low.rsplit("/", 1)[-1].startswith(q) else 2
            ranked.append(((rank, 0, *tail)))
        else:
            m = re.search("(" + ".*?".join(map(re.escape, q)) + ")", low)
            if m:  # the tightest span starting at the first possible character
                first = re.match("[^" + re.escape(q[0]) + "]*(" + "".join(
                    f"{re.escape(c)}" if n == 0 else f"[^{re.escape(c)}]*{re.escape(c)}" for n, c in enumerate(q))
                    + ")", low)
                ranked.append((3, first.end(1) - first.start(1), *tail))
    return [r[-1] for r in sorted(ranked)[:limit]]


def test_typing_and_backspace_match_a_full_scan():
    picker = Picker(FILES)
    for q in ["s", "sr", "src", "src/", "src/a", "src/", "sr", "s", "", "ap", "app", "t", "tv", "up"]:
        assert picker.pick(q, 5) == reference(FILES, q, 5) if q else picker.pick(q, 5) == sorted(
            FILES, key=lambda p: (p.count("/"), len(p), p))[:5]
    assert picker.pick("src/", 3) == ["src/app.py", "Src/Upper.PY", "src/util/io.py"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="sr/capt.", min_size=1, max_size=6), min_size=1, max_size=8))
def test_any_sequence_of_queries_ranks_like_a_fresh_scan(queries):
    kept = Picker(FILES)
    for q in queries:
        assert kept.pick(q, 4) == Picker(FILES).pick(q, 4) == reference(FILES, q, 4)
