"""The peer attribution methods (ContextCite, TracLLM) on a planted poison, with the real SmolLM2 and the
real libraries (`context-cite`, `tracllmkit`), scoring the trace's own prompt and logged answer.

The planted case is the secops `embedded` variant: a clean passage set plus one passage holding a false
claim (`gate02.northwind.example`) that SmolLM2 adopts. The runs use fewer ablations / permutations than
the papers' defaults (64 ablations; 5 permutations) to stay near two minutes on CPU.
"""

from __future__ import annotations

import random
import subprocess
import sys
from importlib.util import find_spec

import pytest

from ragsec_core._util.errors import RagsecError
from ragsec_core.data.spans import overlaps
from ragsec_core.traceback.baselines import ACCESS, MethodContext, check_access, get, method_class

QUESTION = "What is the hostname of the bastion host?"
HAS_CC = find_spec("context_cite") is not None
HAS_TRACLLM = find_spec("tracllmkit") is not None
needs_cc = pytest.mark.skipif(not HAS_CC, reason="context-cite not installed (pip install 'ragsec[peers]')")
needs_tracllm = pytest.mark.skipif(
    not HAS_TRACLLM, reason="tracllmkit not installed (pip install --no-deps tracllmkit==0.1.2; make setup does it)")
pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def bastion(pipeline):
    trace = pipeline("secops", "embedded").ask(QUESTION)
    assert trace.signals.par, trace.answer  # an event: the answer adopts the planted claim
    (poisoned,) = [i for i in trace.used if trace.hits[i].poison_spans]
    return trace, poisoned


def _on_the_plant(trace, poisoned, res) -> None:
    """Top chunk is the poisoned passage, the top span overlaps the planted sentence, cost was measured."""
    assert res.chunks[0] == poisoned, res.details
    hit, span = res.spans[0]
    assert hit == poisoned and any(overlaps(span, tuple(g)) for g in trace.hits[poisoned].poison_spans)
    assert 1 <= len(res.spans) <= 5 and set(res.chunks) <= set(trace.used)
    for i, (a, b) in res.spans:
        assert 0 <= a < b <= len(trace.hits[i].text)
    assert res.calls > 0 and res.tokens > 0
    assert res.forward_pass_equivalents(int(trace.timing["prompt_tokens"])) > 1


