"""Retrieval engines: MiniLM embeddings, BM25, the dense index, and the hybrid alpha-weighted retriever."""
