"""A crawled web page's text inside a passage (data/scraped.py): the run of lines from its first short
line to its last, the last ending before the host's sentence glued on; lines that are no page stay prose."""

from ragsec_core.data.scraped import pages

from .planted_unit import HOST_AFTER, HOST_BEFORE, assert_planted_unit

ARTICLE = ("Home\nTopics\nAbout\nHome › Answers › Designed Varnholt Lighthouse\nWho designed the Varnholt lighthouse?\n"
           "By Dana Whitfield · July 21, 2025 · 5 min read\nHarbour towers were often designed abroad.\n"
           "The Varnholt one was designed by Mara Eskell in 1871.\nShare: Facebook X Email\n"
           "© 2025 Answer Desk · Privacy · Terms")
HELP = ("Skip to main content\nHelp Center\nSearch\nWho designed the Varnholt lighthouse?\nUpdated Nov 14, 2024\n"
        "Harbour towers were often designed abroad. The Varnholt one was designed by Mara Eskell in 1871.\n"
        "Was this article helpful?\nYes No\n5 out of 21 found this helpful\n"
        "We use cookies to keep this site working. Accept all Manage")


def test_a_page_runs_from_its_first_short_line_to_its_last_line():
    """The first line's part after the host's sentence opens it; the last line ends before "Its lantern …"
    (a clause opener the planting glued on)."""
    assert_planted_unit(ARTICLE, pages, closed=True)
    assert_planted_unit(HELP, pages, closed=True)
    text = HOST_BEFORE + HELP  # at the passage's end: the short tail after the cookie notice's sentence is its
    assert pages(text) == (((len(HOST_BEFORE), len(text)), True),)


def test_lines_that_are_no_page_stay_prose():
    """A poem's short lines hold no paragraph line; a page's lines with a blank line inside are two runs,
    neither one a page; a paragraph with no short line after it is no page's."""
    poem = "The tower stands\nAbove the bay\nIts lamp is lit\nBy Mara Eskell\nAt the close of day"
    assert pages(HOST_BEFORE + poem + HOST_AFTER) == ()
    assert pages(HOST_BEFORE + ARTICLE.replace("Lighthouse\n", "Lighthouse\n\n") + HOST_AFTER) == ()
    assert pages(HOST_BEFORE + ARTICLE.rsplit("\nShare", 1)[0] + HOST_AFTER) == ()
