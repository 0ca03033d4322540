"""`python -m ragsec_core.cli`: the `ragsec` command without the console script."""

from ragsec_core.cli.main import run

run()
