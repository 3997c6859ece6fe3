"""Finding 13 of "Trust", the redaction half: one redaction (nbagent.render.redaction) for transcripts,
traces and logs, with the secret patterns of a maintained library, and the server's own secret in it."""

from __future__ import annotations

import json
import logging

import pytest

from nbagent import Agent
from nbagent.render.redaction import PLACEHOLDER, logger, redact, scrub
from nbagent.testing.replies import text
from nbagent.testing.scripted import ScriptedModel
from nbagent.tools.limits import limit_output

# Made-up tokens in each provider's published format.
TOKENS = {
    "google": "AIzaSyD4-x7Qv1Wm0pLk2Jr9Tb8Nc3Hs5Ye6Uf7",
    "hugging face": "hf_QmVx7pLk2Jr9Tb8Nc3Hs5Ye6Uf7Wd1Za4Xo",
    "gitlab": "glpat-x7Qv1Wm0pLk2Jr9Tb8Nc",
    "npm": "npm_Qv1Wm0pLk2Jr9Tb8Nc3Hs5Ye6Uf7Wd1Za4Xo",
    "slack": "xoxb-2345678901-abcdefghijkl",
    "stripe": "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
}


@pytest.mark.parametrize("kind", sorted(TOKENS))
def test_scrub_replaces_each_provider_token(kind):
    out = scrub(f"export TOKEN_OF_{kind.upper().replace(' ', '_')}={TOKENS[kind]} # and more")
    assert TOKENS[kind] not in out and "# and more" in out


def test_a_turn_trace_keeps_no_google_hugging_face_gitlab_or_npm_token(tmp_path, monkeypatch):
    monkeypatch.delenv("NBAGENT_TELEMETRY", raising=False)
    monkeypatch.setenv("NBAGENT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("NBAGENT_DATA_DIR", str(tmp_path / "data"))
    tmp_path = tmp_path / "ws"
    tmp_path.mkdir()
    prompt = "deploy with " + " and ".join(TOKENS[k] for k in ("google", "hugging face", "gitlab", "npm"))
    with Agent(workspace=tmp_path, model=ScriptedModel([text("ok")]), approval="read-only", repo_map=False,
               memory_embeddings="off") as agent:
        agent.run(prompt)
    trace = (tmp_path / ".nbagent" / "traces.jsonl").read_text()
    (record,) = [json.loads(line) for line in trace.splitlines()]
    assert record["prompt"].startswith("deploy with ")
    for token in TOKENS.values():
        assert token not in trace


def test_the_server_registers_the_kernel_secret_it_makes(tmp_path, monkeypatch):
    """The server's own agents (the panel's) run tools in the server process: the secret it hands
    its kernels must not come back in one of their results."""
    from nbagent.jupyter.server.kernel_secret import KernelLink

    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    link = KernelLink("http://127.0.0.1:1/", tmp_path)
    try:
        shown = limit_output(f"cat runtime file: {{\"secret\": \"{link.secret}\"}}", 10_000)
        assert link.secret not in shown and PLACEHOLDER in shown
        assert link.secret not in scrub(link.secret)
    finally:
        link.close()
    assert redact(link.secret) == link.secret  # forgotten once the server's link is closed


def test_log_records_of_nbagent_are_scrubbed(caplog):
    log = logger("nbagent.test_redaction")
    with caplog.at_level(logging.WARNING, logger="nbagent.test_redaction"):
        log.warning("could not reach %s with %s", "https://bob:hunter2@example.com/x", TOKENS["gitlab"])
        try:
            raise RuntimeError(f"bad key {TOKENS['google']}")
        except RuntimeError:
            log.exception("failed")
    assert "hunter2" not in caplog.text and TOKENS["gitlab"] not in caplog.text
    assert "bob:[password]@" in caplog.text
    record = caplog.records[-1]
    assert record.exc_text and TOKENS["google"] not in record.exc_text and "RuntimeError" in record.exc_text


def test_tool_results_lose_only_registered_secrets_not_lookalikes():
    """A transcript keeps a token-shaped string the user's files hold (the next edit would write the
    marker back over it); only the secrets this process holds are cut from tool results."""
    assert limit_output(f"API_KEY={TOKENS['google']}", 10_000) == f"API_KEY={TOKENS['google']}"


def test_scrubbing_hostile_text_takes_linear_time():
    """A log line or a prompt can hold anything: the patterns run on RE2, so none of these long runs
    (each took from 10 s to minutes with the patterns on Python's re) holds a trace or a log up."""
    import time

    runs = ["/" * 200_000, "password" + " " * 200_000, "a://" * 50_000, "a" * 200_000, "eyJ" + "a" * 200_000 + "."]
    started = time.monotonic()
    for run in runs:
        scrub(run)
    assert time.monotonic() - started < 5.0


LOOKALIKES = [
    "hi", "please look at data.csv and plot the sales per month", "the password is in the vault",
    "Authorization: Bearer", "https://host/v1?x=1", "key = ", "-----BEGIN PUBLIC KEY-----", "x" * 5_000,
    "sk-short", "AKIA is a prefix", "eyJhbGciOi", "a://b@c", "GITHUB_TOKEN is unset",
]


@pytest.mark.parametrize("text", [*LOOKALIKES, *(f"TOKEN={t} and {t}" for t in TOKENS.values()),
                                  "password = hunter22", "https://me:pw@host/x", "Authorization: Bearer abcdefghijkl1234",
                                  "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----"])
def test_the_one_pass_check_first_changes_nothing_scrub_finds(text):
    """scrub first asks all the patterns at once whether any matches; the answer it gives is always the one
    running each pattern in turn gives (issue 41: a two-word prompt cost a third of a millisecond)."""
    from nbagent.render import redaction

    assert redaction._load_patterns().any is not None, "RE2 holds the patterns as one alternation"
    assert scrub(text) == redaction._each_pattern(redact(text))
    if text in LOOKALIKES:
        assert redaction._load_patterns().any.search(text) is None and scrub(text) == text
