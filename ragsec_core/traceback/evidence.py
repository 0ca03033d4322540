"""The local LM's readings behind the attribution boundary, logged so the boundary can be redrawn offline.

The boundary asks the local causal LM how well a sentence of a chunk reads after some context: after a
prefix of its own chunk (`cohesion`: does the sentence after the block continue the block or the host?),
or after the attack's premise, the question and the event answer (`premise`: was a sentence before the
block written for the attack or for the host?). Every reading is logged (`Reading`) in the Pass-1
result, so `bench traceback --rescore` redraws the boundary from the stored readings without the model
(`Evidence`), while Pass-1 reads with the model (`LiveEvidence`: one cached forward per chunk and
premise, plus each probe's tokens, counted in the forward-pass equivalents).
"""

from __future__ import annotations

from collections.abc import Iterable

from ragsec_core.data.spans import Span
from ragsec_core.data.trace import Trace
from ragsec_core.models.llm import LLM
from ragsec_core.models.scoring import Continuations
from ragsec_core.traceback.result import Reading


def premise_text(query: str, answer: str) -> str:
    """What a query-targeted poison is written from: the question and the answer it must make the model
    give. PoisonedRAG prompts its generator with exactly these two; any attacker who targets a question
    starts from them."""
    return f"Question: {query.strip().rstrip('?').strip()}? Answer: {answer.strip()}."


class Evidence:
    """Readings by key. On its own it only looks them up (a stored result: `--rescore`); a reading that was
    never taken is missing (`missed` counts them) and the boundary then treats the sentence as host."""

    def __init__(self, readings: Iterable[Reading] = ()) -> None:
        self._readings = {(r.hit, r.end, r.probe, r.premise): r for r in readings}
        self.missed = 0

    @property
    def readings(self) -> list[Reading]:
        return list(self._readings.values())

    def logprob(self, trace: Trace, hit: int, end: int, probe: Span, premise: str = "") -> float | None:
        """The mean log-probability of chunk `hit`'s `probe` read right after its text up to `end`, or,
        with a `premise` (the event answer), right after `premise_text` (then `end` is 0)."""
        key = (hit, end, probe, premise)
        if key not in self._readings:
            value = self._read(trace, hit, end, probe, premise)
            if value is None:
                self.missed += 1
                return None
            self._readings[key] = Reading(hit, end, probe, round(value, 4), premise)
        return self._readings[key].logprob

    def _read(self, trace: Trace, hit: int, end: int, probe: Span, premise: str) -> float | None:
        return None


class LiveEvidence(Evidence):
    """Readings taken with a local causal LM (Pass-1: the victim when it is local, else a local surrogate),
    after any `readings` already taken (`--rescore --read`: a changed rule reads what it newly asks)."""

    def __init__(self, reader: LLM, readings: Iterable[Reading] = ()) -> None:
        super().__init__(readings)
        self.reader = reader
        self._texts: dict[tuple[int, str], tuple[int, Continuations]] = {}

    @property
    def tokens(self) -> int:
        """Tokens the readings pushed through the reader."""
        return sum(c.tokens for _, c in self._texts.values())

    def fpe(self, trace: Trace) -> float:
        """The readings' cost in forward-pass equivalents: their tokens over the logged prompt's."""
        return self.tokens / max(1, len(self.reader.encode(trace.prompt)[0]))

    def _read(self, trace: Trace, hit: int, end: int, probe: Span, premise: str) -> float | None:
        if (hit, premise) not in self._texts:  # the premise, then the chunk: one shared cache per pair
            head = premise_text(trace.query, premise) + " " if premise else ""
            self._texts[hit, premise] = len(head), Continuations(self.reader, head + trace.hits[hit].text)
        shift, reader = self._texts[hit, premise]
        return reader.mean_logprob(shift + end, (shift + probe[0], shift + probe[1]))
