"""One redaction for what nbagent keeps or shows: transcripts, traces and logs.

Two rules, one module:

- ``redact``: the secrets this process holds (the kernel-to-server secret, registered by the kernel's
  client and by the server that made it) are replaced wherever they appear. Every tool result passes
  through it in ``limit_output`` before anything is shown, stored in the transcript or sent to the
  model. Only exact registered secrets are replaced there: a pattern match in a file the model reads
  would come back as ``[token]`` and be written back over the user's real value by the next edit.
- ``scrub``: ``redact`` plus every kind of secret a pattern recognises (API keys, tokens, private
  keys, passwords in URLs and ``password = ...`` assignments), each replaced by a marker saying what
  was there. For what is kept only as a record: the traces (knowledge/telemetry.py) and the log
  records of nbagent's loggers (``logger()``).

The patterns are detect-secrets' (Yelp's secret scanner: one regex-based detector per provider, kept
up to date by its maintainers); ``_EXTRA`` adds the token formats it does not know yet, and ``_AFTER``
the rules about text rather than a provider's format (bearer tokens, URL passwords, keyword
assignments). All run on RE2, so scrubbing takes linear time whatever the text.
detect-secrets imports ``requests`` (for its optional verification), so the patterns load on first
use, or in the background when ``preload()`` is called.

Endpoint URLs can carry credentials too (``https://user:token@host/v1?key=...``): ``public_url``
keeps only scheme, host, port and path for what is stored (a session's provider), listed and shown.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from typing import Any, NamedTuple
from urllib.parse import urlsplit, urlunsplit

PLACEHOLDER = "[secret redacted by nbagent]"
_SECRETS: set[str] = set()
_LOCK = threading.Lock()


def register_secret(secret: str) -> None:
    """Never let ``secret`` (at least 16 characters) appear in a tool's result, a trace or a log."""
    if len(secret) < 16:
        raise ValueError("a secret to redact must be at least 16 characters (shorter ones match by chance)")
    with _LOCK:
        _SECRETS.add(secret)


def forget_secret(secret: str) -> None:
    with _LOCK:
        _SECRETS.discard(secret)


def redact(text: str) -> str:
    """``text`` with every registered secret replaced by PLACEHOLDER."""
    if not _SECRETS:
        return text
    with _LOCK:
        secrets = list(_SECRETS)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, PLACEHOLDER)
    return text


# ----- patterns: what a secret looks like -----------------------------------------------------------

_PRIVATE_KEY = r"(?s)-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(-----END [A-Z ]*PRIVATE KEY-----|\z)"
"""A whole PEM block (detect-secrets matches its first line only, which would leave the key itself)."""

