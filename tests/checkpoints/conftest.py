"""Fixtures of the checkpoint tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from .repos import make_project


@pytest.fixture
def project(tmp_path) -> Path:
    return make_project(tmp_path / "project")
