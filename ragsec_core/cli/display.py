"""Terminal output of traces and Pass-1 results. Every string from a corpus, a log or a model is
attacker-controlled and could drive the terminal, so it is printed through `visible`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragsec_core._util.text import escape_controls

if TYPE_CHECKING:
    from ragsec_core.data.trace import Trace
    from ragsec_core.traceback.result import TracebackResult


def visible(text: str | None, limit: int | None = None) -> str:
    """Printable form of untrusted text: control and format characters become \\x/\\u escapes."""
    t = escape_controls(text or "")
    return t if limit is None or len(t) <= limit else t[: limit - 1] + "…"


def print_trace(trace: Trace) -> None:
    s = trace.signals
    print(f"Answer:  {visible(trace.answer)}")
    print(f"Trace:   {trace.trace_id}")
    flags = {"PAR": s.par, "T_ASR": s.t_asr, "CONFUSION": s.confusion, "UNK": s.abstained, "correct": s.correct}
    print("Signals: " + "  ".join(f"{k}={'-' if v is None else ('yes' if v else 'no')}" for k, v in flags.items()))
    print(f"Hits (alpha={trace.retrieval['alpha']}, k={trace.retrieval['k']}):")
    used = set(trace.used)
    for i, h in enumerate(trace.hits):
        mark = "*" if i in used else " "
        print(
            f" {mark}#{h.rank} {visible(h.chunk_id)}  hybrid={h.hybrid:.3f}  bm25={h.bm25:.2f}  "
            f"dense={h.dense:.3f}  {visible(h.text, 90)}"
        )
    print(" (* = placed in the prompt)")


def print_pass1(res: TracebackResult, trace: Trace) -> None:
    from ragsec_core.traceback.artifact import access_line, boundary_line, caveat_line, cost_line
    from ragsec_core.traceback.boundary import REASONS

    print(f"Trace {res.trace_id}: trigger {res.trigger} {'fired' if res.triggered else 'did not fire'}")
    print(f"Original answer:  {visible(res.original_answer)}")
    for r in res.rounds:
        print(f"Round {r.index + 1} ({r.path}):")
        for kind, spans in (("attribution", r.attribution), ("causal", r.causal)):
            for a in spans:
                back = "" if a.replacement is None else f" -> snapshot: {visible(a.replacement)!r}"
                print(f"  {kind:<12} {visible(a.chunk_id)} chars [{a.local[0]}, {a.local[1]}) "
                      f"prompt [{a.prompt[0]}, {a.prompt[1]}): {visible(a.text)!r}{back}")
                if a.reason in REASONS:
                    print(f"  {'':<12} reported by {REASONS[a.reason]}")
        print(f"  answer with the mask: {visible(r.answer_after)}")
    print(f"Sanitised answer: {visible(res.final_answer)}  ({'event gone' if res.resolved else 'event persists'})")
    print(f"Replayed on: {access_line(res)}")
    if res.snapshot:
        print(f"Trusted snapshot: {visible(res.snapshot)}")
    print(f"Boundary: {boundary_line(res)}")
    print(f"Cost: {cost_line(res)}")
    caveat = caveat_line(trace, res)
    if caveat:
        print(f"Caveat: {visible(caveat)}")