_EXTRA: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # (secret type, marker, patterns): token formats detect-secrets 1.5 does not have, or matches only
    # in part (a JWT without its signature, GitHub tokens of the older lengths). Applied first.
    ("Google API Key", "[api key]", (r"\bAIza[0-9A-Za-z_\-]{35}",)),
    ("Hugging Face Token", "[token]", (r"\bhf_[A-Za-z0-9]{30,}",)),
    ("npm Token", "[token]", (r"\bnpm_[A-Za-z0-9]{36}\b",)),
    ("API Key", "[api key]", (r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{16,}",)),
    ("GitHub Token", "[token]", (r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",)),
    ("JSON Web Token", "[jwt]", (r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]+",)),
    ("Groq API Key", "[api key]", (r"\bgsk_[A-Za-z0-9]{20,}",)),
)

_MARKERS = {
    "AWS Access Key": "[aws key]", "JSON Web Token": "[jwt]", "OpenAI Token": "[api key]",
    "Stripe Access Key": "[api key]", "SendGrid API Key": "[api key]", "Mailchimp Access Key": "[api key]",
    "Twilio API Key": "[api key]", "Azure Storage Account access key": "[api key]",
}
"""Marker per detect-secrets type; the other types are tokens."""

_SKIPPED_TYPES = {"Private Key", "Basic Auth Credentials", "Public IP (ipv4)", "Secret Keyword",
                  "Base64 High Entropy String", "Hex High Entropy String"}
"""Handled by the rules around them (a whole PEM block, a URL's password, a keyword's value), or not a
secret (an IP address), or too eager for prose (any long random-looking word)."""

_AFTER: tuple[tuple[str, str], ...] = (
    (r"(?i)\b(authorization\s*[:=]\s*(?:bearer|token|basic)?\s*)[A-Za-z0-9._~+/=\-]{8,}", r"\1[token]"),
    (r"(?i)\b(bearer)\s+[A-Za-z0-9._\-]{12,}", r"\1 [token]"),
    (r"([a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@]+):[^\s@/]+@", r"\1:[password]@"),
    # The keyword anywhere in an environment-style name (AWS_SECRET_ACCESS_KEY=, JUPYTER_TOKEN=): "_" is a
    # word character, so a word boundary before the keyword alone misses them.
    (r"(?i)\b([A-Za-z0-9_]*?(?:api[_-]?key|secret|token|password|passwd|pwd|access[_-]?key)[A-Za-z0-9_]*)"
     r"(\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|\[[a-z ]+\]|\S+)", r"\1\2[redacted]"),
)
"""Rules about text rather than a provider's token format: applied after the detectors."""

_Pattern = Any  # a compiled re2 or re pattern: both have .sub(repl, text)


class _Patterns(NamedTuple):
    private_key: _Pattern
    markers: list[tuple[_Pattern, str]]
    """(pattern, marker) for ``_EXTRA`` then every regex of detect-secrets' detectors."""
    after: list[tuple[_Pattern, str]]
    """(pattern, replacement) for ``_AFTER``."""
    any: _Pattern | None
    """All of them as one alternation: a text it finds nothing in is left as it is without running
    them one by one (each is a call into RE2; some forty of them cost a third of a millisecond on a
    two-word prompt, and a turn's end and every log record scrub). None if RE2 cannot hold them as one."""


_patterns: _Patterns | None = None
_patterns_lock = threading.Lock()


def _load_patterns() -> _Patterns:
    """Every pattern, compiled once, on RE2 (see ``_compile``)."""
    global _patterns
    with _patterns_lock:
        if _patterns is None:
            sources = [(_source(p), marker) for _, marker, patterns in _EXTRA for p in patterns]
            for detector in _detect_secrets_detectors():
                if detector.secret_type not in _SKIPPED_TYPES:
                    marker = _MARKERS.get(detector.secret_type, "[token]")
                    sources += [(_source(p.pattern, p.flags), marker) for p in detector.denylist]
            compiled = [(_compile(source), source, marker) for source, marker in sources]
            kept = [(p, source, m) for p, source, m in compiled if p is not None]
            after = [(_source(p), r) for p, r in _AFTER]
            every = [_source(_PRIVATE_KEY)] + [source for _, source, _ in kept] + [source for source, _ in after]
            _patterns = _Patterns(_own(_PRIVATE_KEY), [(p, m) for p, _, m in kept], [(_own(p), r) for p, r in after],
                                  _compile("|".join(f"(?:{source})" for source in every), max_mem=64 << 20))
        return _patterns


def _source(pattern: str, flags: int = 0) -> str:
    """``pattern`` as RE2 takes it: a trailing ``(?!\\w)`` becomes ``\\b``, a repetition over RE2's
    1,000 is capped, and Python's flags go inline."""
    pattern = pattern.replace("(?!\\w)", "\\b")
    pattern = re.sub(r"\{(\d+),(\d+)\}", lambda m: f"{{{m[1]},{min(int(m[2]), 1000)}}}", pattern)
    inline = "".join(letter for flag, letter in ((re.I, "i"), (re.S, "s"), (re.M, "m")) if flags & flag)
    return f"(?{inline}){pattern}" if inline else pattern


def _compile(pattern: str, *, max_mem: int = 0) -> _Pattern | None:
    """``pattern`` (see ``_source``) on RE2, which matches in linear time: a log line or a prompt can hold
    anything, and detect-secrets' patterns were written for lines of source files (``//.+/:_authToken``
    takes 10 s on 20,000 slashes with Python's re, its IBM keyword pattern 13 s on "password" and 1,000
    spaces). A pattern RE2 cannot run (a look-behind: the keyword patterns of Cloudant, IBM and
    SoftLayer) is left out, None, and ``_AFTER``'s keyword rule covers what they found (``password = ...``)."""
    import re2

    options = re2.Options()
    options.log_errors = False  # a pattern RE2 refuses is expected here: nothing on stderr
    if max_mem:
        options.max_mem = max_mem
    try:
        return re2.compile(pattern, options)
    except re2.error:
        return None


def _own(pattern: str) -> _Pattern:
    """One of nbagent's own patterns, which RE2 runs (a test keeps them so)."""
    compiled = _compile(_source(pattern))
    if compiled is None:
        raise ValueError(f"not a pattern RE2 can run: {pattern}")
    return compiled


def _detect_secrets_detectors() -> list:
    """Every regex-based detector class that detect-secrets ships (its plugin modules, as it finds them)."""
    import importlib
    import inspect
    import pkgutil

    from detect_secrets import plugins
    from detect_secrets.plugins.base import RegexBasedDetector

    classes = []
    for info in pkgutil.iter_modules(plugins.__path__):
        module = importlib.import_module(f"{plugins.__name__}.{info.name}")
        classes += [c for c in vars(module).values() if isinstance(c, type) and issubclass(c, RegexBasedDetector)
                    and c.__module__ == module.__name__ and not inspect.isabstract(c)]
    return classes


def preload() -> None:
    """Load the patterns in the background (a trace recorder calls it when it starts), so that the
    first ``scrub`` does not wait for detect-secrets to import."""
    from ..workers import shared_pool

    if _patterns is None:
        shared_pool().submit(_load_patterns)


def scrub(text: str) -> str:
    """``text`` with registered secrets and every recognised kind of secret replaced by a marker."""
    text = redact(text)
    anything = _load_patterns().any
    if anything is not None and not anything.search(text):
        return text  # none of them matches anywhere: running each in turn would change nothing
    return _each_pattern(text)


def _each_pattern(text: str) -> str:
    """Every pattern in turn, each on what the ones before it left."""
    private_key, markers, after, _ = _load_patterns()
    text = private_key.sub("[private key]", text)
    for pattern, marker in markers:
        text = pattern.sub(functools.partial(_mark, marker), text)
    for pattern, replacement in after:
        text = pattern.sub(replacement, text)
    return text


_EDGES = " \t\r\n\"'=:,;`"
"""What some detectors match around a secret (a quote, a space, ``=``): kept, so only the secret goes."""


def _mark(marker: str, match: re.Match) -> str:
    whole = match.group()
    core = whole.strip(_EDGES)
    if not core:
        return whole
    start = whole.index(core)
    return whole[:start] + marker + whole[start + len(core):]


# ----- logs -------------------------------------------------------------------------------------------

class _ScrubRecords(logging.Filter):
    """Scrubs a log record's message (with its arguments filled in) before any handler sees it."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = scrub(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:  # a handler's formatter uses exc_text when it is set
            record.exc_text = scrub(logging.Formatter().formatException(record.exc_info))
        return True


_SCRUB_RECORDS = _ScrubRecords()


def logger(name: str) -> logging.Logger:
    """nbagent's logger ``name``, whose records are scrubbed (a filter on a logger applies to the
    records made by that logger only, so every nbagent module takes its logger from here)."""
    log = logging.getLogger(name)
    if _SCRUB_RECORDS not in log.filters:
        log.addFilter(_SCRUB_RECORDS)
    return log


# ----- URLs -----------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=64)  # called for every message sent and received; a pure function of ``url``
def public_url(url: str | None) -> str:
    """``url`` without user name, password, query string or fragment ("" for None)."""
    if not url:
        return ""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # not a URL at all: show nothing of it rather than a secret
        return "(invalid URL)"
    if ":" in host:
        host = f"[{host}]"  # an IPv6 literal
    netloc = f"{host}:{port}" if port is not None else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
