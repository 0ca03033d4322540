"""Corpus monitoring: per-document poisoning scores (QPD, keyword anomaly, drift, co-retrieval clustering)."""
