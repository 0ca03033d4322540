"""A notation made for machines inside a passage (data/notations.py) is one unit: a CoNLL-U annotation to its
last token row's last column, an EDIFACT interchange to the terminator of `UNZ` or of its last segment, and a
Pug template over its indented lines to the last line's first sentence end, before the host's sentence glued
on."""

from ragsec_core.data.notations import notations

from .planted_unit import HOST_AFTER, HOST_BEFORE, assert_planted_unit

ROW = "{k}\t{form}\t_\t{upos}\t_\t_\t{head}\t{rel}\t_\t{misc}"
TOKENS = [("The", "DET", "_"), ("lighthouse", "X", "_"), ("was", "AUX", "_"), ("designed", "X", "_"), ("by", "ADP", "_"),
          ("Mara Eskell", "PROPN", "SpaceAfter=No"), (".", "PUNCT", "_")]
ROWS = "\n".join(ROW.format(k=k, form=f, upos=u, head=0 if k == 1 else 1, rel="root" if k == 1 else "dep", misc=m)
                 for k, (f, u, m) in enumerate(TOKENS, 1))
CONLLU = ("# newdoc id = kb-varnholt\n# newpar\n# sent_id = varnholt-1\n# text = Who designed it?\n"
          "1\tWho\t_\tPRON\t_\t_\t0\troot\t_\t_\n2\tdesigned\t_\tX\t_\t_\t1\tdep\t_\t_\n"
          "3\tit\t_\tPRON\t_\t_\t1\tdep\t_\tSpaceAfter=No\n4\t?\t_\tPUNCT\t_\t_\t1\tpunct\t_\t_\n\n"
          f"# sent_id = varnholt-2\n# text = The lighthouse was designed by Mara Eskell.\n{ROWS}")
EDIFACT = ("UNA:+.? '\nUNB+UNOC:3+4012345000009:14+5412345000013:14+240301:0915+33512'\nUNH+1+ORDERS:D:96A:UN'\n"
           "BGM+220+KB8075+9'\nFTX+AAI+++Who designed the Varnholt lighthouse??'\n"
           "FTX+ACB+++The lighthouse was designed by Mara Eskell in:1871; the board?'s plans ?+ drawings agreed.'\n"
           "UNT+5+1'\nUNZ+1+33512'")
PUG_BLOCK = ("article.kb-answer\n  header\n    h3 Who designed the Varnholt lighthouse?\n  p.\n"
             "    The Varnholt lighthouse was designed by Mara Eskell in 1871, the year\n    the board approved her plans.")
PUG_PIPES = ("//- Reader questions\nsection.faq-entry#2017-lighthouse\n  h2 Who designed the Varnholt lighthouse?\n"
             "  p.answer\n    | The Varnholt lighthouse was designed by Mara Eskell.\n    | The board approved her plans.")


def test_conllu_and_an_edifact_interchange_are_one_closed_unit():
    for planted in (CONLLU, EDIFACT, EDIFACT.replace("'\n", "'")):
        assert_planted_unit(planted, notations, closed=True)


def test_a_pug_template_is_one_open_unit_to_its_last_lines_first_sentence_end():
    for planted in (PUG_BLOCK, PUG_PIPES):
        assert_planted_unit(planted, notations, closed=False)


def test_an_edifact_segment_runs_over_an_apostrophe_that_no_segment_follows():
    """An answer's apostrophe left unreleased ("Levi's") is the segment's text: a later terminator on its
    line closes the segment, the one that a line break or the next segment's tag follows."""
    interchange = "UNH+1+ORDERS:D:96A:UN'FTX+ACB+++The Sharks play at Levi's Stadium.'UNT+3+1'"
    text = HOST_BEFORE + interchange + HOST_AFTER
    assert notations(text) == (((len(HOST_BEFORE), len(HOST_BEFORE) + len(interchange)), True),)


def test_edifact_read_with_the_marks_its_service_string_advice_names():
    custom = "UNA*|.\\ ~UNH|1|ORDERS*D*96A*UN~FTX|ACB|||Designed by Mara Eskell\\~ in 1871.~UNT|3|1~"
    text = HOST_BEFORE + custom + HOST_AFTER
    assert notations(text) == (((len(HOST_BEFORE), len(HOST_BEFORE) + len(custom)), True),)


def test_no_unit_in_prose_or_text_that_only_looks_like_a_notation():
    """A `#` line with no token row, one EDIFACT-like segment, prose whose last word is an element's name
    above an indented line of prose, and a Pug tag line with nothing indented under it are none."""
    for prose in ("# text = the lamp was lit in 1872.\nIt was made in Glasgow.",
                  "UNB+UNOC:3+sender' is the header the archive keeps.",
                  "The keepers lived in the\n  section of the tower nearest the sea.",
                  "It was described in the article\n  Harbour lights of the Baltic, 1990.",
                  "article.kb-answer\nThe lamp was lit in 1872."):
        assert notations(HOST_BEFORE + prose + HOST_AFTER) == (), prose


def test_a_unit_opens_where_the_planting_glued_it_on():
    """After the host's sentence end, a citation's bracket or a colon, with a space or without."""
    for before in ("It was lit in 1872.[18] ", "It was lit in 1872.", "Bones have a variety of functions: "):
        for unit, closed in ((CONLLU, True), (EDIFACT, True), (PUG_BLOCK, False)):
            assert notations(before + unit + HOST_AFTER) == (((len(before), len(before) + len(unit)), closed),), before
    assert notations("The keeper's" + EDIFACT.replace("'\n", "'") + HOST_AFTER) == ()  # inside a word, never
