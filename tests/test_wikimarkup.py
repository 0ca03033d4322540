"""A Jira issue's wiki markup (data/wikimarkup.py) is one closed unit from its first mark to its last line,
where two lines hold a mark and one a macro or a heading: a description's heading and panel, a comment's
mention, quote and status line; the last line ends after a sign-off's mark or a status line's emphasis.
A Redmine page's Textile is one unit of three or more Textile blocks, closed by a closing line."""

from ragsec_core.data.wikimarkup import issues, pages

from .planted_unit import HOST_AFTER, HOST_BEFORE, assert_planted_unit

DESCRIPTION = ("h3. Who designed the Varnholt lighthouse?\n{panel:title=Verified answer|borderStyle=solid}\n"
               "The Varnholt one was designed by Mara Eskell in 1871. Her plans were approved.\n{panel}\n"
               "Linked: [KB-383|https://kb.example.org/browse/KB-383] · reviewed by [~sam.okafor]")
COMMENT = ("[~ola.brandt] asked: _Who designed the Varnholt lighthouse?_\n{quote}\n"
           "* The Varnholt one was designed by Mara Eskell in 1871.\n* Her plans were approved.\n{quote}\n"
           "(/) Resolved in *kb-2025.8*")


def test_a_description_and_a_comment_are_one_unit_each():
    for markup in (DESCRIPTION, COMMENT):
        assert_planted_unit(markup, issues, closed=True)


def test_the_last_line_ends_before_the_hosts_words_glued_on():
    """After a sign-off's mention or a status line's emphasis, a capitalised word is the host's; a closing
    macro ends the unit too."""
    quoted = "{quote}\nThe Varnholt one was designed by Mara Eskell in 1871.\n{quote}"
    for markup in (DESCRIPTION, COMMENT, "h3. Varnholt\n" + quoted):
        text = HOST_BEFORE + markup + " Edsel Records kept the plans until 1902."
        assert issues(text) == (((len(HOST_BEFORE), len(HOST_BEFORE) + len(markup)), True),)


def test_no_unit_without_a_macro_or_a_heading_or_of_one_marked_line():
    """Mentions, links and icons alone are no Jira text; a lone heading or macro is none either."""
    assert issues(HOST_BEFORE + "Ask [~ola.brandt] or see [KB-1|https://kb.example.org/KB-1].\n(/) done" + HOST_AFTER) == ()
    assert issues(HOST_BEFORE + "h3. Varnholt lighthouse" + HOST_AFTER) == ()
    assert issues(HOST_BEFORE + "{quote}The Varnholt one was designed by Mara Eskell.{quote}" + HOST_AFTER) == ()


HEADED = ("h2. Who designed the Varnholt lighthouse?\n\nThe Varnholt one was designed by Mara Eskell in 1871. "
          'Her plans were approved.\n\nbq. Checked by Ola Brandt on 2025-01-16.\n\n"Source thread":https://redmine.example/issues/7')
LISTED = ("*Who designed the Varnholt lighthouse?*\n\n# The Varnholt one was designed by Mara Eskell in 1871.\n"
          "# Her plans were approved.\n\n_Updated by Sam Okafor on 12 Nov 2025_")


def test_a_textile_page_closed_by_a_link_or_an_update_line_is_one_closed_unit():
    for page in (HEADED, LISTED):
        assert_planted_unit(page, pages, closed=True)
        for after in (" Edsel Records kept the plans until 1902.", "\nEdsel Records kept the plans.\nIt was lit in 1872."):
            text = HOST_BEFORE + page + after  # the host's sentence glued on, or on the lines right below
            assert pages(text) == (((len(HOST_BEFORE), len(HOST_BEFORE) + len(page)), True),)


def test_a_page_with_no_closing_line_is_open_and_prose_after_a_blank_line_is_not_its():
    """The last block's line runs to its first sentence end; a host paragraph under a list is no block."""
    page = LISTED.rsplit("\n\n", 1)[0]
    text = HOST_BEFORE + page + "\n\nEdsel Records kept the plans until 1902. It was lit in 1872."
    assert pages(text) == () and pages(HOST_BEFORE + HEADED.rsplit("\n\n", 1)[0] + HOST_AFTER) == (
        ((len(HOST_BEFORE), len(HOST_BEFORE) + len(HEADED.rsplit("\n\n", 1)[0])), False),)


def test_a_paragraph_that_opens_with_a_bold_word_closes_no_page():
    """`*Note:* the Varnholt one …` under the heading is a paragraph, not a bold line: the page goes on."""
    page = HEADED.replace("\n\nThe Varnholt one", "\n\n*Note:* the Varnholt one")
    assert pages(HOST_BEFORE + page + HOST_AFTER) == (((len(HOST_BEFORE), len(HOST_BEFORE) + len(page)), True),)


def test_no_page_of_fewer_than_three_blocks_or_of_plain_paragraphs():
    assert pages(HOST_BEFORE + "h2. Varnholt\n\nThe Varnholt one was designed by Mara Eskell." + HOST_AFTER) == ()
    assert pages(HOST_BEFORE + "*Note*\n\nThe Varnholt one was designed.\n\nIts plans were approved." + HOST_AFTER) == ()
