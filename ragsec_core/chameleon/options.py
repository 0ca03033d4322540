"""Semantic Chameleon's user-facing choices, importable without torch (argparse `choices`, the app)."""

from __future__ import annotations

# Optimiser of the main attack: HotFlip-style token gradients through MiniLM, or the paper code's
# black-box random substitution ("joint" is the sparse + dense variant, run by the joint sweep).
OPTIMISERS = ("gradient", "blackbox")
# Reading of the sleeper objective (eq. 1): "bridge" (the default; see chameleon.attack) or as printed.
SLEEPER_FORMS = ("bridge", "literal")
# What the sweep reports per (alpha, k): both documents retrieved, either, benign queries spared, all three.
METRICS = ("co_retrieval", "any_retrieval", "stealth", "overall")