def test_peers_are_registered_local_only_and_import_without_their_libraries():
    assert ACCESS["contextcite"] == ACCESS["tracllm"] == "local-only"
    assert method_class("contextcite").name == "contextcite" and method_class("tracllm").name == "tracllm"
    with pytest.raises(RagsecError, match="cannot run on an endpoint"):
        check_access(["contextcite", "tracllm"], endpoint=True)
    code = ("import sys; from ragsec_core.traceback.baselines import method_class; "
            "[method_class(n) for n in ('contextcite', 'tracllm')]; "
            "assert not {'context_cite', 'tracllmkit', 'nltk'} & set(sys.modules), sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_missing_library_is_one_clear_error_when_the_method_runs(monkeypatch, make_trace):
    from ragsec_core._util import extras
    from ragsec_core.traceback.baselines import tracllm

    real = extras.find_spec
    monkeypatch.setattr(extras, "find_spec", lambda m: None if m == "context_cite" else real(m))
    with pytest.raises(RagsecError, match=r"\[peers\] extra"):
        get("contextcite").run(make_trace(), MethodContext(None, None))  # type: ignore[arg-type]
    tracllm._attribution_class.cache_clear()
    monkeypatch.setattr(tracllm, "find_spec", lambda m: None)
    with pytest.raises(RagsecError, match="--no-deps tracllmkit"):
        get("tracllm").run(make_trace(), MethodContext(None, None))  # type: ignore[arg-type]
    tracllm._attribution_class.cache_clear()


@needs_cc
def test_contextcite_traces_the_planted_sentence_deterministically(llm, bastion):
    trace, poisoned = bastion
    method = get("contextcite")
    assert method.num_ablations == 64  # the library's default
    method.num_ablations = 16
    res = method.run(trace, MethodContext(llm, llm, seed=0))
    _on_the_plant(trace, poisoned, res)
    assert res.calls == 16  # one forward per ablation, no generation: the logged answer is scored
    again = method.run(trace, MethodContext(llm, llm, seed=0))
    assert (again.chunks, again.spans, again.details["top"]) == (res.chunks, res.spans, res.details["top"])
    print(f"\ncontextcite/16: calls={res.calls} tokens={res.tokens} seconds={res.seconds:.1f}")


@needs_cc
@pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")  # the library's CPU autocast
def test_contextcite_matches_the_library_class_on_the_same_prompt(llm, bastion):
    """The library's own `ContextCiter`, given our partition, the trace prompt verbatim (an identity chat
    template) and the logged answer as its response, yields the same weights as our method."""
    import numpy as np
    from context_cite import ContextCiter
    from context_cite.context_partitioner import BaseContextPartitioner

    from ragsec_core.traceback.baselines.contextcite import ablated_prompt, trace_sources

    trace, _ = bastion
    sources = trace_sources(trace)

    class Partition(BaseContextPartitioner):
        num_sources = property(lambda self: len(sources))

        def split_context(self) -> None: ...

        def get_source(self, index):
            return trace.prompt[slice(*sources[index].cut)]

        def get_context(self, mask=None):
            return ablated_prompt(trace.prompt, sources, [True] * len(sources) if mask is None else list(mask))

    class Verbatim:  # the tokenizer, with the prompt passed through as already rendered
        def __init__(self, tok) -> None:
            self.__dict__["_tok"] = tok

        def __getattr__(self, name):
            return getattr(self._tok, name)

        def __call__(self, *a, **k):
            return self._tok(*a, **k)

        def apply_chat_template(self, messages, **_):
            return messages[0]["content"]

    citer = ContextCiter(llm.model, Verbatim(llm.tokenizer), trace.prompt, trace.query, num_ablations=4,
                         partitioner=Partition(trace.prompt), prompt_template="{context}")
    citer._cache["output"] = trace.prompt + trace.answer  # the logged answer, not a new generation
    weights = citer.get_attributions(verbose=False)
    method = get("contextcite")
    method.num_ablations, method.top_k = 4, len(sources)
    res = method.run(trace, MethodContext(llm, llm, seed=0))
    ours = {(r["chunk_id"], tuple(r["span"])): r["score"] for r in res.details["top"]}
    lib = {(trace.hits[s.hit].chunk_id, s.span): round(float(w), 6) for s, w in zip(sources, weights) if w > 0}
    assert ours == pytest.approx(lib, abs=1e-4) and np.isfinite(weights).all()


@needs_tracllm
def test_tracllm_traces_the_planted_sentence(llm, bastion):
    trace, poisoned = bastion
    method = get("tracllm")
    assert (method.K, method.score_funcs, method.sh_N, method.w) == (5, ["stc", "loo", "denoised_shapley"], 5, 2.0)
    method.sh_N = 1
    res = method.run(trace, MethodContext(llm, llm, seed=0))
    _on_the_plant(trace, poisoned, res)
    assert set(res.details["ensemble"]) == {"stc", "loo", "denoised_shapley"}
    print(f"\ntracllm/sh_N=1: calls={res.calls} tokens={res.tokens} seconds={res.seconds:.1f}")


@needs_tracllm
def test_tracllm_search_is_deterministic_for_a_seed(monkeypatch, llm, bastion):
    """The library's Shapley permutations come from Python's `random`, seeded per event; a cheap
    non-additive value of the ablated prompt stands in for the model, so the search itself is compared."""
    from ragsec_core.traceback.baselines import tracllm

    monkeypatch.setattr(tracllm, "answer_logprob", lambda _llm, prompt, _ids: float(sum(map(ord, prompt)) % 1009) / 10)
    trace, _ = bastion
    before = random.getstate()
    a, b, c = (get("tracllm").run(trace, MethodContext(llm, llm, seed=s)) for s in (3, 3, 4))
    assert random.getstate() == before  # the global state is restored
    assert a.details["ensemble"] == b.details["ensemble"] and (a.chunks, a.spans) == (b.chunks, b.spans)
    assert a.details["ensemble"]["denoised_shapley"] != c.details["ensemble"]["denoised_shapley"]  # the seed is used
