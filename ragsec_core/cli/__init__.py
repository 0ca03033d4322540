"""The `ragsec` command line: a thin view over the core."""
