"""Property tests (hypothesis) of the hardened parsers: hostile input gives a clear refusal or a safe value."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from nbagent.errors import ToolError
from nbagent.model.parts import split_content
from nbagent.model.provider_data import merge_delta
from nbagent.render.redaction import public_url
from nbagent.tools.listing import glob_match


@settings(max_examples=300, deadline=None)
@given(pattern=st.text(alphabet="*?[]{},!/ab.\\-", max_size=60), name=st.text(max_size=80))
def test_any_glob_is_matched_at_once_or_refused_clearly(pattern, name):
    try:
        glob_match(pattern, name)
    except ToolError:
        pass  # too many alternatives, too long, or a class RE2 cannot compile: a message, not a crash


@settings(max_examples=300, deadline=None)
@given(user=st.text(min_size=1, alphabet=st.characters(blacklist_characters="@/?#[]", blacklist_categories=("Cs",))),
       secret=st.text(min_size=4, alphabet="abcdefXYZ0123456789"), port=st.integers(1, 65535))
def test_public_url_never_keeps_credentials_or_queries(user, secret, port):
    url = f"https://{user}:{secret}@host.example:{port}/v1?key={secret}#{secret}"
    shown = public_url(url)
    assert secret not in shown.replace("host.example", "")
    assert shown in (f"https://host.example:{port}/v1", "(invalid URL)")


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                                        max_size=4), max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(content=json_values)
def test_any_content_value_splits_into_text_and_reasoning(content):
    text, reasoning = split_content(content)
    assert isinstance(text, str) and isinstance(reasoning, str)


@settings(max_examples=300, deadline=None)
@given(deltas=st.lists(st.dictionaries(st.text(max_size=6), json_values, max_size=4), max_size=6))
def test_any_stream_of_provider_fields_merges_without_error(deltas):
    acc: dict = {}
    for delta in deltas:
        merge_delta(acc, delta)
