"""The technical corpus (`--corpus tech`): real system documentation rendered to text, one document per section.

Semantic Chameleon's headline result depends on the corpus: hybrid retrieval protected a 67,941-post
security Q&A corpus because real documents there compete for the attack's target words. The sample
corpora (~200 passages) have no such competition, so this builds one from documentation a Debian machine
can install: the English manual pages, the Linux kernel's HTML documentation (`linux-doc-6.1`) and the
Debian Administrator's Handbook (`debian-handbook`). Each page section becomes a document whose id is its
source path plus the section (`man/man5/pam.conf.5#DESCRIPTION`) and whose title names page and section;
chunking is the usual one, so passages keep exact offsets into those documents.

The corpus is written as a sample-style folder (`corpus.jsonl` + `manifest.json` with the counts) under
ragsec's data folder, atomically, and is then loaded like any corpus by name.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from ragsec_core._util.atomic import write_text_atomic
from ragsec_core._util.errors import RagsecError
from ragsec_core.data.corpus import TECH_CORPUS, Document, built_corpus_dir, chunk_document
from ragsec_core.data.roff import render_man

MANIFEST = "manifest.json"
# Where each source lives on a Debian machine, and the package that installs it (`make corpus-tech`).
MAN_ROOT = Path("/usr/share/man")
KERNEL_ROOT = Path("/usr/share/doc/linux-doc-6.1/html")
HANDBOOK_ROOT = Path("/usr/share/doc/debian-handbook/html/en-US")
PACKAGES = {"man": "manpages", "kernel": "linux-doc-6.1", "handbook": "debian-handbook"}
# Generated per-subcommand references of one vendor CLI (16,600 `gcloud` pages on this image) would be
# most of the corpus and near-copies of each other; they are not what an administrator's corpus holds.
EXCLUDED_MAN_PREFIXES = ("gcloud",)
# The kernel's administration, security and user-space interface guides; hardware driver references,
# architecture ports and the translations (not English) are left out: they are not what an administrator
# searches, and embedding them would double the build time on two cores.
KERNEL_FOLDERS = (
    "admin-guide", "security", "userspace-api", "filesystems", "networking", "process", "core-api", "bpf",
    "crypto", "virt", "trace", "mm", "dev-tools", "locking", "scheduler", "power", "RCU", "accounting",
)
MIN_SECTION_CHARS = 40  # "NAME"-only stubs and empty sections carry nothing to retrieve


@dataclass(frozen=True)
class Source:
    """One source file rendered to sections: `key` is the id prefix, `title` the page's title."""

    key: str
    title: str
    sections: list[tuple[str, str]]


# ---------------------------------------------------------------- HTML

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
_BLOCK = {"p", "div", "li", "dt", "dd", "pre", "tr", "table", "ul", "ol", "dl", "blockquote", "section", "br", "td", "th"}
_HEADINGS = {"h1", "h2", "h3", "h4"}
_SKIP_TAGS = {"script", "style", "head", "nav", "noscript", "svg", "title"}
_SKIP_CLASSES = {"headerlink", "toc", "docnav", "navheader", "navfooter", "rst-footer-buttons", "toctree-wrapper"}
# Content roots: Sphinx's article body (kernel), DocBook/Publican sections (handbook).
_ROOT_CLASSES = {"section", "chapter", "preface", "appendix", "part", "book", "article", "glossary"}


class _HTMLSections(HTMLParser):
    """Text of the content roots only, split at h1-h4; navigation, scripts and header links dropped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool, bool]] = []  # (tag, is content root, skipped subtree)
        self.sections: list[tuple[str, list[str]]] = [("", [])]
        self.buf: list[str] = []
        self.heading: list[str] | None = None
        self.page_title = ""
        self._in_title = False

    def _inside(self) -> tuple[bool, bool]:
        return any(r for _, r, _ in self.stack), any(s for _, _, s in self.stack)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "title":
            self._in_title = True
        classes = set(a.get("class", "").split())
        root = a.get("itemprop") == "articleBody" or bool(classes & _ROOT_CLASSES)
        skip = tag in _SKIP_TAGS or bool(classes & _SKIP_CLASSES) or a.get("role") in ("navigation", "search") \
            or a.get("id") == "banner"
        if tag in _BLOCK or tag in _HEADINGS:
            self._flush()
        if tag in _HEADINGS and self._inside() == (True, False) and not skip:
            self.heading = []
        if tag not in _VOID:
            self.stack.append((tag, root, skip))

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in _HEADINGS and self.heading is not None:
            title = " ".join("".join(self.heading).split()).rstrip("\u00b6").strip()
            self.heading = None
            self._flush()
            self.sections.append((title, []))
        if tag in _BLOCK:
            self._flush()
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.page_title += data
            return
        inside, skipped = self._inside()
        if not inside or skipped:
            return
        (self.heading if self.heading is not None else self.buf).append(data)

    def _flush(self) -> None:
        text = " ".join("".join(self.buf).split())
        self.buf = []
        if text:
            self.sections[-1][1].append(text)

    def result(self) -> tuple[str, list[tuple[str, str]]]:
        self._flush()
        title = " ".join(self.page_title.split())
        return title, [(t, "\n\n".join(p)) for t, p in self.sections if p]


def render_html(html: str) -> tuple[str, list[tuple[str, str]]]:
    """(page title, [(heading, text)]) of one documentation page."""
    parser = _HTMLSections()
    parser.feed(html)
    parser.close()
    return parser.result()


# ---------------------------------------------------------------- sources

def man_sources(root: Path = MAN_ROOT) -> Iterator[Source]:
    """English manual pages (`man1`..`man8` directly under the root; translations live in subfolders)."""
    for f in sorted(root.glob("man[1-8]/*")):
        if f.is_symlink() or not f.is_file() or f.name.startswith(EXCLUDED_MAN_PREFIXES):
            continue
        try:
            raw = gzip.decompress(f.read_bytes()) if f.suffix == ".gz" else f.read_bytes()
        except (OSError, EOFError):  # a damaged page is skipped, not the build
            continue
        name, sections = render_man(_decode(raw))
        stem = f.name[:-3] if f.suffix == ".gz" else f.name
        if sections:
            yield Source(f"man/{f.parent.name}/{stem}", name or stem, sections)


def html_sources(root: Path, key: str, folders: tuple[str, ...] | None = None) -> Iterator[Source]:
    """Every HTML page under `root` (only under the top `folders` when given), less search and index pages."""
    for f in sorted(root.rglob("*.html")):
        rel = f.relative_to(root)
        if folders is not None and (len(rel.parts) < 2 or rel.parts[0] not in folders):
            continue
        if rel.parts[0].startswith("_") or f.stem in ("genindex", "search", "py-modindex"):
            continue
        title, sections = render_html(_decode(f.read_bytes()))
        if sections:
            yield Source(f"{key}/{rel.with_suffix('')}", title or f.stem, sections)


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def source_roots(roots: dict[str, Path] | None = None) -> dict[str, Path]:
    """Each source's folder: the Debian locations, with `roots` overriding some (tests use copies)."""
    return {"man": MAN_ROOT, "kernel": KERNEL_ROOT, "handbook": HANDBOOK_ROOT} | (roots or {})


