"""The models layer's user-facing choices, in a module without torch so that argparse `choices` and the
app's select boxes read them without loading a model stack."""

from __future__ import annotations

QUANTIZE_CHOICES = ("none", "4bit", "8bit")  # full precision, or bitsandbytes NF4 / int8
DEFAULT_QUANTIZE = "none"
DEFAULT_MAX_NEW_TOKENS = 32
