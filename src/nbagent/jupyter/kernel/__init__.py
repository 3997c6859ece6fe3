"""nbagent inside an IPython kernel: the %agent magics, the kernel's agent, its views and its way to the server."""
