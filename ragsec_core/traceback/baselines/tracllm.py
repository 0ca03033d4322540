"""TracLLM (Wang et al., USENIX Security 2025) as a peer of RAGCharacter, on the trace's own prompt and
logged answer, with the PyPI library `tracllmkit` 0.1.2 doing the search.

What runs is the library's `PerturbationBasedAttribution.attribute` at its defaults: the informed
divide-and-conquer search (`attr_type="tracllm"`: split every node in two, score the nodes once there are
more than K=5, keep the top K, repeat down to single texts), run once per score function of the ensemble
`["stc", "loo", "denoised_shapley"]` (Monte-Carlo Shapley over `sh_N=5` permutations, each text's value
the mean of its top `beta=0.2` marginal contributions), merged by the maximum score per text with LOO
weighted `w=2`. Its reported set is the top K=5.

One method is ours: the value function `context_value(question, contexts, answer)`. The library's renders
its own prompt (`wrap_prompt`: its instruction template, no chat turns), not the prompt the model saw;
our override (a subclass) scores the same quantity, the sum of the logged answer's token log-probabilities
(one teacher-forced forward, -1000 if infinite, as the library), under the trace's own prompt with only
the given texts kept. The texts handed to the library are opaque keys, one per source, so the strings it
joins and sorts map back to sources exactly. Two more differences, both forced: sources are the sentences
of the prompt-used passages (`sentence_spans`), not the library's default 100-word segments of one
context string (those would cross passage boundaries, and the comparison is at sentence level for every
peer); and with K or fewer sources the library's search never scores a node and fails (its scores stay
None), so every source is then scored directly (`attr_type="vanilla_perturb"`), which is what the search
reduces to when all texts are leaves. The Shapley permutations use Python's `random`, seeded with the
event's seed (global state restored after), so a run is deterministic.

Cost is measured with the same forward pre-hook as ContextCite's (`ctx.calls`, `ctx.tokens`). The
library does not cache coalition values (the empty coalition is scored once per permutation and layer),
and neither do we: the cost is the library's.
"""

from __future__ import annotations

import random
import re
import threading
import types
from collections.abc import Sequence
from functools import cache
from importlib.util import find_spec
from typing import Any

import torch

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.extras import require
from ragsec_core.data.trace import Trace
from ragsec_core.models.llm import LLM
from ragsec_core.traceback.baselines.base import MethodContext, MethodResult, Timer
from ragsec_core.traceback.baselines.contextcite import (
    Source,
    ablated_prompt,
    answer_ids,
    counted_forwards,
    package_version,
    top_sources,
    trace_sources,
    victim,
)

K = 5  # PerturbationBasedAttribution's default K: nodes kept per layer, texts reported
SCORE_FUNCS = ("stc", "loo", "denoised_shapley")  # its default ensemble
SH_N = 5  # Shapley permutations
W = 2.0  # LOO's weight in the ensemble
BETA = 0.2  # denoised Shapley: mean of the top 20% marginal contributions
INSTALL = ("install the peers extra and tracllmkit without its pinned torch/CUDA dependencies: "
           "pip install 'ragsec[peers]' && pip install --no-deps tracllmkit==0.1.2 (make setup does both)")
_KEY = re.compile("\ue001(\\d+)\ue001")


def source_key(i: int) -> str:
    """The opaque text standing for source `i` in the library (private-use marks: never in a passage)."""
    return f"\ue001{i}\ue001"


def kept(contexts: Sequence[str], n: int) -> list[bool]:
    """Which of `n` sources a coalition of key strings (joined or listed, as the library passes) keeps."""
    ids = {int(m) for c in contexts for m in _KEY.findall(c)}
    return [i in ids for i in range(n)]


def answer_logprob(llm: LLM, prompt: str, response: list[int]) -> float:
    """TracLLM's value: the sum of the response tokens' log-probabilities after `prompt` (one forward)."""
    p = llm.encode(prompt)
    t = torch.tensor([response], dtype=torch.long, device=p.device)
    x = torch.cat([p, t], dim=1)
    with torch.no_grad():
        logits = llm.model(x).logits[0, p.shape[1] - 1 : -1].float()
    value = float(torch.log_softmax(logits, -1)[torch.arange(t.shape[1]), t[0]].sum())
    return -1000.0 if value == float("-inf") else value


