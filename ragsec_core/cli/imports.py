"""`ragsec import FILE`: a RAG interaction logged by a deployment (an incident JSON, or OpenInference spans)
becomes a stored Pass-0 trace, which `ragsec trace ID` then traces back like one of ragsec's own."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ragsec_core.cli.display import visible
from ragsec_core.cli.options import add_store_arg, open_store
from ragsec_core.data.incident import IMPORT_FORMATS


def add_import_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("import", help="store a deployment's logged RAG interaction as a Pass-0 trace")
    p.add_argument("file", help="incident JSON (docs/import.md) or an OpenTelemetry span file with OpenInference attributes")
    p.add_argument("--format", default=None, choices=IMPORT_FORMATS, help="default: detected from the content")
    p.add_argument("--select", default=None, metavar="ID",
                   help="the interaction to import from a span file that holds several: a trace id, an LLM span id "
                        "or TRACE/SPAN")
    p.add_argument("--target", default=None, help="the false answer the incident is about (labels PAR; replaces the file's labels)")
    p.add_argument("--answer", action="append", default=[], help="a known correct answer (repeatable)")
    add_store_arg(p)
    p.add_argument("--json", action="store_true", help="print the whole trace as JSON")
    p.set_defaults(func=cmd_import)


def cmd_import(args: argparse.Namespace) -> int:
    from ragsec_core.data.openinference import import_trace
    from ragsec_core.data.trace import Labels

    labels = Labels(None, list(args.answer), args.target) if (args.target or args.answer) else None
    trace = import_trace(args.file, args.format, args.select, labels)
    store = open_store(args)
    store.append(trace)
    if args.json:
        print(json.dumps(trace.to_dict(), indent=2))  # ensure_ascii: valid JSON, no raw controls
        return 0
    o, s = trace.origin, trace.signals
    flags = ", ".join(f for f, on in (("PAR", s.par), ("T_ASR", s.t_asr), ("CONFUSION", s.confusion), ("UNK", s.abstained)) if on)
    where = "chat message" if trace.prompt_message is not None else "prompt"
    print(trace.trace_id)
    print(f"imported {o['format']} '{visible(o['file'], 60)}': {len(trace.hits)} passages ({len(trace.used)} anchored in the "
          f"{where}{', whitespace-normalised' if o['normalised'] else ''}), model {visible(trace.model['id'], 40)}, "
          f"answer {visible(trace.answer, 60)!r}, signals: {flags or 'none'}")
    print(f"stored in {store.path}", file=sys.stderr)
    return 0
