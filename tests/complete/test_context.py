"""An inline completion's context: the kernel's names read from a real InteractiveShell, and the prompt
built around the cursor (earlier cells trimmed, outputs never sent)."""

from __future__ import annotations

import pytest

from nbagent.complete.names import MAX_COLUMNS, kernel_names
from nbagent.complete.prompt import (
    CELL_SEPARATOR,
    EARLIER_CHARS,
    PREFIX_CHARS,
    CompletionRequest,
    chat_messages,
    fim_prompt,
)
from nbagent.complete.wire import FenceFilter


@pytest.fixture
def shell():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    yield shell
    InteractiveShell.clear_instance()


def test_names_hold_dataframe_columns_dtypes_and_imports(shell):
    result = shell.run_cell(
        "import pandas as pd\nimport numpy as np\nfrom math import sqrt as root\n"
        "sales = pd.DataFrame({'region': ['n', 's'], 'revenue_eur': [1.5, 2.0], 'units': [3, 4]})\n"
        "prices = sales['revenue_eur']\nn = 3\ndef helper(x):\n    return x\n")
    assert result.success
    from nbagent.jupyter.kernel.bridge import bridge_from_shell

    names = kernel_names(bridge_from_shell(shell, allow_run=False))
    by_name = {v["name"]: v for v in names["variables"]}
    assert by_name["sales"]["type"] == "pandas.DataFrame"
    assert by_name["sales"]["shape"] == "2x3"
    columns = by_name["sales"]["columns"]
    assert [c[0] for c in columns] == ["region", "revenue_eur", "units"]
    assert columns[1:] == [["revenue_eur", "float64"], ["units", "int64"]]  # strings: "object" or pandas 3's "str"
    assert by_name["prices"]["dtype"] == "float64"
    assert by_name["n"] == {"name": "n", "type": "int"}
    assert "helper" in by_name and "shape" not in by_name["helper"]
    assert "import pandas as pd" in names["imports"]
    assert "import numpy as np" in names["imports"]
    assert "from math import sqrt as root" in names["imports"]
    assert not any(v["name"] in ("In", "Out", "get_ipython", "pd") for v in names["variables"])


def test_names_cap_the_columns_of_a_wide_frame(shell):
    assert shell.run_cell("import pandas as pd\nwide = pd.DataFrame({f'c{i}': [i] for i in range(300)})").success
    from nbagent.jupyter.kernel.bridge import bridge_from_shell

    wide = kernel_names(bridge_from_shell(shell, allow_run=False))["variables"][0]
    assert len(wide["columns"]) == MAX_COLUMNS


def test_the_prompt_puts_the_kernel_header_first_and_keeps_the_nearest_earlier_cells():
    names = {"variables": [{"name": "sales", "type": "pandas.DataFrame", "shape": "2x2",
                            "columns": [["region", "object"], ["revenue_eur", "float64"]]}],
             "imports": ["import pandas as pd"]}
    old = {"cell_type": "code", "source": "x = 1\n" * 900, "outputs": [{"text": "OUTPUT-BULK" * 1000}]}
    near = {"cell_type": "code", "source": "sales = load()", "outputs": [{"text": "OUTPUT-BULK"}]}
    note = {"cell_type": "markdown", "source": "## Revenue by region"}
    request = CompletionRequest(prefix="sales.groupby(", suffix=")\n", path="a.ipynb",
                                cells_before=[old, old, old, near, note],
                                cells_after=[{"cell_type": "code", "source": "plot()"}], names=names)
    prompt = fim_prompt(request)
    assert prompt.header.startswith("# Jupyter notebook a.ipynb")
    assert "# Imported in the kernel: import pandas as pd" in prompt.header
    assert "sales: pandas.DataFrame (2x2), columns 'region' object, 'revenue_eur' float64" in prompt.header
    assert prompt.prefix.endswith(f"sales = load(){CELL_SEPARATOR}# ## Revenue by region{CELL_SEPARATOR}sales.groupby(")
    assert len(prompt.prefix) <= EARLIER_CHARS + PREFIX_CHARS + 2 * len(CELL_SEPARATOR)
    assert "OUTPUT-BULK" not in prompt.header + prompt.prefix + prompt.suffix
    assert prompt.suffix == f")\n{CELL_SEPARATOR}plot()"
    chat = chat_messages(prompt)
    assert chat[0]["role"] == "system" and "<CURSOR>" in chat[0]["content"]
    assert "sales.groupby(<CURSOR>)" in chat[1]["content"] and "revenue_eur" in chat[1]["content"]


def test_a_long_cell_keeps_the_text_nearest_the_cursor():
    prompt = fim_prompt(CompletionRequest(prefix="a" * 10_000 + "END", suffix="START" + "b" * 10_000))
    assert prompt.prefix.endswith("END") and len(prompt.prefix) == PREFIX_CHARS
    assert prompt.suffix.startswith("START") and len(prompt.suffix) == 1_000
    assert prompt.header == ""


def test_the_cache_key_changes_with_any_part_of_the_prompt():
    base = CompletionRequest(prefix="df.", suffix="", names={"variables": [{"name": "df", "type": "int"}]})
    other = CompletionRequest(prefix="df.", suffix="", names={"variables": [{"name": "df", "type": "str"}]})
    key = fim_prompt(base).key("m", "chat")
    assert key == fim_prompt(CompletionRequest(prefix="df.", suffix="", names=base.names)).key("m", "chat")
    assert key != fim_prompt(other).key("m", "chat")
    assert key != fim_prompt(base).key("m", "infill")
    assert key != fim_prompt(base).key("other", "chat")


@pytest.mark.parametrize("chunks, text", [
    (["```py", "thon\nsales", "['revenue_eur']\n``", "`\nmore"], "sales['revenue_eur']"),
    (["sales", "['x']"], "sales['x']"),
    (["`", "x`"], "`x`"),
    (["``"], ""),
])
def test_a_code_fence_around_a_chat_answer_is_dropped_as_it_streams(chunks, text):
    fence = FenceFilter()
    out = "".join(fence.feed(c) for c in chunks) + fence.flush()
    assert out == text