def all_sources(roots: dict[str, Path] | None = None) -> dict[str, Callable[[], Iterator[Source]]]:
    """The three sources by name, each a generator over its rendered pages."""
    r = source_roots(roots)
    return {
        "handbook": lambda: html_sources(r["handbook"], "handbook"),
        "man": lambda: man_sources(r["man"]),
        "kernel": lambda: html_sources(r["kernel"], "kernel", KERNEL_FOLDERS),
    }


def missing_sources(roots: dict[str, Path] | None = None, sources: tuple[str, ...] = tuple(PACKAGES)) -> list[str]:
    """The Debian packages whose documentation is not installed (what `make corpus-tech` installs)."""
    r = source_roots(roots)
    return [PACKAGES[k] for k in sources if not r[k].is_dir()]


# ---------------------------------------------------------------- documents and the corpus folder

def documents(source: Source) -> list[Document]:
    """One document per section with enough text; ids stay unique when a page repeats a heading."""
    out, seen = [], set()
    for i, (heading, text) in enumerate(source.sections):
        if len(text) < MIN_SECTION_CHARS:
            continue
        anchor = re.sub(r"\s+", "_", heading.strip())[:80] or f"part{i}"
        did = f"{source.key}#{anchor}"
        if did in seen:
            did = f"{did}~{i}"
        seen.add(did)
        title = f"{source.title} \u2014 {heading}" if heading else source.title
        out.append(Document(did, text, title))
    return out


def build_tech_corpus(
    out_dir: Path | None = None,
    max_passages: int | None = None,
    roots: dict[str, Path] | None = None,
    progress: Callable[[str, int], None] | None = None,
    sources: tuple[str, ...] = tuple(PACKAGES),
) -> dict:
    """Render the sources, write `corpus.jsonl` and `manifest.json` (atomically), return the manifest.

    `max_passages` stops adding pages once that many passages are in (sources in the order handbook,
    manual pages, kernel), so a small machine can build a smaller corpus of the same kind; `sources`
    picks some of them (a slice of the manual pages alone is what the tests build)."""
    out_dir = out_dir or built_corpus_dir(TECH_CORPUS)
    if missing := missing_sources(roots, sources):
        raise RagsecError(f"documentation not installed: {', '.join(missing)} (run `make corpus-tech`, "
                          f"or apt-get install {' '.join(missing)})")
    lines: list[str] = []
    counts: dict[str, dict[str, int]] = {}
    passages = 0
    for name, gen in all_sources(roots).items():
        if name not in sources:
            continue
        c = counts.setdefault(name, {"pages": 0, "documents": 0, "passages": 0})
        for src in gen():
            if max_passages is not None and passages >= max_passages:
                break
            docs = documents(src)
            n = sum(len(chunk_document(d)) for d in docs)
            c["pages"] += 1
            c["documents"] += len(docs)
            c["passages"] += n
            passages += n
            lines.extend(json.dumps({"id": d.id, "title": d.title, "text": d.text}, ensure_ascii=False) for d in docs)
            if progress:
                progress(name, passages)
    if not lines:
        raise RagsecError("no documentation pages rendered: nothing to index")
    manifest = {"name": TECH_CORPUS, "documents": len(lines), "passages": passages, "sources": counts,
                "max_passages": max_passages, "excluded_man_prefixes": list(EXCLUDED_MAN_PREFIXES),
                "kernel_folders": list(KERNEL_FOLDERS),
                "roots": {k: str(v) for k, v in source_roots(roots).items()}}
    out_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out_dir / "corpus.jsonl", "\n".join(lines) + "\n")
    write_text_atomic(out_dir / MANIFEST, json.dumps(manifest, indent=1) + "\n")
    return manifest


def read_manifest(folder: Path) -> dict | None:
    """A built corpus's manifest (its counts), or None when it is absent or unreadable."""
    try:
        data = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None



