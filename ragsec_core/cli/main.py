"""`ragsec` command line: a thin view over ragsec_core.

Every user mistake is one line on stderr and exit code 2; corpus and model text is printed with
control characters made visible, because it is attacker-controlled and could drive the terminal.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from ragsec_core._util.errors import RagsecError

EXIT_USAGE = 2
# Each benchmark module exposes `register(subparsers)`, adding `ragsec bench NAME`; it must import
# heavy dependencies (torch, models) inside its command function, not at module level.
BENCH_MODULES = ("ragsec_core.bench.traceback", "ragsec_core.bench.dscan", "ragsec_core.bench.chameleon", "ragsec_core.bench.speed")
# The bench modules exist in this tree; the import is lazy only to keep `ragsec --help` fast.


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except RagsecError as exc:
        print(f"ragsec: error: {visible(str(exc))}", file=sys.stderr)  # messages may quote file/trace text
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("ragsec: interrupted", file=sys.stderr)
        return 130


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ragsec", description="Forensic workbench for poisoned RAG.")
    sub = p.add_subparsers(dest="command", required=True)

    ask = sub.add_parser("ask", help="run RAG on a query and log a Pass-0 trace")
    ask.add_argument("query")
    ask.add_argument("--corpus", default=None, help="sample corpus name, folder, .jsonl, .csv or attack .json")
    ask.add_argument("--variant", default=None, help="poisoned variant of a sample corpus (e.g. false_facts)")
    ask.add_argument("--alpha", type=float, default=0.5, help="hybrid weight of dense scores, in [0, 1]")
    ask.add_argument("--k", type=int, default=5, help="number of retrieved chunks")
    ask.add_argument("--use", type=int, default=None, help="chunks placed in the prompt (default: k)")
    ask.add_argument("--answer", action="append", default=[], help="known correct answer (repeatable)")
    ask.add_argument("--target", default=None, help="known attacker target answer")
    _model_args(ask)
    _store_arg(ask)
    ask.add_argument("--no-store", action="store_true", help="do not append the trace to the store")
    ask.add_argument("--json", action="store_true", help="print the full trace as JSON")
    ask.set_defaults(func=cmd_ask)

    traces = sub.add_parser("traces", help="list or show stored traces")
    tsub = traces.add_subparsers(dest="action", required=True)
    tl = tsub.add_parser("list")
    _store_arg(tl)
    tl.add_argument("--json", action="store_true")
    tl.set_defaults(func=cmd_traces_list)
    ts = tsub.add_parser("show")
    ts.add_argument("trace_id")
    _store_arg(ts)
    ts.add_argument("--json", action="store_true")
    ts.set_defaults(func=cmd_traces_show)

    tr = sub.add_parser("trace", help="Pass-1: trace a stored answer back to the characters that caused it")
    tr.add_argument("trace_id")
    tr.add_argument("--trigger", default="PAR", choices=["PAR", "T_ASR", "CONFUSION", "ANY", "ALWAYS"])
    tr.add_argument("--objective", default="event", choices=["event", "oracle"])
    tr.add_argument("--mask-mode", default="delete", choices=["delete", "placeholder"])
    tr.add_argument("--out", default=None, help="artifact path (default: <data dir>/artifacts/ID.pass1.json)")
    _model_args(tr)
    _store_arg(tr)
    tr.add_argument("--json", action="store_true", help="print the whole artifact as JSON")
    tr.add_argument("--html", default=None, help="also write a self-contained HTML report here")
    tr.set_defaults(func=cmd_trace)

    rp = sub.add_parser("report", help="write the self-contained HTML report of a Pass-1 artifact")
    rp.add_argument("artifact", help="artifact JSON written by `ragsec trace`")
    rp.add_argument("--out", default=None, help="report path (default: next to the artifact, .html)")
    rp.set_defaults(func=cmd_report)

    importlib.import_module("ragsec_core.bench.chameleon").register_monitor(sub)

    corpora = sub.add_parser("corpora", help="list the sample corpora and their poisoned variants")
    corpora.set_defaults(func=cmd_corpora)

    bench = sub.add_parser("bench", help="benchmarks on real attack data")
    bench_sub = bench.add_subparsers(dest="bench", required=True)
    for module in BENCH_MODULES:
        importlib.import_module(module).register(bench_sub)
    return p


def _model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default=None, help="local HF model folder or .gguf file (default: SmolLM2)")
    p.add_argument("--quantize", default="none", choices=["none", "4bit", "8bit"])
    p.add_argument("--max-new-tokens", type=int, default=32)


def _store_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", default=None, help="trace store JSONL (default: user data folder)")


def _store(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from ragsec_core._util.paths import default_trace_store
    from ragsec_core.data.trace import TraceStore

    return TraceStore(Path(args.store) if args.store else default_trace_store())


# ---------------------------------------------------------------- commands

def cmd_ask(args: argparse.Namespace) -> int:
    from ragsec_core.data.corpus import load_corpus
    from ragsec_core._util.inputs import check_params, check_query
    from ragsec_core.data.trace import Labels

    # Cheap checks first, so a typo fails in milliseconds rather than after a model load.
    query = check_query(args.query)
    check_params(args.k, args.alpha)
    if args.use is not None and args.use < 1:
        raise RagsecError(f"--use must be >= 1 (got {args.use})")
    if args.max_new_tokens < 1:
        raise RagsecError(f"--max-new-tokens must be >= 1 (got {args.max_new_tokens})")
    if args.model and not Path(args.model).expanduser().exists():
        raise RagsecError(f"model path not found: '{args.model}'")
    corpus = load_corpus(args.corpus, args.variant)
    from ragsec_core.models.llm import GenerationSettings

    pipeline = _pipeline(corpus, args)
    labels = Labels(None, list(args.answer), args.target) if (args.answer or args.target) else None
    settings = GenerationSettings(max_new_tokens=args.max_new_tokens)
    trace = pipeline.ask(query, k=args.k, alpha=args.alpha, use=args.use, labels=labels, settings=settings)
    if not args.no_store:
        _store(args).append(trace)
    if args.json:
        print(json.dumps(trace.to_dict(), indent=2))  # ensure_ascii: valid JSON, no raw controls
    else:
        print_trace(trace)
    return 0


def _pipeline(corpus, args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from tqdm import tqdm

    from ragsec_core.retrieval.embed import Embedder
    from ragsec_core.models.llm import load_llm
    from ragsec_core.rag import Pipeline, build_retriever

    print("loading models ...", file=sys.stderr)
    llm = load_llm(args.model, args.quantize)
    embedder = Embedder()
    bar = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, desc="embedding chunks", unit="chunk", file=sys.stderr)
        bar.update(done - bar.n)

    retriever = build_retriever(corpus, embedder, progress=progress)
    if bar is not None:
        bar.close()
    return Pipeline(corpus, retriever, llm)


def cmd_traces_list(args: argparse.Namespace) -> int:
    store = _store(args)
    rows = [
        {
            "trace_id": r.get("trace_id"),
            "created_at": r.get("created_at"),
            "query": r.get("query"),
            "answer": r.get("answer"),
            "par": (r.get("signals") or {}).get("par"),
        }
        for r in store.records()
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
    elif not rows:
        print(f"no traces in {store.path}")
    for r in rows if not args.json else []:
        flag = "PAR" if r["par"] else "   "
        print(f"{r['trace_id']}  {flag}  {visible(r['query'], 60)}  ->  {visible(r['answer'], 40)}")
    if store.skipped:
        print(f"warning: skipped {store.skipped} unreadable line(s) in {store.path}", file=sys.stderr)
    return 0


def cmd_traces_show(args: argparse.Namespace) -> int:
    trace = _store(args).get(args.trace_id)
    if args.json:
        print(json.dumps(trace.to_dict(), indent=2))  # ensure_ascii: valid JSON, no raw controls
    else:
        print_trace(trace)
    return 0


def cmd_trace(args: argparse.Namespace) -> int:
    from ragsec_core.traceback.artifact import Artifact, save_artifact
    from ragsec_core._util.paths import data_dir
    from ragsec_core.views.report import write_report
    from ragsec_core.data.trace import triggered

    trace = _store(args).get(args.trace_id)
    if not triggered(trace, args.trigger):
        print(f"trace {trace.trace_id}: trigger {args.trigger} does not fire; nothing to trace", file=sys.stderr)
    from ragsec_core.models.llm import load_llm
    from ragsec_core.traceback.ragcharacter import run_pass1

    llm = load_llm(args.model, args.quantize)
    if llm.model_id != trace.model["id"]:
        print(f"warning: trace was made with '{trace.model['id']}', replaying with '{llm.model_id}'", file=sys.stderr)
    result = run_pass1(llm, trace, args.trigger, args.objective, args.mask_mode)
    out = Path(args.out) if args.out else data_dir() / "artifacts" / f"{trace.trace_id}.pass1.json"
    artifact = Artifact(trace, result)
    save_artifact(out, artifact)
    if args.html:
        print(f"report: {write_report(args.html, artifact)}", file=sys.stderr)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print_pass1(result)
    print(f"artifact: {out}", file=sys.stderr)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from ragsec_core.traceback.artifact import load_artifact
    from ragsec_core.views.report import write_report

    src = Path(args.artifact)
    out = Path(args.out) if args.out else src.with_suffix(".html")
    print(f"report: {write_report(out, load_artifact(src))}")
    return 0


def cmd_corpora(args: argparse.Namespace) -> int:
    from ragsec_core.data.corpus import sample_corpus_names, variant_names

    for name in sample_corpus_names():
        print(f"{visible(name)}: variants {', '.join(visible(v) for v in variant_names(name)) or '-'}")
    return 0


# ---------------------------------------------------------------- output

def visible(text: str | None, limit: int | None = None) -> str:
    """Printable form of untrusted text: control and format characters become \\x/\\u escapes."""
    from ragsec_core._util.text import escape_controls

    t = escape_controls(text or "")
    return t if limit is None or len(t) <= limit else t[: limit - 1] + "…"


def print_trace(trace) -> None:  # type: ignore[no-untyped-def]
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


def print_pass1(res) -> None:  # type: ignore[no-untyped-def]
    print(f"Trace {res.trace_id}: trigger {res.trigger} {'fired' if res.triggered else 'did not fire'}")
    print(f"Original answer:  {visible(res.original_answer)}")
    for r in res.rounds:
        print(f"Round {r.index + 1} ({r.path}):")
        for kind, spans in (("attribution", r.attribution), ("causal", r.causal)):
            for a in spans:
                print(f"  {kind:<12} {visible(a.chunk_id)} chars [{a.local[0]}, {a.local[1]}) prompt [{a.prompt[0]}, {a.prompt[1]}): {visible(a.text)!r}")
        print(f"  answer with the mask: {visible(r.answer_after)}")
    print(f"Sanitised answer: {visible(res.final_answer)}  ({'event gone' if res.resolved else 'event persists'})")
    print(f"Cost: {res.model_calls} model calls, {res.forward_pass_equivalents} forward-pass equivalents, {res.ms / 1000:.1f} s")


if __name__ == "__main__":
    raise SystemExit(main())
