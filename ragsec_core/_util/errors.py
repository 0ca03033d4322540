"""One exception type for everything a user can get wrong.

Views (CLI, app) catch `RagsecError` and show its message as-is, so messages are written for people:
they say what was wrong and what to do, and never carry a traceback.
"""


class RagsecError(ValueError):
    """Bad user input or an unusable resource (corpus, model path, trace id)."""
