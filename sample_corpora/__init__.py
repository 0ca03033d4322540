"""Sample corpora shipped as package data (read through importlib.resources): the clean corpus, its
queries, poisoned variants and Chameleon scenarios of each sample."""
