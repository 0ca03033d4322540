"""Attack files of other groups' poisoning attacks (PoisonedRAG's object format, Stealthy-Attacks' list
format with context passages, or a list with `incorrect_answer` / `answer`), read into one record type
that every benchmark plants from."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ragsec_core._util.errors import RagsecError
from ragsec_core.data.corpus import read_json


@dataclass(frozen=True)
class AttackRecord:
    id: str
    question: str
    adv_texts: tuple[str, ...]
    incorrect: str
    answers: tuple[str, ...]
    context: tuple[tuple[str, str], ...]  # (title, text) clean passages shipped with the record


def load_attack(path: Path) -> list[AttackRecord]:
    """PoisonedRAG object format, Stealthy list format, or a list with `incorrect_answer` / `answer`."""
    data = read_json(path, "attack data")
    rows = list(data.values()) if isinstance(data, dict) else data
    out = []
    for i, r in enumerate(rows if isinstance(rows, list) else []):
        if not isinstance(r, dict) or "question" not in r or "adv_texts" not in r:
            raise RagsecError(f"'{path}': record {i} lacks 'question' / 'adv_texts'")
        advs = tuple(a["context"] if isinstance(a, dict) else str(a) for a in r["adv_texts"])
        correct = r.get("correct answer", r.get("answer", []))
        answers = tuple(str(a) for a in (correct if isinstance(correct, list) else [correct]))
        incorrect = str(r.get("incorrect answer", r.get("incorrect_answer", "")))
        ctx = tuple((str(c.get("title", "")), str(c.get("text", ""))) for c in r.get("context", []) or [])
        out.append(AttackRecord(str(r.get("id", i)), r["question"], advs, incorrect, answers, ctx))
    if not out:
        raise RagsecError(f"'{path}' holds no attack records")
    return out
