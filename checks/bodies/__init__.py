"""Probe bodies: code that imports torch/triton/torch_xla. Only probe children import these."""
