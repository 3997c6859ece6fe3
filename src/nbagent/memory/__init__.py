"""Project memory: durable notes about the workspace, their hybrid search index, and the one place it is opened.

``open.memory_index`` is the one builder of a memory index (workspace or global scope, with the
configured embedder); ``index.MemoryRow`` is the one row type; ``entries.ProjectMemory`` is the
prompt's fast path, ``relevant.RelevantMemory`` the per-turn retrieval and ``handle.MemoryHandle``
the people's handle (``agent.memory``, the CLI, the panel).
"""
