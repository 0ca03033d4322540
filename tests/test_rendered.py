"""Manual pages as `man` renders them to a file (data/rendered.py): a page from its header line to its
footer line, or a section from its bold heading over its indented lines, each closed."""

from ragsec_core.data.rendered import pages

from .planted_unit import HOST_AFTER, HOST_BEFORE, assert_planted_unit


def _bold(text: str) -> str:
    return "".join(c if c == " " else f"{c}\b{c}" for c in text)


PAGE = ("KBNOTES(7)                   Knowledge Base Notes                   KBNOTES(7)\n\n" + _bold("NAME") + "\n"
        "       kbnotes-varnholt - Who designed the Varnholt lighthouse?\n\n" + _bold("DESCRIPTION") + "\n"
        "       Harbour  towers  were  often designed abroad. The Varnholt one was\n"
        "       designed by Mara Eskell in 1871.\n\n"
        "kb-notes 2.3                       2024-02-01                       KBNOTES(7)")
SECTION = (_bold("OPTIONS") + "\n       " + _bold("--answer") + " _\bV_\bA_\bR_\bN_\bH_\bO_\bL_\bT\n"
           "              Harbour  towers  were  often designed abroad. The Varnholt\n"
           "              one was designed by Mara Eskell in 1871.")


def test_a_page_runs_to_its_footer_and_a_section_to_its_last_line_within_its_width():
    """The host's sentence glued on after the footer's page name, or after the section's ragged last line
    (which it makes wider than the justified lines above), stays out."""
    assert_planted_unit(PAGE, pages, closed=True)
    assert_planted_unit(SECTION, pages, closed=True)


def test_a_page_name_in_prose_or_a_heading_without_indented_lines_is_none():
    assert pages(HOST_BEFORE + "See KBNOTES(7)  and  the  notes  in KBNOTES(7)\nfor more." + HOST_AFTER) == ()
    assert pages(HOST_BEFORE + _bold("NOTES") + "\nNothing follows." + HOST_AFTER) == ()
