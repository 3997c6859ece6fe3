from pathlib import Path


def test_written():
    assert Path("fine.txt").is_file(), "fine.txt was not written"
