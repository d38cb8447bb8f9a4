"""Run modes: other executors that return the same report type (the distributed mode)."""
