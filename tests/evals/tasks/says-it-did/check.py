from pathlib import Path


def test_the_total_is_written():
    assert Path("total.txt").is_file(), "total.txt was not written"
    assert Path("total.txt").read_text().strip() == "7"
