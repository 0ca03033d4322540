"""Pass-1's replay engine over an OpenAI-compatible endpoint: the black-box path of RAGCharacter.

It has the interface of `ReplayEngine` (replay, calls, forward-pass equivalents) so Pass-1 runs unchanged.
What a black-box endpoint cannot give is the log-probability of a *given* answer: chat APIs score only the
tokens they generate, and prompt log-probabilities through `/v1/completions` + `echo` are not offered by
every server (llama.cpp's came back implausible). So the influence of a mask is measured on text instead:
the drop in the replayed answer's word overlap (token F1, SQuAD-style) with the event answer. It is 0 when
the replay repeats the event answer and grows as the answer moves away from it; its logarithm stands in for
the log-probability, so "the drop from the unmasked prompt" reads the same in both engines. The artifact
records which influence was used.

There is no KV cache to reuse, so every distinct masked prompt is one request; identical prompts are
memoised. `prefetch` sends independent candidates together (`concurrency` in flight), and because each
request is greedy and deterministic the results equal those of one-at-a-time replay.
"""

from __future__ import annotations

import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence

from ragsec_core._util.errors import RagsecError
from ragsec_core.data.trace import Trace, normalize
from ragsec_core.models.endpoint import EndpointLLM
from ragsec_core.models.llm import LLM, GenerationSettings
from ragsec_core.models.replay import NaiveReplayEngine, Replay, ReplayEngine

MIN_OVERLAP = 1e-3  # floor of the overlap before the logarithm: an unrelated answer scores log(1e-3)

MessagesFor = Callable[[str], list[dict[str, str]] | None]


def word_f1(answer: str, reference: str) -> float:
    """Token-level F1 of two answers after normalisation (case, punctuation, articles); 1.0 for two empty."""
    a, r = normalize(answer).split(), normalize(reference).split()
    if not a or not r:
        return float(a == r)
    common = sum((Counter(a) & Counter(r)).values())
    if not common:
        return 0.0
    p, q = common / len(a), common / len(r)
    return 2 * p * q / (p + q)


def text_logprob(answer: str, reference: str) -> float:
    """The text-only stand-in for log P(reference | prompt): log of the replay's overlap with it."""
    return math.log(max(word_f1(answer, reference), MIN_OVERLAP))


class EndpointReplayEngine:
    """Replays of masked variants of one prompt on an endpoint, memoised, with optional batching."""

    def __init__(self, llm: EndpointLLM, base_prompt: str, settings: GenerationSettings | None = None,
                 messages_for: MessagesFor | None = None, base_tokens: int | None = None) -> None:
        self.llm = llm
        self.settings = settings or GenerationSettings()
        self.messages_for = messages_for or (lambda prompt: None)
        self.base_prompt = base_prompt
        self.calls = 0
        self.forward_tokens = 0
        self._base_tokens = base_tokens or 0
        self._memo: dict[tuple[str, str], Replay] = {}
        self._lock = threading.Lock()

    def forward_pass_equivalents(self) -> float:
        """Tokens the server processed (prompt + completion, from its usage counts) over the base prompt's."""
        return self.forward_tokens / max(1, self._base_tokens)

    def replay(self, prompt: str, reference: str) -> Replay:
        key = (prompt, reference)
        if key not in self._memo:
            gen = self.llm.generate(prompt, self.settings, self.messages_for(prompt))
            self._memo[key] = self._record(gen.text, gen.prompt_tokens, gen.new_tokens, gen.ms, prompt, reference)
        return self._memo[key]

    def prefetch(self, prompts: Sequence[str], reference: str) -> None:
        """Replay the not-yet-memoised prompts together (`concurrency` in flight); later `replay` calls
        read the memo. With concurrency 1 this does nothing, so the request count is the serial one."""
        todo = list(dict.fromkeys(p for p in prompts if (p, reference) not in self._memo))
        if self.llm.config.concurrency <= 1 or len(todo) <= 1:
            return
        t0 = time.perf_counter()
        gens = self.llm.generate_many([(p, self.messages_for(p)) for p in todo], self.settings)
        ms = (time.perf_counter() - t0) * 1000 / len(todo)
        for p, g in zip(todo, gens):
            self._memo[(p, reference)] = self._record(g.text, g.prompt_tokens, g.new_tokens, ms, p, reference)

    def _record(self, text: str, prompt_tokens: int, new_tokens: int, ms: float, prompt: str, reference: str) -> Replay:
        with self._lock:
            self.calls += 1
            self.forward_tokens += prompt_tokens + new_tokens
            if not self._base_tokens and prompt == self.base_prompt:
                self._base_tokens = prompt_tokens
        return Replay(text, text_logprob(text, reference), ms, 0, prompt_tokens)


Engine = ReplayEngine | NaiveReplayEngine | EndpointReplayEngine


def engine_for(llm: LLM | EndpointLLM, trace: Trace, *, naive: bool = False) -> Engine:
    """The replay engine for the generator that answered `trace`, at its logged settings: KV-reusing local
    replay (or the naive reference path), or memoised requests to the endpoint, whose messages frame the
    masked prompt as Pass-0's did. Pass-1 and the benchmark's gold replay share it, so both replay alike."""
    settings = GenerationSettings(**trace.model["settings"])
    if isinstance(llm, EndpointLLM):
        frame = trace.messages_for if trace.prompt_message is not None else None
        tokens = trace.timing.get("prompt_tokens")
        return EndpointReplayEngine(llm, trace.prompt, settings, frame, int(tokens) if tokens else None)
    engine = (NaiveReplayEngine if naive else ReplayEngine)(llm, trace.prompt, settings)
    check_tokenisation(llm, trace, len(engine.base_ids))
    return engine


def check_tokenisation(llm: LLM, trace: Trace, here: int) -> None:
    """Refuse to replay a trace this very model logged when its prompt no longer tokenises as it did.

    Same model, other software: a transformers release whose special-token map leaves a template token out
    (seen on a GPU image) tokenises a logged prompt 6 tokens longer, every replay is then the counterfactual
    of another prompt, and Pass-1 draws its conclusions from them without an error. A trace of another
    model or of an endpoint is not checked: its logged count is not this tokenizer's. `here`: the prompt's
    token count under this tokenizer (the engine's base prompt, already encoded)."""
    logged = trace.timing.get("prompt_tokens")
    if not logged or trace.model.get("backend", "local") != "local" or trace.model.get("id") != llm.model_id:
        return
    if here != int(logged):
        raise RagsecError(f"this trace's prompt tokenises to {here} tokens here but {int(logged)} when {llm.model_id} "
                          "logged it: the tokenizer or transformers differs from the one that answered, so a replay "
                          "would not be the logged answer's counterfactual (use the environment that logged it)")
