"""Rich text inside a passage (data/richtext.py): a whole document to the brace that closes its `{\\rtf`,
and a run of paragraphs from `\\pard` to the `\\par` that closes the last, each one closed unit."""

from ragsec_core.data.richtext import documents

from .planted_unit import assert_planted_unit

DOCUMENT = ("{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0\\fnil\\fcharset0 Calibri;}}\n"
            "{\\*\\generator Riched20 10.0.19041}\\viewkind4\\uc1\n"
            "\\pard\\sa200\\b\\f0\\fs24 Who designed the Varnholt lighthouse?\\b0\\par\n"
            "The harbour board\\rquote s tower was designed by the engineer Mara Eskell in 1871, after a long \n"
            "review of every drawing \\{plans 4\\}.\\par\n}")
PARAGRAPHS = ("\\pard\\plain\\s0\\ql\\f0\\fs22 Harbour towers were often designed abroad. The Varnholt one was \n"
              "designed by {\\b Mara Eskell} in 1871.\\par\n\\pard\\plain\\s0 The board approved the plans.\\par")


def _found(text: str):
    return tuple((span, True) for span in documents(text))


def test_a_document_and_a_run_of_paragraphs_are_each_one_closed_unit():
    """Escaped braces do not close the document; the `\\par` closing the last paragraph ends the run, and
    the host's sentence glued on after either stays out; the claim's region is the whole unit."""
    for planted in (DOCUMENT, PARAGRAPHS, PARAGRAPHS.split("\n\\pard")[0]):
        assert_planted_unit(planted, _found, closed=True)


def test_rich_text_that_does_not_close_is_no_unit():
    """A document whose brace never closes is none (its paragraphs, closed by `\\par`, are still runs); a
    paragraph whose group does not close is none, nor is prose that names the control words."""
    unclosed = DOCUMENT.removesuffix("}") + " The host goes on."
    assert [unclosed[a:b][:5] for a, b in documents(unclosed)] == ["\\pard"]
    assert documents("\\pard\\plain {\\b Mara Eskell was here. The host goes on.") == ()
    assert documents("The parser reads \\\\pard and \\\\par as words in a paper on RTF.") == ()
