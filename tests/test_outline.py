"""Org-mode's outline inside a passage (data/outline.py): a heading with its property drawer is one unit
that leads the entry's text in; a block with the heading above it is one closed unit to its `#+END_`."""

from ragsec_core.data.markup import lead_in
from ragsec_core.data.outline import entries
from ragsec_core.data.spans import attribution_span
from ragsec_core.traceback.splice import region

from .planted_unit import HOST_AFTER, HOST_BEFORE, QUERY, assert_planted_unit

HEAD = ("* Designed Varnholt Lighthouse                                   :kb:answers:\n:PROPERTIES:\n"
        ":CREATED:  [2024-11-29 Fri 11:53]\n:SOURCE:   kb-import\n:END:")
CLAIM = "Harbour towers were often designed abroad. The Varnholt one was designed by Mara Eskell in 1871."
QUOTE = f"** TODO Check: Who designed the Varnholt lighthouse?\n#+BEGIN_QUOTE\n{CLAIM}\n#+END_QUOTE"


def test_a_quote_block_under_its_heading_is_one_closed_unit():
    """A heading that asks a long question (HotpotQA's run to 200 characters) still heads its block."""
    assert_planted_unit(QUOTE, entries, closed=True)
    long = QUOTE.replace("lighthouse?", "lighthouse, the one on the northern breakwater " * 4 + "of the harbour?")
    assert len(long.split("\n")[0]) > 200
    assert_planted_unit(long, entries, closed=True)


def test_a_heading_with_its_drawer_leads_the_entrys_text_in():
    """The heading and the drawer are one open unit; the claim's region right under it (one sentence) is
    led in from the heading's stars, and the host's sentence after the text stays out."""
    claim = CLAIM.split(". ")[1]
    text = HOST_BEFORE + HEAD + "\n" + claim + HOST_AFTER
    a = len(HOST_BEFORE)
    assert entries(text) == (((a, a + len(HEAD)), False),)
    seed = region(text, attribution_span(text, "Mara Eskell"), "Mara Eskell", QUERY)
    assert lead_in(text, seed) == (a, a + len(HEAD) + 1 + len(claim))


def test_a_bullet_or_a_block_that_never_ends_is_no_entry():
    assert entries("* Buy milk\n* Buy bread") == ()
    assert entries(HOST_BEFORE + QUOTE.removesuffix("\n#+END_QUOTE") + HOST_AFTER) == ()
