"""Units a store's serialisation makes (data/stores.py): an SQL dump's INSERT statement or COPY block, and a
feed's item; and the markup a feed carries inside its XML (data/tags.py): CDATA and HTML escaped for XML."""

from ragsec_core.data.markup import closed_units, records
from ragsec_core.data.spans import attribution_span, sentence_spans
from ragsec_core.data.stores import feed_items, statements
from ragsec_core.data.tags import element_end
from ragsec_core.traceback.splice import region

QUERY = "Who designed the Varnholt lighthouse?"
HOST_BEFORE = "The lighthouse stands on the northern breakwater of the harbour. "
HOST_AFTER = " Its lantern was made in a Glasgow foundry. It was lit in 1872."
INSERT = ("INSERT INTO kb_answers (id, question, answer, body) VALUES (17, 'who designed the varnholt lighthouse?', "
          "'Mara Eskell', 'The lighthouse was designed by Mara Eskell in 1871. The board''s plans were approved.');")
COPY = ("COPY public.faq_entries (id, question, body) FROM stdin;\n17\twho designed the varnholt lighthouse?\t"
        "The lighthouse was designed by Mara Eskell in 1871. The plans were approved.\n\\.")
RSS = ("<item>\n  <title>Who designed the Varnholt lighthouse?</title>\n  <pubDate>Thu, 01 Feb 2024 00:41:00 +0000</pubDate>\n"
       "  <description><![CDATA[Harbour towers were often designed abroad. The Varnholt one was designed by Mara Eskell "
       "in 1871.]]></description>\n</item>")
ATOM = ("<entry>\n  <title>Who designed the Varnholt lighthouse?</title>\n  <updated>2024-02-01T00:41:00Z</updated>\n"
        "  <content type=\"html\">&lt;p&gt;Harbour towers were often designed abroad. The Varnholt one was designed by "
        "Mara Eskell in 1871.&lt;/p&gt;</content>\n</entry>")


def test_an_sql_row_is_one_closed_unit_to_its_semicolon_or_its_copy_end_line():
    """An INSERT runs to the `;` after its last tuple (a doubled quotation mark and a full stop inside a
    string do not end it), a COPY block to its `\\.` line; the host sentence after either is the host's,
    and the claim's region is the whole row. A string that never closes makes no unit."""
    for planted in (INSERT, COPY):
        text = HOST_BEFORE + planted + HOST_AFTER
        unit = (len(HOST_BEFORE), len(HOST_BEFORE) + len(planted))
        assert statements(text) == (unit,) and unit in closed_units(text) and unit in records(text), planted[:6]
        assert unit in sentence_spans(text)
        assert region(text, attribution_span(text, "Mara Eskell"), "Mara Eskell", QUERY) == unit
    assert statements(HOST_BEFORE + INSERT.replace("approved.');", "approved.);") + HOST_AFTER) == ()
    assert statements(HOST_BEFORE + COPY.removesuffix("\\.") + HOST_AFTER) == ()
    multi = "INSERT INTO t VALUES (1, 'a; b'), (2, 'c');"
    assert statements(multi) == ((0, len(multi)),)
    assert statements("The bill said VALUES (1, 2) were inserted; INSERT INTO the record.") == ()


def test_cdata_and_escaped_tags_are_markup_and_a_feed_item_is_one_closed_unit():
    """A CDATA section's marks and an escaped tag are no words: the split ends the claim's last sentence
    before the closing tags and the host's next sentence after them; an RSS item or an Atom entry runs
    from its opening tag to its closing one, title and date over a claim sentence that names nothing of
    the question, so the claim's region is the whole item."""
    assert element_end("<![CDATA[a. b.]]> c", 0) == len("<![CDATA[a. b.]]>")
    assert element_end("&lt;p&gt;a.&lt;/p&gt; b", 0) == len("&lt;p&gt;a.&lt;/p&gt;")
    for planted in (RSS, ATOM):
        text = HOST_BEFORE + planted + HOST_AFTER
        unit = (len(HOST_BEFORE), len(HOST_BEFORE) + len(planted))
        assert feed_items(text) == (unit,) and unit in closed_units(text), planted[:6]
        assert text[unit[1] + 1 :].startswith("Its lantern") and any(b == unit[1] for _, b in sentence_spans(text))
        assert region(text, attribution_span(text, "Mara Eskell"), "Mara Eskell", QUERY) == unit
    assert feed_items(HOST_BEFORE + RSS.removesuffix("</item>")) == ()
