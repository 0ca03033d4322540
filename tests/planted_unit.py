"""A unit planted between two host sentences, as the boundary's unit tests read one (test_stores,
test_roff, test_threads): the finder gives it with whether its writer closed it, it is one of the text's units, and
the claim's region is the whole unit."""

from __future__ import annotations

from collections.abc import Callable

from ragsec_core._util.text import Span
from ragsec_core.data.markup import closed_units, records
from ragsec_core.data.spans import attribution_span
from ragsec_core.traceback.splice import region

QUERY = "Who designed the Varnholt lighthouse?"
HOST_BEFORE = "The lighthouse stands on the northern breakwater of the harbour. "
HOST_AFTER = " Its lantern was made in a Glasgow foundry. It was lit in 1872."


def assert_planted_unit(planted: str, found: Callable[[str], tuple[tuple[Span, bool], ...]], closed: bool) -> None:
    """`planted` between the host's sentences is found whole, closed or not as said, and is the region."""
    text = HOST_BEFORE + planted + HOST_AFTER
    unit = (len(HOST_BEFORE), len(HOST_BEFORE) + len(planted))
    assert found(text) == ((unit, closed),) and unit in records(text), planted[:8]
    assert (unit in closed_units(text)) == closed
    assert region(text, attribution_span(text, "Mara Eskell"), "Mara Eskell", QUERY) == unit
