"""`ragsec` command line: a thin view over ragsec_core.

Every user mistake is one line on stderr and exit code 2; corpus and model text is printed with
control characters made visible, because it is attacker-controlled and could drive the terminal.
Building the parser imports no model code (choices come from the core's light option modules), so
`ragsec --help` and input errors answer at once.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ragsec_core._util.cancel import INTERRUPTS
from ragsec_core._util.errors import RagsecError
from ragsec_core.cli import commands
from ragsec_core.cli.bench import add_bench_parsers
from ragsec_core.cli.corpora import add_corpora_parser
from ragsec_core.cli.display import visible
from ragsec_core.cli.imports import add_import_parser
from ragsec_core.cli.monitor import add_monitor_parser
from ragsec_core.cli.options import add_corpus_args, add_model_args, add_retrieval_args, add_store_arg
from ragsec_core.data.spans import DEFAULT_MASK_MODE, MASK_MODES
from ragsec_core.data.trace import DEFAULT_TRIGGER, TRIGGERS
from ragsec_core.models.options import DEFAULT_QUANTIZE, QUANTIZE_CHOICES
from ragsec_core.traceback.options import DEFAULT_OBJECTIVE, OBJECTIVES

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    INTERRUPTS.install()
    try:
        code = int(args.func(args) or 0)
        INTERRUPTS.check()  # a Ctrl-C that a library swallowed still ends the run as interrupted
        return code
    except RagsecError as exc:
        print(f"ragsec: error: {visible(str(exc))}", file=sys.stderr)  # messages may quote file/trace text
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("ragsec: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        INTERRUPTS.uninstall()


def run() -> None:
    """The `ragsec` command: `main`, then an interrupted run ends at once, without interpreter shutdown."""
    code = main()
    if code == EXIT_INTERRUPTED:
        INTERRUPTS.exit_now(code)
    raise SystemExit(code)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ragsec", description="Forensic workbench for poisoned RAG.")
    sub = p.add_subparsers(dest="command", required=True)
    _ask(sub)
    _traces(sub)
    _trace(sub)
    rp = sub.add_parser("report", help="write the self-contained HTML report of a Pass-1 artifact")
    rp.add_argument("artifact", help="artifact JSON written by `ragsec trace`")
    rp.add_argument("--out", default=None, help="report path (default: next to the artifact, .html)")
    rp.set_defaults(func=commands.cmd_report)
    ap = sub.add_parser("attention", help="D-SCAN on a stored trace (on a local surrogate for an endpoint's or imported trace)")
    ap.add_argument("trace_id")
    ap.add_argument("--detector", default=None, help="detector JSON (default: the shipped one)")
    ap.add_argument("--samples", type=int, default=None, help="sampled generations (default: the detector's N)")
    ap.add_argument("--model", default=None, help="local HF model folder or .gguf file (default: SmolLM2)")
    ap.add_argument("--quantize", default=DEFAULT_QUANTIZE, choices=QUANTIZE_CHOICES)
    add_store_arg(ap)
    ap.add_argument("--json", action="store_true")
    ap.set_defaults(func=commands.cmd_attention)
    dp = sub.add_parser("detector", help="the D-SCAN detector's settings and its own evaluation figures")
    dp.add_argument("path", nargs="?", default=None, help="detector JSON (default: the shipped one)")
    dp.add_argument("--markdown", action="store_true", help="the evaluation as the markdown table the docs show")
    dp.set_defaults(func=commands.cmd_detector)
    add_monitor_parser(sub)
    add_corpora_parser(sub)
    add_import_parser(sub)
    bench = sub.add_parser("bench", help="benchmarks on real attack data")
    add_bench_parsers(bench.add_subparsers(dest="bench", required=True))
    return p


def _ask(sub: argparse._SubParsersAction) -> None:
    ask = sub.add_parser("ask", help="run RAG on a query and log a Pass-0 trace")
    ask.add_argument("query")
    add_corpus_args(ask)
    add_retrieval_args(ask, use=True)
    ask.add_argument("--answer", action="append", default=[], help="known correct answer (repeatable)")
    ask.add_argument("--target", default=None, help="known attacker target answer")
    add_model_args(ask)
    add_store_arg(ask)
    ask.add_argument("--no-store", action="store_true", help="do not append the trace to the store")
    ask.add_argument("--json", action="store_true", help="print the full trace as JSON")
    ask.set_defaults(func=commands.cmd_ask)


def _traces(sub: argparse._SubParsersAction) -> None:
    traces = sub.add_parser("traces", help="list or show stored traces")
    tsub = traces.add_subparsers(dest="action", required=True)
    tl = tsub.add_parser("list")
    add_store_arg(tl)
    tl.add_argument("--json", action="store_true")
    tl.set_defaults(func=commands.cmd_traces_list)
    ts = tsub.add_parser("show")
    ts.add_argument("trace_id")
    add_store_arg(ts)
    ts.add_argument("--json", action="store_true")
    ts.set_defaults(func=commands.cmd_traces_show)


def _trace(sub: argparse._SubParsersAction) -> None:
    tr = sub.add_parser("trace", help="Pass-1: trace a stored answer back to the characters that caused it")
    tr.add_argument("trace_id")
    tr.add_argument("--trigger", default=DEFAULT_TRIGGER, choices=list(TRIGGERS))
    tr.add_argument("--objective", default=DEFAULT_OBJECTIVE, choices=OBJECTIVES)
    tr.add_argument("--mask-mode", default=DEFAULT_MASK_MODE, choices=MASK_MODES)
    tr.add_argument("--snapshot", default=None, metavar="CORPUS",
                    help="a trusted copy of the corpus from before the incident (a corpus file or folder, or a sample "
                         "corpus name): each round first reverts the used chunks' changes since it")
    tr.add_argument("--out", default=None, help="artifact path (default: <data dir>/artifacts/ID.pass1.json)")
    add_model_args(tr)
    add_store_arg(tr)
    tr.add_argument("--json", action="store_true", help="print the whole artifact as JSON")
    tr.add_argument("--html", default=None, help="also write a self-contained HTML report here")
    tr.set_defaults(func=commands.cmd_trace)


if __name__ == "__main__":
    run()
