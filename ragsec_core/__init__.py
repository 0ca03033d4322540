"""ragsec: a forensic workbench for poisoned retrieval-augmented generation.

Data flows one way: corpus -> retrieval -> Pass-0 trace -> analyses -> views (CLI, app).
"""

__version__ = "0.1.0"
