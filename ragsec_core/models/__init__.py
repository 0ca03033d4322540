"""Generators and white-box probes: model loading and chat rendering, prefix-KV masked replay, attention capture."""