@cache
def _attribution_class() -> type:
    """tracllmkit's `PerturbationBasedAttribution` with our value function, imported on first use."""
    require("peers", "tracllm", "nltk", "pynvml", "matplotlib", "tiktoken", "openai", "sklearn", "scipy")
    if find_spec("tracllmkit") is None:
        raise RagsecError(f"tracllm needs tracllmkit (missing): {INSTALL}")
    try:
        import matplotlib

        matplotlib.use("Agg")  # it imports pyplot for its plots; no display here
        from tracllmkit.attribution import PerturbationBasedAttribution
    except ImportError as exc:
        raise RagsecError(f"tracllm: tracllmkit does not import ({exc}): {INSTALL}") from None
    except ValueError as exc:  # its Llama module installs a SIGALRM handler at import: main thread only
        if threading.current_thread() is threading.main_thread():
            raise
        raise RagsecError(f"tracllm: tracllmkit must first be imported from the main thread ({exc})") from None

    class TraceAttribution(PerturbationBasedAttribution):
        """The library's search and ensemble; the value of a coalition scored on the trace's prompt."""

        def bind(self, llm: LLM, trace: Trace, sources: list[Source], response: list[int]) -> None:
            self.victim, self.trace, self.sources, self.response = llm, trace, sources, response

        def context_value(self, question: str, contexts: list[str], answer: str) -> float:
            keep = kept(contexts, len(self.sources))
            return answer_logprob(self.victim, ablated_prompt(self.trace.prompt, self.sources, keep), self.response)

    return TraceAttribution


class TracLLM:
    """TracLLM at its defaults (K=5, stc+loo+denoised Shapley, sh_N=5, w=2, beta=0.2); `sh_N` can be
    lowered for a quick run (the tests), the benchmark uses the default."""

    name = "tracllm"

    def __init__(self, K: int = K, score_funcs: Sequence[str] = SCORE_FUNCS, sh_N: int = SH_N,
                 w: float = W, beta: float = BETA) -> None:
        self.K, self.score_funcs, self.sh_N, self.w, self.beta = K, list(score_funcs), sh_N, w, beta

    def run(self, trace: Trace, ctx: MethodContext) -> MethodResult:
        cls = _attribution_class()
        llm = victim(ctx, self.name)
        timer = Timer(ctx)
        sources = trace_sources(trace)
        response = answer_ids(llm, trace.answer)
        attr_type = "tracllm" if len(sources) > self.K else "vanilla_perturb"
        details: dict[str, Any] = {
            "library": f"tracllmkit {package_version('tracllmkit')}",
            "ran": f"tracllmkit PerturbationBasedAttribution.attribute (attr_type={attr_type}) with the value "
                   "function scored on the trace's prompt and logged answer (ours: the library's renders its own prompt)",
            "K": self.K, "score_funcs": self.score_funcs, "sh_N": self.sh_N, "w": self.w, "beta": self.beta,
            "sources": len(sources), "seed": ctx.seed,
        }
        if not sources or not response:
            details["skipped"] = "no sources" if not sources else "empty answer"
            return timer.result(self.name, [], [], details=details)
        handle = types.SimpleNamespace(name=llm.model_id, model=llm.model, tokenizer=llm.tokenizer)
        attr = cls(handle, "segment", self.K, attr_type, self.score_funcs, self.sh_N, self.w, self.beta, 0)
        attr.bind(llm, trace, sources, response)
        state = random.getstate()
        random.seed(ctx.seed)
        try:
            with llm._lock, counted_forwards(ctx, llm.model):
                _texts, ids, scores, _secs, ensemble = attr.attribute(trace.query, [source_key(i) for i in range(len(sources))],
                                                                      trace.answer)
        finally:
            random.setstate(state)
        by_source = [0.0] * len(sources)
        for i, s in zip(ids, scores):
            by_source[int(i)] = float(s)
        chunks, spans, rows = top_sources(trace, sources, by_source, self.K)
        details |= {"top": rows, "ensemble": {f: [[int(i), round(float(s), 6)] for i, s in pairs]
                                              for f, pairs in ensemble.items()}}
        return timer.result(self.name, chunks, spans, details=details)
