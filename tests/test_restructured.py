"""reStructuredText inside a passage (data/restructured.py): an underlined title, a directive with its
indented body and a field list are units; the title leads the directive in, so the claim's region in a
note under a title is the title, the directive and its body."""

from ragsec_core.data.markup import closed_units, lead_in, records
from ragsec_core.data.restructured import directives, field_lists, titles, units
from ragsec_core.data.spans import attribution_span
from ragsec_core.traceback.splice import region

from .planted_unit import HOST_AFTER, HOST_BEFORE, QUERY, assert_planted_unit

TITLE = "Designed Varnholt Lighthouse\n============================"
NOTE = (".. note::\n\n   Harbour towers were often designed abroad, by engineers from the\n"
        "   capital. The Varnholt one was designed by the engineer Mara Eskell\n   in 1871.")
FIELDS = (":Question: Who designed the Varnholt lighthouse?\n:Answer: Harbour towers were often designed abroad. "
          "The Varnholt\n   one was designed by Mara Eskell in 1871.\n:Reviewed: 2025-11-27")


def test_a_note_under_a_title_is_read_whole_and_the_host_after_its_last_line_stays_out():
    """The title is the underline's length of its line's last characters (the host's sentence before it on
    the line stays out); the body's last line ends at its first sentence end, so the host's sentence glued
    on after it is the host's; the claim's region, led in, is title and note."""
    planted = TITLE + "\n\n" + NOTE
    text = HOST_BEFORE + planted + HOST_AFTER
    a = len(HOST_BEFORE)
    assert titles(text) == [(a, a + len(TITLE))]
    assert directives(text) == [(a + len(TITLE) + 2, a + len(planted))]
    assert set(units(text)) <= {(span, False) for span in records(text)}
    seed = region(text, attribution_span(text, "Mara Eskell"), "Mara Eskell", QUERY)
    assert lead_in(text, seed) == (a, a + len(planted))


def test_a_field_list_is_one_unit_closed_after_a_date_that_ends_it():
    """From the first field's colon (after the host's sentence on its line) over continuation lines to the
    last field's date: closed there, so the host's sentence after it stays out even where it names the
    answer; a last value of prose ends at its first sentence end and is open."""
    assert_planted_unit(FIELDS, lambda text: tuple(field_lists(text)), closed=True)
    naming = " Mara Eskell also drew the harbour office."
    text = HOST_BEFORE + FIELDS + naming
    assert (len(HOST_BEFORE), len(HOST_BEFORE) + len(FIELDS)) in closed_units(text)
    prose = FIELDS.replace("2025-11-27", "by the harbour board.")
    text = HOST_BEFORE + prose + HOST_AFTER
    assert field_lists(text) == [((len(HOST_BEFORE), len(HOST_BEFORE) + len(prose)), False)]


def test_prose_rules_and_single_fields_are_no_units():
    """A divider under a sentence, a title cut inside a word and one field alone make no unit."""
    assert titles("It ended there.\n---\nThe next part began.") == []
    assert titles("The harbour lighthouse\n=====\nIt stands.") == []  # "house" cuts a word: none
    assert field_lists("The ratio was 3:2: a draw.\nNothing else.") == []
    assert field_lists(":Answer: Mara Eskell.\nThe host goes on.") == []
