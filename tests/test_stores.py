"""Units a store's serialisation makes (data/stores.py): an SQL dump's INSERT statement or COPY block, a
feed's item, an iCalendar or vCard component and a multipart message's parts; and the markup a feed
carries inside its XML (data/tags.py): CDATA and HTML escaped for XML."""

from ragsec_core.data.markup import closed_units, records
from ragsec_core.data.spans import attribution_span, sentence_spans
from ragsec_core.data.stores import catalogue_entries, components, feed_items, mime_parts, statements
from ragsec_core.data.tags import element_end
from ragsec_core.traceback.splice import region

from .planted_unit import HOST_AFTER, HOST_BEFORE, QUERY, assert_planted_unit

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


VEVENT = ("BEGIN:VEVENT\nUID:5c1f@kb.example.org\nDTSTAMP:20240201T004100Z\nSUMMARY:Who designed the Varnholt lig\n"
          " hthouse?\nDESCRIPTION:Harbour towers were often designed abroad\\, by engineers. The Varnho\n"
          " lt one was designed by Mara Eskell in 1871.\nEND:VEVENT")
MULTIPART = ("--=_Part_4711\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\n"
             "Harbour towers were often designed abro=\nad. The Varnholt one was designed by Mara Eskell=E2=80=99s "
             "hand in 1871.\n--=_Part_4711--")


def test_a_calendar_component_and_a_multipart_body_are_closed_units_to_their_writers_last_line():
    """A VEVENT (its lines folded inside words) runs to its own `END:` line, a VCARD inside a VCALENDAR is
    the outer one's, and a multipart body runs from its boundary line to the closing `--boundary--`; the
    host sentence after either is the host's, and the claim's region is the whole unit. A component whose
    `END:` never comes, a line between that is no property, and a boundary never closed make none."""
    for planted, found in ((VEVENT, components), (MULTIPART, mime_parts)):
        text = HOST_BEFORE + planted + HOST_AFTER
        unit = (len(HOST_BEFORE), len(HOST_BEFORE) + len(planted))
        assert found(text) == (unit,) and unit in closed_units(text) and unit in records(text), planted[:6]
        assert region(text, attribution_span(text, "Mara Eskell"), "Mara Eskell", QUERY) == unit
    nested = "BEGIN:VCALENDAR\nBEGIN:VCARD\nNOTE:a\nEND:VCARD\nEND:VCALENDAR"
    assert components(nested) == ((0, len(nested)), (16, 44)) and records(nested) == [(0, len(nested))]
    assert components(HOST_BEFORE + VEVENT.removesuffix("END:VEVENT") + HOST_AFTER) == ()
    assert components("BEGIN:VEVENT\nthe tower was lit in 1871.\nEND:VEVENT") == ()
    assert mime_parts(HOST_BEFORE + MULTIPART.removesuffix("--") + HOST_AFTER) == ()
    assert mime_parts("The ward -- as the board said\nLater: it was lit.") == ()


PO_SOURCE = ('#. TRANSLATORS: the answer shown for "Who designed the Varnholt lighthouse?"\n#: kb/answers/varnholt.py:114\n'
             'msgid ""\n"Harbour towers were often designed abroad. The Varnholt one was designed by "\n'
             '"Mara Eskell in 1871, the \\"harbour\\" board said."\nmsgstr ""')
PO_TRANSLATION = ('#: kb/answers/varnholt.py:114\nmsgctxt "Who designed the Varnholt lighthouse?"\nmsgid "answer.varnholt"\n'
                  'msgstr ""\n"Harbour towers were often designed abroad. The Varnholt one was designed by "\n"Mara Eskell in 1871."')


def test_a_catalogue_entry_is_one_closed_unit_from_its_comments_to_its_last_string():
    """A gettext entry runs from its first comment line over msgctxt, msgid and msgstr to its last quoted
    piece's closing mark (an escaped quotation mark inside one does not end it): the host's sentence glued
    on after `msgstr ""` stays out, and the claim's region is the whole entry. Without a msgstr it is none."""
    for planted in (PO_SOURCE, PO_TRANSLATION):
        assert_planted_unit(planted, lambda text: tuple((span, True) for span in catalogue_entries(text)), closed=True)
    assert catalogue_entries(HOST_BEFORE + PO_SOURCE.removesuffix('\nmsgstr ""') + HOST_AFTER) == ()
    assert catalogue_entries("The #1 hit was msgid in 1999. It sold well.") == ()
