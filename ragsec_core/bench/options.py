"""The benchmark commands' choices and defaults, in a module without heavy imports: `cli/bench.py`
builds every `ragsec bench` parser from these and imports a benchmark module only when it runs."""

from __future__ import annotations

from ragsec_core._util.paths import shared_data_dir

# bench traceback: where a poison is planted (inside a clean host passage at a seeded sentence boundary,
# or as a passage of its own) and in which form (black: PoisonedRAG's black-box form, the question then
# the adversarial text; text: the adversarial text alone)
PLANT_MODES = ("embedded", "standalone")
ATTACK_FORMS = ("black", "text")

# bench speed: its sections ("hybrid" is only the hybrid part of "retrieval") and its default events file
SPEED_SECTIONS = ("traceback", "retrieval", "hybrid", "attention", "startup")
SPEED_DATA = shared_data_dir() / "stealthy" / "wiki_open_nq.json"
