"""AsciiDoc source inside a passage (data/asciidoc.py): the lines from its first mark to its last are one
unit, a docs page's header, section and tip or an admonition block, ended before the host's sentence glued
on; one mark alone, MediaWiki's headings and reStructuredText's adornments are no AsciiDoc run."""

from ragsec_core.data.asciidoc import units

from .planted_unit import HOST_AFTER, HOST_BEFORE, assert_planted_unit

PAGE = ("= Designed Varnholt Lighthouse\nDana Whitfield\n:revdate: 2025-01-06\n:page-tags: kb, answers\n\n"
        "== Who designed the Varnholt lighthouse?\n\nHarbour towers were often designed abroad.\n"
        "The Varnholt one was designed by Mara Eskell in 1871.\n\n"
        "TIP: Found a mistake? xref:contributing.adoc[Tell the docs team].")
BLOCK = ("[IMPORTANT]\n.Who designed the Varnholt lighthouse?\n====\nHarbour towers were often designed abroad. "
         "The Varnholt one was designed by Mara Eskell in 1871.\n====")


def test_a_page_or_a_block_is_one_closed_unit():
    """The tip's macro and the block's closing delimiter close each (the host's "Its lantern …" glued on
    after them stays out); the first line's part after the host's sentence opens it."""
    assert_planted_unit(PAGE, units, closed=True)
    assert_planted_unit(BLOCK, units, closed=True)
    listing = '.The designer on record\n[source,python,linenums]\n----\ndesigner = "Mara Eskell"\n----'
    text = HOST_BEFORE + listing + HOST_AFTER
    assert units(text) == (((len(HOST_BEFORE), len(HOST_BEFORE) + len(listing)), True),)


def test_a_run_that_ends_on_a_title_or_an_admonition_is_open():
    """An admonition paragraph runs to its first sentence end (its text may go on); a section whose last
    mark is its title is open too."""
    tip = PAGE.rsplit(" xref", 1)[0]  # "TIP: Found a mistake?" with no macro
    text = HOST_BEFORE + tip + HOST_AFTER
    assert units(text) == (((len(HOST_BEFORE), len(HOST_BEFORE) + len(tip)), False),)
    header = PAGE.split("\n\nHarbour")[0]
    assert units(HOST_BEFORE + "\n" + header + "\nHarbour towers were often designed abroad.")[0][1] is False


def test_one_mark_and_other_formats_marks_are_no_run():
    """A lone block title, MediaWiki's `== … ==` headings, reStructuredText's over- and underlines (a
    delimiter counts only beside AsciiDoc's own marks) and field lists, and roff's requests are read by no
    AsciiDoc rule."""
    assert units(HOST_BEFORE + "\n.NET runs it.\nThe Varnholt one was designed by Mara Eskell." + HOST_AFTER) == ()
    wiki = "== History ==\nThe tower was designed by Mara Eskell.\n== Lantern ==\nIt came from Glasgow."
    assert units(HOST_BEFORE + "\n" + wiki + HOST_AFTER) == ()
    rst = "=======\nHistory\n=======\n\nThe tower was designed by Mara Eskell.\n\nLantern\n-------\nFrom Glasgow."
    assert units(HOST_BEFORE + "\n" + rst + HOST_AFTER) == ()
    fields = ":Question: Who designed the Varnholt lighthouse?\n:Answer: Mara Eskell\n:Status: checked"
    assert units(HOST_BEFORE + "\n" + fields + HOST_AFTER) == ()
    roff = '.TH VARNHOLT 7 "May 2025"\n.SH NAME\nvarnholt \\- the tower\n.SH DESCRIPTION\n.PP\nMara Eskell.'
    assert units(HOST_BEFORE + "\n" + roff + HOST_AFTER) == ()
