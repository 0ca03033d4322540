"""Semantic Chameleon: sleeper/trigger attack optimisation, fluency scoring, scenarios and evaluation."""
