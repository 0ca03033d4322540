"""Documents, chunks with exact source offsets, and the corpus loaders.

Every later coordinate (prompt offsets, traced spans, gold poison spans) maps back to
`document.text[chunk.start:chunk.end]`, so chunking never rewrites text: it only picks boundaries.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.inputs import MAX_DOC_CHARS, MAX_DOCUMENTS, check_upload
from ragsec_core._util.paths import data_dir, sample_corpora_dir
from ragsec_core._util.safeio import exists as _exists
from ragsec_core._util.safeio import read_json, read_text, scrub
from ragsec_core._util.text import black_box_text
from ragsec_core.data.spans import trim

SAMPLE_DIR = sample_corpora_dir()
DEFAULT_CORPUS = "general"
MAX_CHUNK_CHARS = 1000
TEXT_SUFFIXES = (".txt", ".md")
# Corpora too large to ship, built on the user's machine into `built_corpus_dir(name)`, and how to build them.
TECH_CORPUS = "tech"
BUILT_CORPORA = {TECH_CORPUS: "make corpus-tech (or: ragsec corpora build tech)"}


@dataclass(frozen=True)
class Document:
    id: str
    text: str
    title: str = ""
    # Gold poison spans [start, end) in `text`, when the document is a known planted poison.
    poison_spans: tuple[tuple[int, int], ...] = ()
    poison_target: str | None = None


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    doc_id: str
    text: str
    start: int  # offset of text in the source document
    end: int
    title: str = ""
    # Gold poison spans clipped to this chunk, in chunk-local coordinates.
    poison_spans: tuple[tuple[int, int], ...] = ()
    ends_document: bool = False  # the document's last chunk (only whitespace after `end`); False where not known


@dataclass(frozen=True)
class Query:
    """A labelled query: what the correct answers are and which false target an attack pushes."""

    id: str
    query: str
    answers: tuple[str, ...] = ()
    target: str | None = None
    variant: str | None = None


@dataclass
class Corpus:
    name: str
    documents: list[Document]
    queries: list[Query] = field(default_factory=list)
    source: str = ""

    def content_hash(self) -> str:
        h = hashlib.sha256()
        for d in self.documents:
            for part in (d.id, d.title, d.text):
                h.update(part.encode("utf-8", "surrogatepass"))
                h.update(b"\x1f")
            h.update(b"\x1e")
        return h.hexdigest()

    def labels_for(self, query: str) -> Query | None:
        """The labelled query whose text equals `query` (case/space-insensitive), if any."""
        key = " ".join(query.lower().split())
        for q in self.queries:
            if " ".join(q.query.lower().split()) == key:
                return q
        return None


# ---------------------------------------------------------------- chunking

_SENT_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n\s*\n")


def chunk_document(doc: Document, max_chars: int = MAX_CHUNK_CHARS) -> list[Chunk]:
    """Greedy sentence packing up to `max_chars`; a single longer sentence is hard-split."""
    bounds = _sentence_bounds(doc.text)
    pieces: list[tuple[int, int]] = []
    cur_s: int | None = None
    cur_e = 0
    for s, e in bounds:
        for hs in range(s, e, max_chars):
            he = min(e, hs + max_chars)
            if cur_s is not None and he - cur_s > max_chars:
                pieces.append((cur_s, cur_e))
                cur_s = None
            if cur_s is None:
                cur_s = hs
            cur_e = he
    if cur_s is not None:
        pieces.append((cur_s, cur_e))
    chunks = []
    for i, (s, e) in enumerate(trim(doc.text, p) for p in pieces):
        if e <= s:
            continue
        spans = tuple((max(a, s) - s, min(b, e) - s) for a, b in doc.poison_spans if a < e and b > s)
        chunks.append(Chunk(f"{doc.id}#{i}", doc.id, doc.text[s:e], s, e, doc.title, spans))
    if chunks:
        chunks[-1] = replace(chunks[-1], ends_document=True)
    return chunks


def chunk_corpus(corpus: Corpus, max_chars: int = MAX_CHUNK_CHARS) -> list[Chunk]:
    chunks = [c for d in corpus.documents for c in chunk_document(d, max_chars)]
    if not chunks:
        raise RagsecError(f"corpus '{corpus.name}' contains no text to index")
    return chunks


def _sentence_bounds(text: str) -> list[tuple[int, int]]:
    bounds, start = [], 0
    for m in _SENT_END.finditer(text):
        bounds.append((start, m.end()))
        start = m.end()
    if start < len(text):
        bounds.append((start, len(text)))
    return bounds


# ---------------------------------------------------------------- loaders

def load_corpus(path: str | Path | None = None, variant: str | None = None) -> Corpus:
    """Load a corpus from a sample name, a sample folder, JSONL, CSV, PoisonedRAG JSON or a text folder."""
    p = resolve_corpus_path(path)
    if p.is_dir() and (p / "corpus.jsonl").exists():
        corpus = _load_sample_dir(p, variant)
    elif variant:
        raise RagsecError("--variant only applies to a sample corpus folder (one with corpus.jsonl)")
    elif p.is_dir():
        corpus = Corpus(p.name, _load_text_folder(p), source=str(p))
    elif p.suffix.lower() == ".jsonl":
        corpus = Corpus(p.stem, _jsonl_documents(p), source=str(p))
    elif p.suffix.lower() == ".csv":
        corpus = Corpus(p.stem, _csv_documents(p), source=str(p))
    elif p.suffix.lower() == ".json":
        docs, queries = _attack_json(p)
        corpus = Corpus(p.stem, docs, queries, source=str(p))
    else:
        raise RagsecError(f"unsupported corpus file type '{p.suffix}': use .jsonl, .csv, .json or a folder")
    if not any(d.text.strip() for d in corpus.documents):
        raise RagsecError(f"corpus '{p}' is empty: it has no documents with text")
    if len(corpus.documents) > MAX_DOCUMENTS:
        raise RagsecError(f"corpus '{p}' has {len(corpus.documents)} documents; at most {MAX_DOCUMENTS} are supported")
    return corpus


def load_corpus_bytes(name: str, data: bytes, folder: str | Path) -> Corpus:
    """An uploaded corpus file (JSONL, CSV or attack JSON): size and type checked before it is parsed.

    The bytes are written under `folder` (a per-session scratch folder) and loaded like any file,
    so uploads get exactly the checks and messages of the CLI."""
    safe = check_upload(name, len(data))
    path = Path(folder) / safe
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    corpus = load_corpus(path)
    corpus.source = f"upload:{safe}"
    return corpus


def resolve_corpus_path(path: str | Path | None) -> Path:
    if path is None or str(path).strip() == "":
        path = DEFAULT_CORPUS
    p = Path(path).expanduser()
    if not _exists(p) and _exists(SAMPLE_DIR / str(path), kind="dir"):
        p = SAMPLE_DIR / str(path)
    if not _exists(p) and str(path) in BUILT_CORPORA:
        p = built_corpus_dir(str(path))
        if not _exists(p / "corpus.jsonl"):
            raise RagsecError(f"corpus '{path}' is not built yet: run {BUILT_CORPORA[str(path)]}")
    if not _exists(p):
        names = ", ".join(sample_corpus_names()) or "none installed"
        raise RagsecError(f"corpus not found: '{path}' (sample corpora: {names}; built: {', '.join(BUILT_CORPORA)})")
    return p


def built_corpus_dir(name: str) -> Path:
    """Where a corpus of BUILT_CORPORA lives once built: ragsec's data folder, never the checkout."""
    return data_dir() / "corpora" / name


