from pathlib import Path


def test_the_answer_is_written():
    assert Path("answer.txt").read_text().strip() == "42", "answer.txt does not hold 42"
