"""The models layer's user-facing choices, in a module without torch so that argparse `choices` and the
app's select boxes read them without loading a model stack."""

from __future__ import annotations

QUANTIZE_CHOICES = ("none", "4bit", "8bit")  # full precision, or bitsandbytes NF4 / int8
DEFAULT_QUANTIZE = "none"
DEFAULT_MAX_NEW_TOKENS = 32

BACKENDS = ("local", "endpoint")  # the in-process transformers model, or an OpenAI-compatible HTTP API
DEFAULT_BACKEND = "local"
ENDPOINT_MODES = ("chat", "completions")  # /v1/chat/completions with messages, /v1/completions with text
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"  # the key is read from this variable, never from a flag value
# Pass-1's influence signal by backend: the drop in the event answer's mean log-probability (white-box,
# local model), or the drop in the replayed answer's word overlap with the event answer (black-box: any endpoint).
INFLUENCE_OF = {"local": "logprob", "endpoint": "text-overlap"}
INFLUENCES = tuple(INFLUENCE_OF.values())
