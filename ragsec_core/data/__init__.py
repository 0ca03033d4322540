"""The data layer: corpora and chunks with source offsets, span algebra, and the versioned Pass-0 Trace with its store."""
