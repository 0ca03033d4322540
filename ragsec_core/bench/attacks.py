"""Attack files of other groups' poisoning attacks (PoisonedRAG's object format, Stealthy-Attacks' list
format with context passages, a list with `incorrect_answer` / `answer`, or RAGDefender's artifacts), read
into one record type that every benchmark plants from."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragsec_core._util.errors import RagsecError
from ragsec_core.data.corpus import read_json

# RAGDefender's artifact rows (blind_*.json, garag_*.json); their labels live in target_queries_*.json beside them
RAGDEFENDER_KEYS = ("query", "ground_truth", "adversarial_document")
RAGDEFENDER_FORMS = ("blind", "garag")  # the attack forms that read RAGDefender's files, and only them


@dataclass(frozen=True)
class AttackRecord:
    id: str
    question: str
    adv_texts: tuple[str, ...]
    incorrect: str
    answers: tuple[str, ...]
    context: tuple[tuple[str, str], ...]  # (title, text) clean passages shipped with the record
    # per adversarial text, the clean passage it was written from (RAGDefender's `ground_truth`): a GARAG copy
    # replaces it in the corpus; empty for files that do not say
    adv_hosts: tuple[str, ...] = ()


def load_attack(path: Path, form: str | None = None) -> list[AttackRecord]:
    """PoisonedRAG object format, Stealthy list format, a list with `incorrect_answer` / `answer`, or
    RAGDefender's rows (detected by their keys). `form` is the attack form the records are for: the
    RAGDefender forms refuse any other file, since their planting needs the clean passage of each text."""
    data = read_json(path, "attack data")
    if is_ragdefender(data):
        return load_ragdefender(path, data)
    if form in RAGDEFENDER_FORMS:
        raise RagsecError(f"--attack-form {form} reads RAGDefender's files (a list of {{query, ground_truth, "
                          f"adversarial_document}}, e.g. {form}_nq.json): '{path}' is not one")
    rows = list(data.values()) if isinstance(data, dict) else data
    out = []
    for i, r in enumerate(rows if isinstance(rows, list) else []):
        if not isinstance(r, dict) or "question" not in r or "adv_texts" not in r:
            raise RagsecError(f"'{path}': record {i} lacks 'question' / 'adv_texts'")
        advs = tuple(a["context"] if isinstance(a, dict) else str(a) for a in r["adv_texts"])
        ctx = tuple((str(c.get("title", "")), str(c.get("text", ""))) for c in r.get("context", []) or [])
        out.append(AttackRecord(str(r.get("id", i)), r["question"], advs, _incorrect(r), _answers(r), ctx))
    if not out:
        raise RagsecError(f"'{path}' holds no attack records")
    return out


def _answers(r: dict[str, Any]) -> tuple[str, ...]:
    correct = r.get("correct answer", r.get("answer", []))
    return tuple(str(a) for a in (correct if isinstance(correct, list) else [correct]))


def _incorrect(r: dict[str, Any]) -> str:
    return str(r.get("incorrect answer", r.get("incorrect_answer", "")))


def is_ragdefender(data: object) -> bool:
    """A list whose first row has RAGDefender's keys (every row is checked when read)."""
    return isinstance(data, list) and bool(data) and isinstance(data[0], dict) and set(RAGDEFENDER_KEYS) <= set(data[0])


def labels_path(path: Path) -> Path:
    """RAGDefender keeps one labels file per dataset: blind_nq.json and garag_nq.json -> target_queries_nq.json."""
    return path.with_name(f"target_queries_{path.stem.split('_', 1)[-1]}.json")


def load_ragdefender(path: Path, rows: list[Any]) -> list[AttackRecord]:
    """One record per query (in file order) with its adversarial documents, each paired with the clean
    passage it came from (`adv_hosts`); the clean passages are the record's context, so without --corpus
    the clean corpus is RAGDefender's ground-truth passages. The artifacts carry no answers: id, correct and
    incorrect answer are joined from the labels file by question text."""
    lpath = labels_path(path)
    if not lpath.is_file():
        raise RagsecError(f"'{path}' is in RAGDefender's format, whose labels are in '{lpath.name}' beside it: "
                          f"'{lpath}' is missing")
    labels = read_json(lpath, "RAGDefender labels")
    by_question = {str(r["question"]).strip(): r for r in labels if isinstance(r, dict) and "question" in r} \
        if isinstance(labels, list) else {}
    grouped: dict[str, list[tuple[str, str]]] = {}
    for i, r in enumerate(rows):
        if not isinstance(r, dict) or not all(isinstance(r.get(k), str) for k in RAGDEFENDER_KEYS):
            raise RagsecError(f"'{path}': row {i} lacks one of {', '.join(RAGDEFENDER_KEYS)} (strings)")
        grouped.setdefault(r["query"].strip(), []).append((r["adversarial_document"], r["ground_truth"]))
    out = []
    for question, pairs in grouped.items():
        label = by_question.get(question)
        if label is None:
            raise RagsecError(f"'{path}': the query {question!r} has no record in '{lpath}' (no answers to label it)")
        hosts = tuple(gt for _, gt in pairs)
        ctx = tuple(("", gt) for gt in dict.fromkeys(hosts))
        out.append(AttackRecord(str(label.get("id", question)), question, tuple(a for a, _ in pairs),
                                _incorrect(label), _answers(label), ctx, hosts))
    return out
