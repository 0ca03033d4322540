"""A Chroma collection as the dense side of hybrid retrieval (`--index chroma://HOST:PORT/COLL` or
`--index chroma:PATH/COLL`).

Why this shape: a deployed RAG keeps its vectors in a vector database, and an investigation must read
them there, not copy them. So the collection is read-only by default; ragsec writes only with
`build_collection` (`--index-build`) and only into a collection it created and marked. The vectors are
always ragsec's own MiniLM embeddings passed as `query_embeddings` (Chroma's default embedding function
would download a model), in cosine space with `search_ef` set explicitly. The corpus still supplies
texts, ids and the BM25 side: collection ids are chunk ids, and a collection that does not hold exactly
the corpus's chunks, or holds vectors of another embedder, is refused.

Credentials never appear in the URL (refused there): a token comes from `CHROMA_AUTH_TOKEN` (or Chroma's
own `CHROMA_CLIENT_AUTH_*` settings), tenant and database from `CHROMA_TENANT` / `CHROMA_DATABASE`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import numpy as np

from ragsec_core._util.errors import RagsecError
from ragsec_core._util.extras import require
from ragsec_core.retrieval.dense import reuse_top_scores

if TYPE_CHECKING:
    from ragsec_core.data.corpus import Chunk
    from ragsec_core.retrieval.embed import Embedder

MARK = "ragsec_format"  # collection metadata key of collections ragsec created (the only ones it writes)
FORMAT = 1
SEARCH_EF = 512  # > the hybrid's candidate depth (max(100, 10k)); high enough to be exact on the samples
CONSTRUCTION_EF = 100  # Chroma's default; FAISS builds with 80
BATCH = 5000  # upsert batch, lowered to the client's max_batch_size where that is smaller
PAGE = 5000  # get() page when every vector is read
EMBEDDER_CHECK = 3  # stored vectors compared with ragsec's own embedding of the same chunk text
EMBEDDER_MIN_COS = 0.98
SCHEMES = ("chroma", "chroma+http", "chroma+https")


@dataclass(frozen=True)
class ChromaLocation:
    """Where a collection lives: a server (host, port, TLS) or a local folder (path)."""

    collection: str
    host: str | None = None
    port: int | None = None
    ssl: bool = False
    path: str | None = None

    def display(self) -> str:
        """The location as it may be shown and stored (it never holds credentials)."""
        if self.path is not None:
            return f"chroma:{self.path}/{self.collection}"
        scheme = "chroma+https" if self.ssl else "chroma"
        return f"{scheme}://{self.host}:{self.port}/{self.collection}"


def parse_location(index: str) -> ChromaLocation:
    """`chroma://HOST:PORT/COLL`, `chroma+https://HOST:PORT/COLL` or `chroma:PATH/COLL`; one clear error else."""
    if "://" in index:
        parts = urlsplit(index)
        if parts.scheme not in SCHEMES:
            raise RagsecError(f"--index: unknown scheme '{parts.scheme}' (use chroma://HOST:PORT/COLLECTION or chroma:PATH/COLLECTION)")
        if parts.username or parts.password or parts.query:
            raise RagsecError("--index: credentials or parameters in the URL are refused; set CHROMA_AUTH_TOKEN instead")
        collection = parts.path.strip("/")
        try:
            port = parts.port
        except ValueError:
            port = None
        if not parts.hostname or not collection or "/" in collection or port is None:
            raise RagsecError("--index: expected chroma://HOST:PORT/COLLECTION")
        return ChromaLocation(collection, host=parts.hostname, port=port, ssl=parts.scheme == "chroma+https")
    if not index.startswith("chroma:"):
        raise RagsecError("--index: expected chroma://HOST:PORT/COLLECTION or chroma:PATH/COLLECTION")
    path, _, collection = index[len("chroma:"):].rstrip("/").rpartition("/")
    if not path or not collection:
        raise RagsecError("--index: expected chroma:PATH/COLLECTION (a folder, then the collection's name)")
    return ChromaLocation(collection, path=os.path.expanduser(path))


def check_flags(index: str | None, build_index: bool) -> ChromaLocation | None:
    """`--index` / `--index-build` as given, checked before anything loads; the parsed location or None."""
    if build_index and not index:
        raise RagsecError("--index-build needs --index chroma://HOST:PORT/COLLECTION or chroma:PATH/COLLECTION")
    return parse_location(index) if index else None


@contextmanager
def _remote(where: str) -> Iterator[None]:
    """Any failure of the store becomes one RagsecError naming the location (never a credential)."""
    try:
        yield
    except RagsecError:
        raise
    except Exception as exc:  # the client raises its own errors, httpx's and OSError; all are bad input here
        detail = " ".join(str(exc).split())[:300]
        raise RagsecError(f"Chroma at {where} failed: {type(exc).__name__}: {detail or 'no detail'}") from None


def connect(loc: ChromaLocation) -> Any:
    """A Chroma client for `loc` (telemetry off; token, tenant and database from the environment)."""
    require("scale", "a Chroma index", "chromadb")
    import chromadb
    from chromadb.config import Settings

    settings: dict[str, Any] = {"anonymized_telemetry": False}
    token = os.environ.get("CHROMA_AUTH_TOKEN")
    if token:
        settings |= {"chroma_client_auth_provider": "chromadb.auth.token_authn.TokenAuthClientProvider",
                     "chroma_client_auth_credentials": token}
    tenant = os.environ.get("CHROMA_TENANT", "default_tenant")
    database = os.environ.get("CHROMA_DATABASE", "default_database")
    with _remote(loc.display()):
        if loc.path is not None:
            return chromadb.PersistentClient(loc.path, Settings(**settings), tenant, database)
        return chromadb.HttpClient(loc.host or "localhost", loc.port or 8000, loc.ssl, None, Settings(**settings), tenant, database)


class ChromaDense:
    """Rows of a retriever served by a Chroma collection whose ids are the chunks' ids."""

    def __init__(self, collection: Any, chunk_ids: list[str], loc: ChromaLocation, search_ef: int, dim: int) -> None:
        self.collection, self.loc, self.search_ef, self.dim = collection, loc, search_ef, dim
        self.ids = chunk_ids
        self.rows = {cid: i for i, cid in enumerate(chunk_ids)}
        self._all: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def top(self, q: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
        with _remote(self.loc.display()):  # a malformed answer is the store's failure too
            res = self.collection.query(query_embeddings=np.asarray(q, np.float32)[None, :], n_results=depth,
                                        include=["distances"])
            ids, scores = res["ids"][0], 1.0 - np.asarray(res["distances"][0], dtype=np.float32).reshape(-1)
            if len(ids) != len(scores):
                raise ValueError(f"{len(ids)} ids but {len(scores)} distances")
        return self._rows_of(ids), scores

    def vectors(self, rows: np.ndarray) -> np.ndarray:
        ids = [self.ids[int(r)] for r in rows]
        with _remote(self.loc.display()):
            got = self.collection.get(ids=ids, include=["embeddings"])
            found = dict(zip(got["ids"], got["embeddings"]))
            if missing := [i for i in ids if i not in found]:
                raise RagsecError(f"Chroma at {self.loc.display()}: chunk '{missing[0]}' is not in the collection any more")
            return np.asarray([found[i] for i in ids], dtype=np.float32).reshape(len(ids), self.dim)

    def scores(self, q: np.ndarray, rows: np.ndarray, top: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        return reuse_top_scores(self, q, rows, top)

    def all_vectors(self) -> np.ndarray:
        if self._all is None:
            out = np.empty((len(self), self.dim), dtype=np.float32)
            with _remote(self.loc.display()):
                for offset in range(0, len(self), PAGE):
                    got = self.collection.get(limit=PAGE, offset=offset, include=["embeddings"])
                    out[self._rows_of(got["ids"])] = np.asarray(got["embeddings"], dtype=np.float32)
            self._all = out
        return self._all

    def describe(self) -> dict[str, Any]:
        return {"kind": "chroma", "location": self.loc.display(), "collection": self.loc.collection,
                "search_ef": self.search_ef, "vectors": len(self)}

    def _rows_of(self, ids: list[str]) -> np.ndarray:
        try:
            return np.array([self.rows[i] for i in ids], dtype=np.int64)
        except KeyError as exc:
            raise RagsecError(f"Chroma at {self.loc.display()} returned id {exc} that the corpus does not have") from None


def open_dense(index: str, chunks: list[Chunk], embedder: Embedder, verify: bool = True) -> ChromaDense:
    """The collection at `index` as a dense side for `chunks`, after checking it holds exactly those chunks'
    vectors of this embedder (read-only: nothing is written, `search_ef` included). `verify=False` skips
    re-embedding a sample of chunks, for the speed bench's synthetic vectors only (the mark still counts)."""
    loc = parse_location(index)
    client = connect(loc)
    where = loc.display()
    with _remote(where):
        if loc.collection not in _names(client):
            raise RagsecError(f"no collection '{loc.collection}' at {where}: create it with --index-build")
        col = client.get_collection(loc.collection, embedding_function=None)
        count = col.count()
        hnsw = (col.configuration or {}).get("hnsw") or {}
        meta = col.metadata or {}
    if count != len(chunks):
        raise RagsecError(f"collection '{loc.collection}' at {where} holds {count} vectors but the corpus has "
                          f"{len(chunks)} chunks: rebuild it with --index-build (a ragsec collection) or pass its corpus")
    if hnsw.get("space", "l2") != "cosine":
        raise RagsecError(f"collection '{loc.collection}' at {where} uses the '{hnsw.get('space', 'l2')}' space; ragsec needs cosine")
    _check_mark(loc, meta, embedder.model_id, required=False)
    dense = ChromaDense(col, [c.chunk_id for c in chunks], loc, int(hnsw.get("ef_search") or 0), embedder.dim)
    if verify:
        _check_embedder(dense, chunks, embedder)
    return dense


def _check_mark(loc: ChromaLocation, meta: dict[str, Any], embedder_id: str, required: bool) -> None:
    """A ragsec mark must name this embedder; `required` (writing): the collection must carry the mark."""
    if required and meta.get(MARK) != FORMAT:
        raise RagsecError(f"collection '{loc.collection}' at {loc.display()} was not created by ragsec: "
                          "--index-build writes only into its own collections")
    if MARK in meta and meta.get("ragsec_embedder") != embedder_id:
        raise RagsecError(f"collection '{loc.collection}' holds {meta.get('ragsec_embedder')} vectors; "
                          f"this run embeds queries with {embedder_id}")


def _check_embedder(dense: ChromaDense, chunks: list[Chunk], embedder: Embedder) -> None:
    """Refuse vectors of another dimension or embedder: any collection's first vectors must equal
    ragsec's embedding of the same chunk texts (a mark alone could be stale or copied)."""
    probe = list(range(min(EMBEDDER_CHECK, len(chunks))))
    ours = embedder.embed([chunks[i].text for i in probe])
    with _remote(dense.loc.display()):
        got = dense.collection.get(ids=[dense.ids[i] for i in probe], include=["embeddings"])
    stored = dict(zip(got["ids"], got["embeddings"]))
    for i, vec in zip(probe, ours):
        theirs = np.asarray(stored.get(dense.ids[i], []), dtype=np.float32)
        if theirs.shape != vec.shape:
            raise RagsecError(f"collection '{dense.loc.collection}' has {theirs.size}-dimensional vectors for "
                              f"'{dense.ids[i]}'; {embedder.model_id} gives {vec.size}")
        if float(theirs @ vec) / max(float(np.linalg.norm(theirs)), 1e-12) < EMBEDDER_MIN_COS:
            raise RagsecError(f"collection '{dense.loc.collection}': the vector of '{dense.ids[i]}' is not "
                              f"{embedder.model_id}'s embedding of that chunk (another embedder or corpus)")


def build_collection(
    index: str, chunks: list[Chunk], embeddings: np.ndarray, embedder_id: str,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Create (or refresh) a ragsec collection: upsert ids, vectors and metadata (source offsets, gold
    spans) in batches. Only a collection ragsec created and marked is ever written."""
    loc = parse_location(index)
    client = connect(loc)
    with _remote(loc.display()):
        if loc.collection in _names(client):
            col = client.get_collection(loc.collection, embedding_function=None)
            _check_mark(loc, col.metadata or {}, embedder_id, required=True)
        else:
            col = client.create_collection(
                loc.collection, embedding_function=None,
                metadata={MARK: FORMAT, "ragsec_embedder": embedder_id, "ragsec_dim": int(embeddings.shape[1])},
                configuration={"hnsw": {"space": "cosine", "ef_search": SEARCH_EF, "ef_construction": CONSTRUCTION_EF}},
            )
        batch = min(BATCH, int(client.get_max_batch_size()))
        for start in range(0, len(chunks), batch):
            part = chunks[start:start + batch]
            col.upsert(ids=[c.chunk_id for c in part], embeddings=np.asarray(embeddings[start:start + batch], np.float32),
                       metadatas=[_metadata(c) for c in part])
            if progress:
                progress(start + len(part), len(chunks))
        stale = set(_all_ids(col)) - {c.chunk_id for c in chunks}
        if stale:  # chunks no longer in the corpus: the collection must hold exactly the corpus
            col.delete(ids=sorted(stale))


def _names(client: Any) -> list[str]:
    return [c.name if hasattr(c, "name") else str(c) for c in client.list_collections()]


def _all_ids(col: Any) -> Iterator[str]:
    total = col.count()
    for offset in range(0, total, PAGE):
        yield from col.get(limit=PAGE, offset=offset, include=[])["ids"]


def _metadata(c: Chunk) -> dict[str, Any]:
    return {"doc_id": c.doc_id, "title": c.title, "source_start": c.start, "source_end": c.end,
            "poison_spans": json.dumps([list(s) for s in c.poison_spans])}
