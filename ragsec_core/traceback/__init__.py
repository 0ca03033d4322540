"""RAGCharacter Pass-1 (counterfactual masking and replay), its metrics, artifacts, remediation and baselines."""
