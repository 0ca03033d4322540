"""Plumbing every layer may use: errors, paths, atomic writes, safe reading, input limits, cancellation, safe display text."""
