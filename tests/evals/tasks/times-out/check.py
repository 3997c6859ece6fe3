from pathlib import Path

assert Path("done.txt").is_file(), "done.txt was not written"
