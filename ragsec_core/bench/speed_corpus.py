"""Large retrieval corpora for `ragsec bench speed`, built from real text that is never copied into the repo.

Why: the retrieval targets are stated at 20k and 100k passages, far more than the sample corpora hold.
Passages are 2-4 sentences drawn (seeded) from a pool of real sentences: the context passages and
adversarial texts of the shared attack files (`../shared/data/stealthy`, `../shared/data/poisonedrag`)
plus the sample corpora, so vocabulary, lengths and embedding geometry are those of real RAG text.
Embedding 100k passages with MiniLM would take hours on 2 shared CPU cores, so only the ~10k unique
sentences are embedded (cached under the ragsec cache folder, keyed by their hash, computed once) and a
passage's vector is the normalised mean of its sentences' vectors.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ragsec_core._util.paths import cache_dir, shared_data_dir
from ragsec_core.bench.attacks import load_attack
from ragsec_core.data.corpus import load_corpus, sample_corpus_names
from ragsec_core.data.spans import sentence_spans
from ragsec_core.retrieval.embed import embed_by_length

if TYPE_CHECKING:
    from ragsec_core.retrieval.embed import Embedder

SHARED_DATA = shared_data_dir()
ATTACK_FILES = ("stealthy/wiki_open_nq.json", "stealthy/wiki_hotpotqa.json", "poisonedrag/nq.json", "poisonedrag/hotpotqa.json")


def shared_missing(data_root: Path = SHARED_DATA) -> str | None:
    """Why the shared attack data cannot be used, or None when it is there."""
    missing = [f for f in ATTACK_FILES if not (data_root / f).exists()]
    return f"shared attack data not found under {data_root} ({', '.join(missing)})" if missing else None


def real_texts(data_root: Path = SHARED_DATA) -> list[str]:
    """Context passages, adversarial texts and questions of the shared files, plus the sample corpora."""
    texts: list[str] = []
    for name in ATTACK_FILES:
        for rec in load_attack(data_root / name):
            texts.extend(t for _, t in rec.context)
            texts.extend(rec.adv_texts)
    for name in sample_corpus_names():
        texts.extend(d.text for d in load_corpus(name).documents)
    return list(dict.fromkeys(t for t in texts if t.strip()))


def sentence_pool(texts: list[str]) -> tuple[list[str], list[list[int]]]:
    """Unique sentences (>= 20 characters, spaCy's rule-based sentencizer) and, per text, its sentence ids."""
    ids: dict[str, int] = {}
    per_text = []
    for t in texts:
        own = [ids.setdefault(t[a:b], len(ids)) for a, b in sentence_spans(t, limit=200) if b - a >= 20]
        if own:
            per_text.append(own)
    return list(ids), per_text


@dataclass(frozen=True)
class SpeedCorpus:
    sentences: list[str]
    members: list[list[int]]  # per passage, the sentence ids it is made of

    @property
    def texts(self) -> list[str]:
        return [" ".join(self.sentences[i] for i in m) for m in self.members]

    def vectors(self, sentence_vectors: np.ndarray) -> np.ndarray:
        """Passage vectors: normalised mean of their sentences' MiniLM vectors (MiniLM itself mean-pools
        tokens). Exact MiniLM over 100k passages would take hours on 2 shared cores; the search latency
        does not depend on how the vectors were made, and recall@10 is measured on this real geometry."""
        out = np.zeros((len(self.members), sentence_vectors.shape[1]), dtype=np.float32)
        for i, m in enumerate(self.members):
            out[i] = sentence_vectors[m].mean(0)
        out /= np.linalg.norm(out, axis=1, keepdims=True).clip(1e-9)
        return out


def speed_corpus(n: int, seed: int = 0, data_root: Path = SHARED_DATA) -> SpeedCorpus:
    """`n` passages: first the real texts (as their sentences), then seeded draws of 2-4 real sentences."""
    sents, per_text = sentence_pool(real_texts(data_root))
    rng = random.Random(seed)
    members = per_text[:n]
    while len(members) < n:
        members.append(rng.sample(range(len(sents)), rng.randint(2, 4)))
    return SpeedCorpus(sents, members)


def queries(limit: int = 200, data_root: Path = SHARED_DATA) -> list[str]:
    """Real questions of the shared attack files."""
    qs = [r.question for name in ATTACK_FILES for r in load_attack(data_root / name)]
    return list(dict.fromkeys(qs))[:limit]


def cached_embeddings(texts: list[str], embedder: Embedder, progress: bool = True) -> np.ndarray:
    """MiniLM embeddings of `texts`, computed once and kept under `<cache>/speed/`."""
    h = hashlib.sha256(embedder.model_id.encode())
    for t in texts:
        h.update(t.encode("utf-8", "surrogatepass") + b"\x1e")
    path = cache_dir() / "speed" / f"emb-{len(texts)}-{h.hexdigest()[:16]}.npy"
    if path.exists():
        return np.load(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(texts), desc="embedding passages (cached once)", unit="passage", file=sys.stderr)

    def tick(done: int, total: int) -> None:
        if bar is not None:
            bar.update(done - bar.n)

    emb = embed_by_length(embedder, texts, tick)
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, emb)
    tmp.rename(path)
    (path.with_suffix(".json")).write_text(json.dumps({"n": len(texts), "embedder": embedder.model_id}))
    return emb


if __name__ == "__main__":  # precompute the cache: python -m ragsec_core.bench.speed_corpus 100000
    from ragsec_core.retrieval.embed import Embedder

    sc = speed_corpus(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
    print(f"{len(sc.members)} passages over {len(sc.sentences)} sentences", file=sys.stderr)
    cached_embeddings(sc.sentences, Embedder())
