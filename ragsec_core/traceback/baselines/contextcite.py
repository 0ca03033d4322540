"""ContextCite (Cohen-Wang et al., NeurIPS 2024) as a peer of RAGCharacter, on the trace's own prompt and
logged answer, with the PyPI library `context-cite` 0.0.4 doing the work.

What runs is the library's own attribution pipeline, the one `ContextCiter.get_attributions()` runs for
the whole response: `context_cite.utils.get_masks_and_logit_probs` (its seeded random ablation masks, each
source kept with probability 0.5, 64 ablations; one teacher-forced forward of prompt + response per
ablation through its DataCollator/DataLoader at batch size 1; the response tokens' logit-probabilities),
`aggregate_logit_probs` (the sequence-level logit of the response's probability) and its Lasso surrogate
`solver.LassoRegression` (alpha 0.01, standardised masks), whose weights are the attributions.

What does not run is the `ContextCiter` class itself: it renders its own prompt (`prompt_template` put in
a user turn of the tokenizer's chat template, i.e. SmolLM2's default system prompt, not the RAG one the
model saw) and generates its own response, and neither the rendered prompt nor a fixed response can be
given through its constructor (only by overriding its private `_get_prompt_ids` and `_cache["output"]`).
So the library's functions are given what the class would compute: the token ids of the ablated trace
prompt (a callable of the mask, as the class passes) and the ids of the logged answer.

Sources are the sentences of the prompt-used passages (`sentence_spans`, spaCy's rule-based sentencizer),
our partition instead of the library's NLTK one, which is why the NLTK data the library downloads at
import is neither needed nor fetched (the download call is stubbed for that one import). Ablating a
source removes it from the prompt with the whitespace up to the next sentence, as the library's
`SimpleContextPartitioner` drops a part with its separator; the rest of the prompt (system turn, framing,
passage labels, question) stays fixed. The report is the top-5 sources with positive weight (the
library's README reads attributions at `top_k=5`; a non-positive weight does not support the answer).

Cost is measured, not estimated: a forward pre-hook on the model counts every forward the library runs
(`ctx.calls`) and the tokens it pushes (`ctx.tokens`, batch x sequence length).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.extras import require
from ragsec_core.data.spans import Span, sentence_spans
from ragsec_core.data.trace import Trace
from ragsec_core.models.llm import LLM
from ragsec_core.traceback.baselines.base import MethodContext, MethodResult, Timer

NUM_ABLATIONS = 64  # ContextCiter's default `num_ablations`
KEEP_PROB = 0.5  # ContextCiter's default `ablation_keep_prob`
BATCH_SIZE = 1  # ContextCiter's default `batch_size`
TOP_K = 5  # sources reported (the README's `get_attributions(as_dataframe=True, top_k=5)`)
_GAP = re.compile(r"\s*")


# ---------------------------------------------------------------- sources and reports (TracLLM shares them)

@dataclass(frozen=True)
class Source:
    """One sentence of a prompt-used passage: its hit, its chunk-local span, and the prompt range that
    ablating it removes (the sentence and the whitespace after it, inside the passage)."""

    hit: int
    span: Span
    cut: tuple[int, int]


def trace_sources(trace: Trace) -> list[Source]:
    """The sentences of the used passages in prompt order. A passage's prompt block is its text verbatim
    (`PromptSpan`), so chunk-local offsets move to prompt offsets by the block's start."""
    out: list[Source] = []
    for block in sorted(trace.spans, key=lambda s: s.start):
        if block.hit not in trace.used:
            continue
        text = trace.hits[block.hit].text
        sents = sentence_spans(text)
        for j, (a, b) in enumerate(sents):
            end = min(_GAP.match(text, b).end(), sents[j + 1][0] if j + 1 < len(sents) else len(text))  # type: ignore[union-attr]
            out.append(Source(block.hit, (a, b), (block.start + a, block.start + end)))
    return out


def ablated_prompt(prompt: str, sources: Sequence[Source], keep: Sequence[bool]) -> str:
    """`prompt` with every source whose `keep` is false cut out; everything else verbatim."""
    parts, at = [], 0
    for src, k in zip(sources, keep):
        if not k:
            parts.append(prompt[at : src.cut[0]])
            at = src.cut[1]
    parts.append(prompt[at:])
    return "".join(parts)


def answer_ids(llm: LLM, answer: str) -> list[int]:
    """The logged answer's token ids, as the response both libraries score after the prompt."""
    return list(llm.tokenizer(answer, add_special_tokens=False)["input_ids"])


def top_sources(trace: Trace, sources: Sequence[Source], scores: Sequence[float],
                k: int) -> tuple[list[int], list[tuple[int, Span]], list[dict[str, Any]]]:
    """(chunks, spans, rows) from source scores: the top `k` sources with a positive score (ties by prompt
    order), their passages ordered by their best source, and a JSON row per reported source."""
    ranked = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: (-scores[i], i))[:k]
    spans = [(sources[i].hit, sources[i].span) for i in ranked]
    chunks = list(dict.fromkeys(h for h, _ in spans))
    rows = [{"chunk_id": trace.hits[sources[i].hit].chunk_id, "span": list(sources[i].span),
             "score": round(float(scores[i]), 6)} for i in ranked]
    return chunks, spans, rows


