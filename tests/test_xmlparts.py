"""XML inside a passage (data/xmlparts.py): a whole document from its prolog to its root element's close,
and namespaced elements (a Word document's paragraphs, their text in runs), each read as one closed unit, the
latter with the siblings of their name; their tags are no words (`tags.MARKUP`)."""

from ragsec_core.data.tags import MARKUP, element_end
from ragsec_core.data.xmlparts import documents, elements

from .planted_unit import HOST_AFTER, HOST_BEFORE, assert_planted_unit

NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
PARAGRAPHS = ('<w:p w:rsidR="4162D34A"><w:r><w:t xml:space="preserve">Who designed the Varnholt lighthouse?</w:t></w:r>'
              '</w:p><w:p w:rsidR="720AEF84"><w:r><w:t xml:space="preserve">Harbour towers were often designed </w:t>'
              '</w:r><w:r><w:t xml:space="preserve">abroad. The Varnholt one was designed by </w:t></w:r><w:r><w:rPr>'
              '<w:b/></w:rPr><w:t xml:space="preserve">Mara Eskell</w:t></w:r><w:r><w:t xml:space="preserve"> in '
              "1871.</w:t></w:r></w:p>")
DOCUMENT = f'<w:document xmlns:w="{NS}"><w:body>{PARAGRAPHS}<w:sectPr/></w:body></w:document>'


def test_namespaced_tags_are_markup_and_close_their_elements():
    assert [m.group() for m in MARKUP.finditer('<w:t xml:space="preserve">x</w:t> <dc:creator>y</dc:creator>')] == [
        '<w:t xml:space="preserve">', "</w:t>", "<dc:creator>", "</dc:creator>"]
    assert element_end(PARAGRAPHS, 0) == PARAGRAPHS.index("</w:p>") + len("</w:p>")


def test_a_run_of_paragraphs_and_a_whole_document_are_closed_units():
    """The host's sentence glued on after the last `</w:p>` or `</w:document>` stays out."""
    assert_planted_unit(PARAGRAPHS, elements, closed=True)
    assert_planted_unit(DOCUMENT, elements, closed=True)


def test_an_unprefixed_element_or_an_unclosed_one_is_none():
    assert elements(HOST_BEFORE + "<p>Harbour towers were often designed abroad.</p>" + HOST_AFTER) == ()
    unclosed = PARAGRAPHS[PARAGRAPHS.index("</w:p>") + len("</w:p>") :].removesuffix("</w:p>")
    assert elements(HOST_BEFORE + unclosed + HOST_AFTER) == ()


PLIST = ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" '
         '"http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n<plist version="1.0">\n<dict>\n\t<key>Answer</key>\n'
         "\t<string>The Varnholt one was designed by Mara Eskell in 1871. Her plans were approved.</string>\n"
         "\t<key>Verified</key>\n\t<true/>\n</dict>\n</plist>")


def test_a_document_from_its_declaration_or_its_doctype_is_one_closed_unit():
    """The declaration's closing `?>` ends no sentence (`glue`), and the root element runs to its close."""
    assert_planted_unit(PLIST, documents, closed=True)
    doctype_only = PLIST[PLIST.index("<!DOCTYPE"):]
    assert_planted_unit(doctype_only, documents, closed=True)
    commented = PLIST.replace("\n<plist", "\n<!-- exported by kb-sync -->\n<plist")
    assert_planted_unit(commented, documents, closed=True)


def test_no_document_without_a_root_element_that_closes():
    assert documents(HOST_BEFORE + '<?xml version="1.0"?> is how a file opens.' + HOST_AFTER) == ()
    assert documents(HOST_BEFORE + PLIST.removesuffix("</plist>") + HOST_AFTER) == ()
