"""The host allow-list's rule (nbagent.workspace.net_proxy.host_allowed): names, ports, subdomains."""

from __future__ import annotations

import pytest

from nbagent.workspace.net_proxy import host_allowed

LIST = ("pypi.org", "files.pythonhosted.org:443", "*.github.com", "127.0.0.1:8080", "[::1]:9000")


@pytest.mark.parametrize("host, port, allowed", [
    ("pypi.org", 443, True), ("PyPI.org.", 80, True),  # any port when none is named; case and the root dot
    ("files.pythonhosted.org", 443, True), ("files.pythonhosted.org", 80, False),
    ("api.github.com", 443, True), ("a.b.github.com", 22, True), ("github.com", 443, False),
    ("evilgithub.com", 443, False), ("pypi.org.evil.com", 443, False), ("evil.com", 443, False),
    ("127.0.0.1", 8080, True), ("127.0.0.1", 8081, False), ("::1", 9000, True), ("localhost", 8080, False),
])
def test_host_allowed(host, port, allowed):
    assert host_allowed(LIST, host, port) is allowed


def test_an_empty_list_allows_nothing():
    assert not host_allowed((), "pypi.org", 443)
