"""What nbagent shows or writes out of text it did not write: escaping, plain-text summaries, Markdown, redaction."""
