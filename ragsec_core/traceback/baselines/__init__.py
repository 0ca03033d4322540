"""Traceback baselines of RAGCharacter §5.1 (PPL, RAGForensics, RAGOrigin, RobustRAG and the -Char
hybrids) and our Pass-1, all behind one interface: `get(name).run(trace, ctx) -> MethodResult`."""

from __future__ import annotations

from ragsec_core._util.errors import RagsecError
from ragsec_core.traceback.baselines.base import Method, MethodContext, MethodResult
from ragsec_core.traceback.baselines.evidence import RAGForensicsChar, RAGOriginChar
from ragsec_core.traceback.baselines.ppl import PPL, calibrate
from ragsec_core.traceback.baselines.ppl_char import PPLChar
from ragsec_core.traceback.baselines.ragcharacter import RAGCharacter
from ragsec_core.traceback.baselines.ragforensics import RAGForensics
from ragsec_core.traceback.baselines.ragorigin import RAGOrigin
from ragsec_core.traceback.baselines.robustrag import RobustRAG

METHODS: dict[str, type] = {
    m.name: m
    for m in (RAGCharacter, PPL, RAGForensics, RAGOrigin, RobustRAG, PPLChar, RAGForensicsChar, RAGOriginChar)
}

__all__ = ["METHODS", "Method", "MethodContext", "MethodResult", "calibrate", "get", "parse_methods"]


def get(name: str) -> Method:
    try:
        return METHODS[name]()  # type: ignore[no-any-return]
    except KeyError:
        raise RagsecError(f"unknown method '{name}' (choose from {', '.join(METHODS)})") from None


def parse_methods(spec: str) -> list[str]:
    """A comma-separated method list, validated and de-duplicated in order."""
    names = list(dict.fromkeys(n.strip().lower() for n in spec.split(",") if n.strip()))
    if not names:
        raise RagsecError("--methods is empty")
    for n in names:
        get(n)
    return names
