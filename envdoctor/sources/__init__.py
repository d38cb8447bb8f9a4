"""Fact sources other than this machine. ``pasted``: text a user pasted (collect_env,
nvidia-smi, pip/conda listings, envdoctor reports, tracebacks) read into facts in the live shape."""

from envdoctor.sources.pasted import Paste, read_paste

__all__ = ["Paste", "read_paste"]
