"""Inline completions: the prompt around the cursor, the kernel's names, the model's streamed answer, its cache."""
