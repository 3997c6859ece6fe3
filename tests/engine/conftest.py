"""Engine tests use the shared ``make_agent`` (tests/conftest.py) on a fresh workspace."""
