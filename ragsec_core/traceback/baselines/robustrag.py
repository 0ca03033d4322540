"""RobustRAG's isolation step, adapted to traceback: answer from each used chunk alone with the victim's
own RAG prompt, and flag the chunks whose isolated answer repeats the observed event (keyword match).
Aggregation is not needed: the question is which chunk alone yields y, not what the robust answer is.
"""

from __future__ import annotations

from ragsec_core.data.trace import Trace, is_abstention
from ragsec_core.rag import render_prompt
from ragsec_core.traceback.baselines.base import MethodContext, MethodResult, Timer, carries_event, whole
from ragsec_core.traceback.baselines.lm import generate


class RobustRAG:
    name = "robustrag"

    def run(self, trace: Trace, ctx: MethodContext) -> MethodResult:
        timer = Timer(ctx)
        limit = int(trace.model.get("settings", {}).get("max_new_tokens", 32))
        answers = {
            i: generate(ctx, ctx.llm, render_prompt(ctx.llm, trace.query, [trace.hits[i].text]).prompt, limit)
            for i in trace.used
        }
        flagged = [i for i in trace.used if not is_abstention(answers[i]) and carries_event(answers[i], trace)]
        return timer.result(self.name, flagged, whole(trace, flagged),
                            details={"isolated": {trace.hits[i].chunk_id: a for i, a in answers.items()}})
