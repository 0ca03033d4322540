"""Roff source inside a passage (data/roff.py `sources`): a manual page or a section of one is one unit, and
its font changes are no letters of the words they are glued to (data/spans.py `find_ci`, data/tags.py
`ROFF_MARK`). The renderer of whole pages is tested in test_techdocs."""

from ragsec_core.data.roff import sources
from ragsec_core.data.spans import find_ci, query_share
from ragsec_core.data.trace import contains_norm

from .planted_unit import HOST_AFTER, HOST_BEFORE, QUERY, assert_planted_unit

PAGE = (".TH VARNHOLT-LIGHTHOUSE 7 \"May 2025\" \"kb-notes 1.2\" \"Reader Questions\"\n.SH NAME\n"
        "varnholt-lighthouse \\- who designed the varnholt lighthouse\n.SH DESCRIPTION\n"
        "Harbour towers were often designed abroad.\nThe Varnholt one was designed by Mara Eskell in 1871.\n"
        ".SH SEE ALSO\n.BR kb (1)")
SECTION = (".SS Designed Varnholt Lighthouse\n.PP\nHarbour towers were often designed abroad.\n"
           "The Varnholt one was designed by \\fBMara Eskell\\fR in 1871.")


def test_a_manual_page_pasted_into_a_passage_is_one_unit_to_its_cross_reference_or_its_last_sentence():
    """A page from `.TH` runs to the cross-reference that closes its SEE ALSO section (a closed unit, so
    the host sentence glued on after it stays the host's); a section from `.SS` to its last line's first
    sentence end. The claim's region is the whole of either."""
    for planted, closed in ((PAGE, True), (SECTION, False)):
        assert_planted_unit(planted, sources, closed)


def test_prose_and_a_lone_request_are_no_roff_source():
    assert sources("The .NET runtime was lit.\nIt works.") == ()
    assert sources(HOST_BEFORE + ".PP\nThe Varnholt one was designed by Mara Eskell." + HOST_AFTER) == ()  # one request


def test_a_font_change_glued_to_a_word_is_no_letter_of_it():
    """`\\fBMara Eskell\\fR` states the answer (its first word is no "fBMara") to the rule that finds it and
    to the rule that decides a passage holds it (Pass-1 masks only a holder), and a question in bold is as
    much bait as the bare question; a word that only ends in the answer's letters is still not the answer."""
    assert find_ci(SECTION, "Mara Eskell") == [(SECTION.index("Mara"), SECTION.index("\\fR in"))]
    assert contains_norm(SECTION, "Mara Eskell") and not contains_norm(SECTION.replace("\\fB", "\\fBLa"), "Mara Eskell")
    assert find_ci("the Lamara Eskell tower", "Mara Eskell") == []
    bold = "\\fBWho designed the Varnholt lighthouse\\fR?"
    assert query_share(bold, QUERY) == query_share("Who designed the Varnholt lighthouse?", QUERY) == 1.0