def sample_corpus_names() -> list[str]:
    if not SAMPLE_DIR.is_dir():
        return []
    return sorted(d.name for d in SAMPLE_DIR.iterdir() if (d / "corpus.jsonl").exists())


def corpus_names() -> list[str]:
    """Every corpus loadable by name: the samples, then those of BUILT_CORPORA that have been built."""
    return sample_corpus_names() + [n for n in BUILT_CORPORA if _exists(built_corpus_dir(n) / "corpus.jsonl")]


def variant_names(path: str | Path | None) -> list[str]:
    folder = resolve_corpus_path(path) / "variants"
    return sorted(f.stem for f in folder.glob("*.jsonl")) if folder.is_dir() else []


def _load_sample_dir(folder: Path, variant: str | None) -> Corpus:
    docs = _jsonl_documents(folder / "corpus.jsonl")
    queries_file = folder / "queries.json"
    queries = _queries(read_json(queries_file)) if queries_file.exists() else []
    name = folder.name
    if variant:
        vfile = folder / "variants" / f"{variant}.jsonl"
        if not vfile.exists():
            raise RagsecError(f"unknown variant '{variant}' for corpus '{name}' (have: {', '.join(variant_names(folder))})")
        docs = _upsert(docs, _jsonl_documents(vfile))
        name = f"{name}+{variant}"
    return Corpus(name, docs, queries, source=str(folder))


