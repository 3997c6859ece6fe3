"""nbagent.model.wire_prefix: the wire form of a request is the last one's plus its new messages' only
when it extends the last request; any other history gets its own form (issue 41)."""

from __future__ import annotations

from nbagent.model.wire_prefix import WirePrefix


def convert(m):
    convert.calls += 1
    return [{"wire": m["content"]}] * m.get("items", 1)


def test_an_extension_converts_only_the_new_messages_and_any_other_history_is_converted_anew():
    prefix, convert.calls = WirePrefix(), 0
    a, b, c = {"content": "a"}, {"content": "b", "items": 2}, {"content": "c", "items": 0}
    assert prefix.convert([a, b], convert) == [{"wire": "a"}, {"wire": "b"}, {"wire": "b"}]
    first = prefix.convert([a, b, c], convert)
    assert first == [{"wire": "a"}, {"wire": "b"}, {"wire": "b"}] and convert.calls == 3
    d = {"content": "d"}
    assert prefix.convert([a, b, c, d], convert)[-1] == {"wire": "d"} and convert.calls == 4
    assert first == [{"wire": "a"}, {"wire": "b"}, {"wire": "b"}], "a form handed out is never changed"
    cut = {"content": "b, cut"}  # a pruning cut: another object in b's place; a and d are kept as they were
    assert prefix.convert([a, cut, d], convert) == [{"wire": "a"}, {"wire": "b, cut"}, {"wire": "d"}]
    assert convert.calls == 5
    assert prefix.convert([a, cut, d], convert, key="other model") == [{"wire": "a"}, {"wire": "b, cut"}, {"wire": "d"}]
    assert convert.calls == 8, "another origin converts every message again"


def test_marked_says_whether_any_message_of_the_request_was_marked():
    prefix = WirePrefix()
    plain, shown = {"content": "x"}, {"content": "y", "images": [1]}
    prefix.convert([plain], convert, mark=lambda m: m.get("images"))
    assert not prefix.marked
    prefix.convert([plain, shown], convert, mark=lambda m: m.get("images"))
    assert prefix.marked
    prefix.convert([plain], convert, mark=lambda m: m.get("images"))
    assert not prefix.marked
