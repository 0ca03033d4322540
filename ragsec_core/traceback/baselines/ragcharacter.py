"""Our RAGCharacter Pass-1 behind the common method interface (the attribution spans are what is scored)."""

from __future__ import annotations

from ragsec_core.data.trace import Trace
from ragsec_core.traceback.baselines.base import MethodContext, MethodResult, Timer


class RAGCharacter:
    name = "ragcharacter"

    def run(self, trace: Trace, ctx: MethodContext) -> MethodResult:
        timer = Timer(ctx)
        res, cost = ctx.pass1(trace)
        spans = [(r.hit, (r.local[0], r.local[1])) for r in res.attribution]
        return timer.result(
            self.name, [r.hit for r in res.attribution], spans, extra=cost, fpe=res.forward_pass_equivalents,
            details={"resolved": res.resolved, "fpe": res.forward_pass_equivalents,
                     "rounds": len(res.rounds), "paths": [r.path for r in res.rounds]},
        )
