"""Kernels of a running Jupyter server reached from outside it, for the kernel tools of ``nbagent mcp serve``."""