def victim(ctx: MethodContext, method: str) -> LLM:
    """The local victim model: both peers score the victim's own log-probabilities (ACCESS local-only)."""
    if not isinstance(ctx.llm, LLM):  # check_access refuses it before a benchmark run
        raise RagsecError(f"{method} scores the victim's own log-probabilities; it cannot run on an endpoint")
    return ctx.llm


def package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "unknown"


@contextmanager
def counted_forwards(ctx: MethodContext, model: Any) -> Iterator[None]:
    """Count every forward of `model` inside the block in `ctx.calls` and its input tokens (batch x length,
    padding included: it is pushed through the model) in `ctx.tokens`, with a forward pre-hook."""
    def hook(_module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        x = kwargs.get("input_ids", args[0] if args else None)
        if x is None:
            x = kwargs.get("inputs_embeds")
        ctx.calls += 1
        ctx.tokens += int(x.shape[0] * x.shape[1]) if x is not None else 0

    handle = model.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        yield
    finally:
        handle.remove()


# ---------------------------------------------------------------- the library

def _library() -> tuple[Callable[..., Any], Callable[..., Any], type]:
    """context-cite's pipeline functions, imported on first use so listing methods imports nothing.
    `context_cite.utils` calls `nltk.download("punkt_tab")` at import; its NLTK splitter is never used
    here (the partition is ours) and no network may be reachable, so that one call is stubbed."""
    require("peers", "contextcite", "context_cite", "datasets", "nltk", "sklearn")
    try:
        import nltk

        real = nltk.download
        nltk.download = lambda *a, **k: False
        try:
            from context_cite.solver import LassoRegression
            from context_cite.utils import aggregate_logit_probs, get_masks_and_logit_probs
        finally:
            nltk.download = real
    except ImportError as exc:
        raise RagsecError(f"contextcite: context-cite does not import ({exc}): install the peers extra: "
                          "pip install 'ragsec[peers]'") from None
    return get_masks_and_logit_probs, aggregate_logit_probs, LassoRegression


@contextmanager
def _quiet(module: str) -> Iterator[None]:
    """No progress bar per event (the library wraps its loader in tqdm) and none of torch's CPU
    autocast warnings (it enters `torch.cuda.amp.autocast`, a no-op on CPU)."""
    import sys

    mod = sys.modules[module]
    real = getattr(mod, "tqdm")  # noqa: B009 (a module global of the library, replaced for the block)
    setattr(mod, "tqdm", lambda it, *a, **k: it)  # noqa: B010
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            warnings.simplefilter("ignore", UserWarning)
            yield
    finally:
        setattr(mod, "tqdm", real)  # noqa: B010


class ContextCite:
    """ContextCite at its defaults (64 ablations, keep 0.5, Lasso alpha 0.01); `num_ablations` can be
    lowered for a quick run (the tests), the benchmark uses the default."""

    name = "contextcite"

    def __init__(self, num_ablations: int = NUM_ABLATIONS, keep_prob: float = KEEP_PROB,
                 top_k: int = TOP_K, batch_size: int = BATCH_SIZE) -> None:
        self.num_ablations, self.keep_prob, self.top_k, self.batch_size = num_ablations, keep_prob, top_k, batch_size

    def run(self, trace: Trace, ctx: MethodContext) -> MethodResult:
        get_masks_and_logit_probs, aggregate_logit_probs, LassoRegression = _library()
        llm = victim(ctx, self.name)
        timer = Timer(ctx)
        sources = trace_sources(trace)
        response = answer_ids(llm, trace.answer)
        details: dict[str, Any] = {
            "library": f"context-cite {package_version('context-cite')}",
            "ran": "context_cite.utils.get_masks_and_logit_probs + aggregate_logit_probs + solver.LassoRegression "
                   "(ContextCiter's own pipeline) on the trace's prompt and logged answer; ContextCiter's "
                   "prompt rendering and generation not used",
            "num_ablations": self.num_ablations, "keep_prob": self.keep_prob, "top_k": self.top_k,
            "sources": len(sources), "seed": ctx.seed,
        }
        if not sources or not response:
            details["skipped"] = "no sources" if not sources else "empty answer"
            return timer.result(self.name, [], [], details=details)

        def prompt_ids(mask: np.ndarray | None = None) -> list[int]:
            keep = [True] * len(sources) if mask is None else [bool(m) for m in mask]
            return llm.encode_with_offsets(ablated_prompt(trace.prompt, sources, keep))[0]

        with llm._lock, counted_forwards(ctx, llm.model), _quiet("context_cite.utils"):
            masks, logit_probs = get_masks_and_logit_probs(
                llm.model, llm.tokenizer, self.num_ablations, len(sources), prompt_ids, response,
                self.keep_prob, self.batch_size, base_seed=ctx.seed)
            outputs = np.asarray(aggregate_logit_probs(logit_probs[:, : len(response)]), dtype=np.float64)
            if not np.isfinite(outputs).all():  # a response of probability ~1 or ~0: logit +-inf
                details["clipped"] = int((~np.isfinite(outputs)).sum())
                outputs = np.nan_to_num(outputs, posinf=50.0, neginf=-50.0)
            weights, bias = LassoRegression().fit(masks, outputs, len(response))
        chunks, spans, rows = top_sources(trace, sources, [float(w) for w in weights], self.top_k)
        details |= {"bias": round(float(bias), 6), "top": rows,
                    "positive": int((np.asarray(weights) > 0).sum())}
        return timer.result(self.name, chunks, spans, details=details)
