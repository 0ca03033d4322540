"""The core commands: `ask` (Pass-0), `traces list|show`, `trace` (Pass-1), `report`, `detector`.

Each command checks its cheap inputs first and imports the model stack only once they pass, so a typo
fails in milliseconds rather than after a model load.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ragsec_core._util.cancel import INTERRUPTS
from ragsec_core.cli.display import print_pass1, print_trace, visible
from ragsec_core.cli.options import check_model_args, check_retrieval_args, endpoint_config, open_store

if TYPE_CHECKING:
    from ragsec_core.data.corpus import Corpus
    from ragsec_core.data.trace import Trace
    from ragsec_core.models.endpoint import EndpointLLM
    from ragsec_core.models.llm import LLM
    from ragsec_core.rag import Pipeline


def cmd_ask(args: argparse.Namespace) -> int:
    from ragsec_core._util.inputs import check_query
    from ragsec_core.data.corpus import load_corpus
    from ragsec_core.data.trace import Labels

    query = check_query(args.query)
    check_retrieval_args(args)
    check_model_args(args)
    corpus = load_corpus(args.corpus, args.variant)
    from ragsec_core.models.llm import GenerationSettings

    pipeline = _pipeline(corpus, args)
    labels = Labels(None, list(args.answer), args.target) if (args.answer or args.target) else None
    settings = GenerationSettings(max_new_tokens=args.max_new_tokens)
    trace = pipeline.ask(query, k=args.k, alpha=args.alpha, use=args.use, labels=labels, settings=settings)
    INTERRUPTS.check()  # Ctrl-C during the run stores nothing, even if a library swallowed it
    if not args.no_store:
        open_store(args).append(trace)
    if args.json:
        print(json.dumps(trace.to_dict(), indent=2))  # ensure_ascii: valid JSON, no raw controls
    else:
        print_trace(trace)
    return 0


def _pipeline(corpus: Corpus, args: argparse.Namespace) -> Pipeline:
    """Model, embedder and index for `ask`, with a progress bar while chunks are embedded."""
    from ragsec_core.cli.corpora import progress_bar
    from ragsec_core.rag import Pipeline, build_retriever
    from ragsec_core.retrieval.embed import shared_embedder

    print("loading models ...", file=sys.stderr)
    # the process's one MiniLM (Pass-1's boundary reads it too); the index before the LLM: a store that is
    # down fails before the slow load
    embedder = shared_embedder()
    progress, close = progress_bar("indexing chunks", "chunk")  # reset for each phase: embedding, the upsert
    retriever = build_retriever(corpus, embedder, progress=progress, index=args.index, build_index=args.index_build)
    close()
    return Pipeline(corpus, retriever, _generator(args))


def _generator(args: argparse.Namespace, trace: Trace | None = None) -> LLM | EndpointLLM:
    """The endpoint the flags (or the trace) name, else the local model."""
    from ragsec_core.models.endpoint import EndpointLLM
    from ragsec_core.models.llm import load_llm

    config = endpoint_config(args, trace)
    return load_llm(args.model, args.quantize) if config is None else EndpointLLM(config)


def cmd_traces_list(args: argparse.Namespace) -> int:
    store = open_store(args)
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
    trace = open_store(args).get(args.trace_id)
    if args.json:
        print(json.dumps(trace.to_dict(), indent=2))  # ensure_ascii: valid JSON, no raw controls
    else:
        print_trace(trace)
    return 0


def cmd_trace(args: argparse.Namespace) -> int:
    from ragsec_core._util.paths import data_dir
    from ragsec_core.data.corpus import load_corpus
    from ragsec_core.data.trace import triggered
    from ragsec_core.traceback.artifact import Artifact, save_artifact
    from ragsec_core.traceback.snapshot import Snapshot
    from ragsec_core.traceback.untargeted import check_labels
    from ragsec_core.views.report import write_report

    check_model_args(args)
    trace = open_store(args).get(args.trace_id)
    check_labels(args.objective, trace.labels)  # before any model loads
    snapshot = Snapshot.from_corpus(load_corpus(args.snapshot)) if args.snapshot else None
    fires = triggered(trace, args.trigger)
    if not fires:
        print(f"trace {trace.trace_id}: trigger {args.trigger} does not fire; nothing to trace", file=sys.stderr)
    from ragsec_core.models.endpoint import EndpointLLM
    from ragsec_core.models.llm import load_llm
    from ragsec_core.traceback.ragcharacter import run_pass1

    llm = _generator(args, trace)
    same = (trace.model.get("endpoint") or {}).get("model") == llm.config.model if isinstance(llm, EndpointLLM) else False
    if llm.model_id != trace.model["id"] and not same:
        print(f"warning: trace was made with '{trace.model['id']}', replaying with '{llm.model_id}'", file=sys.stderr)
    # the boundary's readings need a local LM: an endpoint's trace is read by the local default model
    # (loaded only when Pass-1 will run: an untriggered trace reads nothing)
    reader = load_llm() if isinstance(llm, EndpointLLM) and fires else None
    result = run_pass1(llm, trace, args.trigger, args.objective, args.mask_mode, reader=reader, snapshot=snapshot)
    out = Path(args.out) if args.out else data_dir() / "artifacts" / f"{trace.trace_id}.pass1.json"
    artifact = Artifact(trace, result)
    save_artifact(out, artifact)
    if args.html:
        print(f"report: {write_report(args.html, artifact)}", file=sys.stderr)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print_pass1(result, trace)
    print(f"artifact: {out}", file=sys.stderr)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from ragsec_core.traceback.artifact import load_artifact
    from ragsec_core.views.report import write_report

    src = Path(args.artifact)
    out = Path(args.out) if args.out else src.with_suffix(".html")
    print(f"report: {write_report(out, load_artifact(src))}")
    return 0


def cmd_detector(args: argparse.Namespace) -> int:
    """The D-SCAN detector file's settings and its own evaluation figures (no model is loaded)."""
    from ragsec_core.dscan.detector import Detector
    from ragsec_core.views.attention import detector_help, detector_table

    det = Detector.load(args.path)
    print(detector_table(det) if args.markdown else detector_help(det))
    return 0


def cmd_attention(args: argparse.Namespace) -> int:
    """D-SCAN on a stored trace: P(poisoned), the document attention entropy and the implicated document.
    White-box: it always runs on a local model, which for an endpoint's or an imported trace is a surrogate
    reading the same prompt and answer (and says so)."""
    from ragsec_core.dscan.detector import Detector, analyse_trace
    from ragsec_core.models.llm import load_llm
    from ragsec_core.retrieval.embed import Embedder

    check_model_args(args)
    trace = open_store(args).get(args.trace_id)
    detector = Detector.load(args.detector)
    result = analyse_trace(trace, load_llm(args.model, args.quantize), detector=detector, embedder=Embedder(),
                           n_samples=args.samples)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
        return 0
    if result.surrogate:
        print(f"surrogate: attention of {result.surrogate}, not of the model that answered ({visible(trace.model.get('id', '?'))})")
    verdict = "poisoned" if result.poisoned else "not flagged"
    print(f"P(poisoned) {result.probability:.3f} ({verdict} at threshold {detector.threshold:.3f})")
    print(f"document attention entropy {result.features.get('doc_entropy', float('nan')):.3f}")
    for i, d in enumerate(result.documents):
        mark = "  <- implicated" if i == result.implicated else ""
        print(f"  {visible(d.chunk_id or '?', 60):<60} weight {d.weight:.3f}  density {d.density:.4f}{mark}")
    return 0