def _upsert(base: list[Document], extra: list[Document]) -> list[Document]:
    """Variant documents replace same-id documents (embedded poison) or are appended (new poison)."""
    by_id = {d.id: d for d in extra}
    out = [by_id.pop(d.id, d) for d in base]
    return out + [d for d in extra if d.id in by_id]


def _jsonl_documents(path: Path) -> list[Document]:
    docs = []
    # Split on "\n" only: str.splitlines() also breaks at U+2028/U+0085/\x1c..\x1e, which JSON allows raw
    # inside strings, and would tear a valid record in two.
    for n, line in enumerate(read_text(path).split("\n"), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RagsecError(f"{path}:{n}: invalid JSON ({exc.msg})") from None
        except RecursionError:
            raise RagsecError(f"{path}:{n}: JSON nested too deeply") from None
        if not isinstance(rec, dict):
            raise RagsecError(f"{path}:{n}: each line must be a JSON object with 'text'")
        docs.append(_document(rec, default_id=f"{path.stem}-{n}", where=f"{path}:{n}"))
    return _unique(docs)


def _document(rec: dict[str, Any], default_id: str, where: str) -> Document:
    text = rec.get("text", rec.get("contents"))
    if not isinstance(text, str):
        raise RagsecError(f"{where}: record has no string 'text' field")
    if len(text) > MAX_DOC_CHARS:
        raise RagsecError(f"{where}: document text has {len(text)} characters; at most {MAX_DOC_CHARS}")
    poison = rec.get("poison") or {}
    if not isinstance(poison, dict):
        raise RagsecError(f"{where}: 'poison' must be an object {{target, spans}}")
    target = poison.get("target")
    return Document(
        id=str(rec.get("id", rec.get("_id", default_id))),
        text=text,
        title=str(rec.get("title") or ""),
        poison_spans=_gold_spans(poison.get("spans") or [], len(text), where),
        poison_target=None if target is None else str(target),
    )


def _gold_spans(raw: Any, n: int, where: str) -> tuple[tuple[int, int], ...]:
    """Gold spans as integer pairs inside the text; anything else is a clear error, not a crash."""
    try:
        pairs = [(int(a), int(b)) for a, b in raw]
    except (TypeError, ValueError, OverflowError):
        raise RagsecError(f"{where}: 'poison.spans' must be a list of [start, end] integer pairs") from None
    return tuple((a, b) for a, b in pairs if 0 <= a < b <= n)


def _csv_documents(path: Path) -> list[Document]:
    # The csv module refuses fields over 128 KiB by default; a long single-line document is legitimate.
    csv.field_size_limit(max(csv.field_size_limit(), MAX_DOC_CHARS + 1))
    try:
        reader = csv.DictReader(io.StringIO(read_text(path), newline=""))
        if not reader.fieldnames or "text" not in reader.fieldnames:
            raise RagsecError(f"'{path}': CSV needs a header row with a 'text' column (and optionally id, title)")
        rows = list(reader)
    except csv.Error as exc:
        raise RagsecError(f"'{path}': malformed CSV ({exc})") from None
    docs = [_document(row, default_id=f"{path.stem}-{n}", where=f"{path}:{n + 1}") for n, row in enumerate(rows, 1)]
    return _unique(docs)


def _load_text_folder(folder: Path) -> list[Document]:
    files = sorted(f for f in folder.rglob("*") if f.is_file() and f.suffix.lower() in TEXT_SUFFIXES)
    if not files:
        raise RagsecError(f"folder '{folder}' has no .txt or .md files")
    if len(files) > MAX_DOCUMENTS:
        raise RagsecError(f"folder '{folder}' has {len(files)} text files; at most {MAX_DOCUMENTS} are supported")
    docs = [Document(str(f.relative_to(folder)), read_text(f), f.stem) for f in files]
    for d in docs:
        if len(d.text) > MAX_DOC_CHARS:
            raise RagsecError(f"'{folder / d.id}' has {len(d.text)} characters; at most {MAX_DOC_CHARS} per document")
    return docs


def _attack_json(path: Path) -> tuple[list[Document], list[Query]]:
    """PoisonedRAG-style attack records: benign `context` passages (if any) plus black-box poisons.

    A poison is stored as `question + ". " + adv_text`, as PoisonedRAG's black-box attack does;
    the whole passage is its gold span.
    """
    data = read_json(path)
    records = list(data.values()) if isinstance(data, dict) else data
    if not isinstance(records, list) or not all(_attack_record_ok(r) for r in records):
        raise RagsecError(f"'{path}': expected PoisonedRAG-style records with 'question' and 'adv_texts'")
    docs: list[Document] = []
    queries: list[Query] = []
    for i, r in enumerate(records):
        qid = str(r.get("id", i))
        correct = r.get("correct answer", [])
        answers = tuple(correct if isinstance(correct, list) else [correct])
        target = r.get("incorrect answer")
        target = None if target is None else scrub(target)
        queries.append(Query(scrub(qid), scrub(r["question"]), tuple(scrub(str(a)) for a in answers), target, "adv"))
        for j, ctx in enumerate(r.get("context", []) or []):
            docs.append(Document(f"{qid}-ctx{j}", str(ctx.get("text", "")), str(ctx.get("title", ""))))
        for j, adv in enumerate(r.get("adv_texts", []) or []):
            text = black_box_text(r['question'], adv)
            docs.append(Document(f"{qid}-adv{j}", text, "", ((0, len(text)),), target))
    for d in docs:
        if len(d.text) > MAX_DOC_CHARS:
            raise RagsecError(f"'{path}': passage {d.id} has {len(d.text)} characters; at most {MAX_DOC_CHARS}")
    return _unique(docs), queries


def _attack_record_ok(r: Any) -> bool:
    """Shape check, so hostile attack files fail with one message instead of a TypeError deep inside."""
    if not (isinstance(r, dict) and isinstance(r.get("question"), str)):
        return False
    ctx, adv = r.get("context") or [], r.get("adv_texts") or []
    target = r.get("incorrect answer")
    return (
        isinstance(ctx, list) and all(isinstance(c, dict) for c in ctx)
        and isinstance(adv, list)
        and (target is None or isinstance(target, str))
    )


def _queries(raw: Any) -> list[Query]:
    if not isinstance(raw, list):
        raise RagsecError("queries.json must be a JSON list")
    if not all(isinstance(q, dict) and "id" in q and isinstance(q.get("query"), str) for q in raw):
        raise RagsecError("queries.json: each entry needs an 'id' and a string 'query'")
    return [
        Query(scrub(str(q["id"])), scrub(q["query"]), tuple(scrub(str(a)) for a in _as_list(q.get("answers"))),
              _opt_str(q.get("target")), _opt_str(q.get("variant")))
        for q in raw
    ]


def _as_list(v: Any) -> list[Any]:
    return [] if v is None else v if isinstance(v, list) else [v]


def _opt_str(v: Any) -> str | None:
    return None if v is None else str(v)


def _unique(docs: list[Document]) -> list[Document]:
    """Duplicate ids would make traces ambiguous: later duplicates get a '~n' suffix. Lone surrogates
    (JSON allows "\\ud800") become U+FFFD, same length, so offsets hold and UTF-8 writers never fail."""
    docs = [Document(scrub(d.id), scrub(d.text), scrub(d.title), d.poison_spans,
                     None if d.poison_target is None else scrub(d.poison_target)) for d in docs]
    taken = {d.id for d in docs}
    seen: set[str] = set()
    last: dict[str, int] = {}  # last suffix tried per id, so n copies cost O(n), not O(n^2)
    out = []
    for d in docs:
        new_id, n = d.id, 0
        # `a`, `a`, `a~1` must not become `a`, `a~1`, `a~1`: skip suffixes that are other documents' ids.
        while new_id in seen or (n and new_id in taken):
            n = max(n, last.get(d.id, 0)) + 1
            new_id = f"{d.id}~{n}"
        last[d.id] = n
        seen.add(new_id)
        out.append(d if n == 0 else Document(new_id, d.text, d.title, d.poison_spans, d.poison_target))
    return out
