"""Balanced clean/poisoned passage lists for D-SCAN and two controls, from Stealthy-Attacks records.

Pairs (D-SCAN paper §4): per question, clean = its first 5 retrieved benign passages; poisoned = the
same 5 with 2 of them, at seeded random positions, replaced by 2 of the question's PoisonedRAG
adversarial texts in black-box form (`question. adv_text`, as `data.corpus` loads them).

Controls, for what else could separate a pair. Length: the poisoned passages are shorter than the benign
ones they replace, so prompt length alone separates the pairs; `clean_lm` cuts (at a word boundary) or
extends (with the question's own spare retrieved passages, none used twice) the two benign passages at
the poisoned positions to the poisoned passages' token counts. Question overlap: every black-box poison
begins with the question, which may draw attention by itself; `clean_qm` also begins those two benign
passages with the question. The other three passages and all positions are identical. And the other
way round: `poisoned_text` plants the same two adversarial texts without the question in front (the
`text` attack form), a poison that does not restate the question.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.text import black_box_text
from ragsec_core.data.corpus import read_json

N_DOCS, N_POISON = 5, 2
# Every prompt kind a pair can yield, and which are poisoned (label 1).
CONDITIONS = ("clean", "clean_lm", "clean_qm", "poisoned", "poisoned_text")
POISONED = frozenset({"poisoned", "poisoned_text"})
# The evaluation pairs: name -> (clean condition, poisoned condition). `--train-controls` trains on all
# conditions and reports the out-of-fold AUC of each pair.
CONTROL_PAIRS = {
    "plain": ("clean", "poisoned"),
    "length_matched": ("clean_lm", "poisoned"),
    "question_matched": ("clean_qm", "poisoned"),
    "text": ("clean", "poisoned_text"),
    "text_question_matched": ("clean_qm", "poisoned_text"),
}


def load_records(path: Path) -> list[dict[str, Any]]:
    data = read_json(path, "attack data")
    recs = list(data.values()) if isinstance(data, dict) else data
    good = [
        r for r in recs
        if isinstance(r, dict) and r.get("question") and len(r.get("context") or []) >= N_DOCS
        and len(r.get("adv_texts") or []) >= N_POISON
    ]
    if not good:
        raise RagsecError(f"'{path}': no records with 'question', >= {N_DOCS} 'context' passages and "
                          f">= {N_POISON} 'adv_texts' (Stealthy-Attacks format, e.g. stealthy/wiki_open_nq.json)")
    return good


def build_pair(rec: dict[str, Any], seed: int, count: Callable[[str], int] = len) -> dict[str, Any]:
    """Clean, poisoned and length-matched clean passage lists for one question (seeded per question id).

    The controls draw nothing from the random generator, so `clean`, `poisoned` and `positions` are the
    same with or without them and cached poisoned rows are reusable: `clean_lm` (length-matched) cuts or
    extends the benign passages at the poisoned positions to the poisoned passages' lengths; `clean_qm`
    (question-matched) also starts them with the question, as the black-box poisons start, so question
    overlap is on both sides and only the planted claim differs.
    `count` measures length (characters by default; the bench passes the model's token count).
    """
    rng = random.Random(f"{seed}:{rec.get('id')}")
    clean = [str(c.get("text", "")) for c in rec["context"][:N_DOCS]]
    positions = sorted(rng.sample(range(N_DOCS), N_POISON))
    advs = rng.sample(list(rec["adv_texts"]), N_POISON)
    poisoned, poisoned_text = list(clean), list(clean)
    for pos, adv in zip(positions, advs):
        poisoned[pos] = black_box_text(rec["question"], adv)
        poisoned_text[pos] = adv
    spare = [str(c.get("text", "")) for c in rec["context"][N_DOCS:]]
    spare_qm = list(spare)
    clean_lm, clean_qm = list(clean), list(clean)
    for pos in positions:
        clean_lm[pos] = match_length(clean[pos], count(poisoned[pos]), spare, count)
        clean_qm[pos] = match_length(black_box_text(rec["question"], clean[pos]), count(poisoned[pos]), spare_qm, count)
    return {"clean": clean, "poisoned": poisoned, "poisoned_text": poisoned_text, "positions": positions,
            "clean_lm": clean_lm, "clean_qm": clean_qm}


def match_length(text: str, target: int, spare: list[str], count: Callable[[str], int] = len) -> str:
    """`text` cut at a word boundary to the length (by `count`) closest to `target`.

    A benign passage shorter than the poisoned one it faces is first continued with the question's spare
    retrieved passages; the unused tail of the last one goes back to the front of `spare` (which is
    consumed), so no spare text appears twice in a prompt. Cutting at word boundaries keeps the passage
    running text; the result is a prefix of `text`, or `text` followed by a prefix of the spare text.
    """
    source, taken = text, []
    while count(source) < target and spare:
        taken.append(spare.pop(0))
        source = f"{source} {taken[-1]}" if source else taken[-1]
    cuts = [m.start() for m in re.finditer(r"\s+", source) if m.start() > 0] + [len(source)]
    lo, hi = 0, len(cuts) - 1  # first cut reaching the target (lengths grow with the prefix): bisection
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if count(source[: cuts[mid]]) < target else (lo, mid)
    near = [cuts[i] for i in (lo - 1, lo) if i >= 0]
    cut = min(near, key=lambda c: (abs(count(source[:c]) - target), c))
    if cut <= len(text):
        spare[:0] = taken  # no spare text used: give it all back
    elif source[cut:].strip():
        spare.insert(0, source[cut:].strip())
    return source[:cut]
