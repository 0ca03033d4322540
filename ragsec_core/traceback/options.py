"""Pass-1's user-facing choices, kept in a module without model imports so that argparse `choices` and
the app's select boxes read them without loading torch (`ragsec --help` stays instant)."""

from __future__ import annotations

# Influence objective: the drop of the logged answer (black-box, what an analyst has), of the known
# attacker target (benchmarks with labels), or, for an untargeted attack (the `LOST` trigger: the correct
# answer is gone, whatever replaced it), the return of a labelled correct answer.
OBJECTIVES = ("event", "oracle", "restore")
DEFAULT_OBJECTIVE = "event"
