"""`python -m ragsec_core.cli.main`."""

from ragsec_core.cli.main import main

raise SystemExit(main())
