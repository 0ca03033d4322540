"""Pass-1's user-facing choices, kept in a module without model imports so that argparse `choices` and
the app's select boxes read them without loading torch (`ragsec --help` stays instant)."""

from __future__ import annotations

# Influence objective: the drop of the logged answer (black-box, what an analyst has) or of the known
# attacker target (benchmarks with labels).
OBJECTIVES = ("event", "oracle")
DEFAULT_OBJECTIVE = "event"
