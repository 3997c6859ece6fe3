"""The exported tool objects: contract names and arguments, read-only flags, previews, schemas."""

from __future__ import annotations

from nbagent.tools.files import CORE_FILE_TOOLS, EDIT_PLUS
from nbagent.tools.search import GREP_TOOL

CONTRACT = {
    "read_file": ({"path"}, {"offset", "limit"}),
    "write_file": ({"path", "content"}, set()),
    "edit_file": ({"path", "old_string", "new_string"}, {"replace_all"}),
    "glob": ({"pattern"}, {"path"}),
    "grep": ({"pattern"}, {"path", "glob", "ignore_case", "context", "max_results"}),
    "read_many_files": ({"paths"}, {"offset", "limit"}),
    "multi_edit": ({"path", "edits"}, set()),
    "list_dir": (set(), {"path", "depth"}),
}
WRITERS = {"write_file", "edit_file", "multi_edit"}


def all_tools():
    return [*CORE_FILE_TOOLS, GREP_TOOL, *EDIT_PLUS.tools]


def test_names_and_arguments_match_the_contract():
    assert [t.name for t in CORE_FILE_TOOLS] == ["read_file", "write_file", "edit_file", "glob"]
    assert EDIT_PLUS.name == "edit-plus"
    assert [t.name for t in EDIT_PLUS.tools] == ["read_many_files", "multi_edit", "list_dir"]
    for t in all_tools():
        required, optional = CONTRACT[t.name]
        props = set(t.parameters["properties"])
        assert set(t.parameters.get("required", [])) == required, t.name
        assert props == required | optional, t.name
        assert t.takes_context and t.description and t.prompt_hint


def test_writers_ask_and_have_previews_readers_do_not():
    for t in all_tools():
        assert t.approval == ("ask" if t.name in WRITERS else "never"), t.name
        assert t.read_only == (t.name not in WRITERS), t.name
        assert (t.preview is not None) == (t.name in WRITERS), t.name


def test_multi_edit_schema_describes_each_edit():
    schema = next(t for t in EDIT_PLUS.tools if t.name == "multi_edit").parameters
    assert "$defs" not in str(schema) and "$ref" not in str(schema)  # inlined for small models
    item = schema["properties"]["edits"]["items"]
    assert set(item["properties"]) == {"old_string", "new_string", "replace_all"}
    assert set(item["required"]) == {"old_string", "new_string"}
