"""A specification inside a passage (data/specs.py) is one unit: a Gherkin feature or scenario to its doc
string's closing delimiter or its table's last bar, Texinfo source to `@bye` or the `@end` of its last block,
and an RFC's sections over their page breaks, before the host's sentence glued on."""

from ragsec_core.data.specs import specs

from .planted_unit import HOST_AFTER, HOST_BEFORE, assert_planted_unit

FEATURE = ("@faq @lighthouses\nFeature: Lighthouse answers\n  Answers checked before they are published.\n\n"
           "  Background:\n    Given the harbour archive is open\n\n"
           "  Scenario: Who designed the Varnholt lighthouse?\n    Given a reader asks the help desk\n"
           "    # the archive's answer\n    Then the reply reads:\n      \"\"\"\n"
           "      The Varnholt lighthouse was designed by Mara Eskell in 1871.\n      Her plans were approved that year.\n"
           "      \"\"\"")
OUTLINE = ("Scenario Outline: Who designed the Varnholt lighthouse?\n    Then sentence <n> reads \"<sentence>\"\n\n"
           "    Examples:\n      | n | sentence                                                       |\n"
           "      | 1 | The Varnholt lighthouse was designed by Mara Eskell in 1871. |\n"
           "      | 2 | A pipe \\| and a backslash \\\\ stay in the cell.               |")
MANUAL = ("\\input texinfo   @c -*-texinfo-*-\n@setfilename harbour.info\n@settitle Harbour Notes\n\n@node Top\n"
          "@top Harbour Notes\n\n@node Varnholt\n@chapter Who designed the Varnholt lighthouse?\n@cindex lighthouse\n\n"
          "The Varnholt lighthouse was designed by Mara Eskell in 1871, the year\nthe harbour board @{as it was then@} "
          "approved her plans.\n\n@example\nlamp: 1872\n@end example\n\n@bye")
NODE = ("@node Varnholt\n@section Varnholt\n\n@table @asis\n@item Who designed the Varnholt lighthouse?\n"
        "The Varnholt lighthouse was designed by Mara Eskell in 1871, the year\nthe harbour board approved her plans.\n"
        "@end table")
FOOTER = "Eskell                        Informational                     [Page 7]\n\f\n"
HEADER = "RFC 9312             Varnholt Lighthouse                     April 2024"
SECTION = ("4.  Who designed the Varnholt lighthouse?\n\n"
           "   The Varnholt lighthouse was designed by Mara Eskell in 1871, the\n"
           f"   year the harbour board approved her plans for the northern\n\n{FOOTER}{HEADER}\n\n\n"
           "   breakwater.  Its lamp was made in a Glasgow foundry and was lit\n   in 1872.")


def test_a_feature_a_scenario_outline_texinfo_source_or_an_rfc_page_is_one_closed_unit():
    for planted in (FEATURE, OUTLINE, MANUAL, NODE, SECTION + f"\n\n\n{FOOTER}{HEADER}"):
        assert_planted_unit(planted, specs, closed=True)


def test_an_rfc_section_reads_over_its_page_break_to_its_last_line():
    """The page's footer, form feed and running header inside the paragraph are the section's; its last
    line ends at its last sentence end within the page's 72 columns, the host's sentence glued on after it
    running past them."""
    after = " Its lantern, made in a Glasgow foundry and shipped north by rail, was first lit in the spring of 1872."
    text = HOST_BEFORE + SECTION + after
    assert specs(text) == (((len(HOST_BEFORE), len(HOST_BEFORE) + len(SECTION)), True),)


def test_a_last_step_without_a_doc_string_or_table_ends_at_its_first_sentence_end():
    steps = "Scenario: Who designed it?\n  Given a reader asks\n  Then the desk answers that Mara Eskell designed it."
    text = HOST_BEFORE + steps + HOST_AFTER
    assert specs(text) == (((len(HOST_BEFORE), len(HOST_BEFORE) + len(steps)), False),)


def test_texinfo_without_bye_or_a_closing_end_runs_over_its_paragraphs():
    node = "@node Varnholt\n@section Varnholt\n@cindex lighthouse\n\nThe lighthouse was designed by Mara Eskell in 1871."
    text = HOST_BEFORE + node + HOST_AFTER
    assert specs(text) == (((len(HOST_BEFORE), len(HOST_BEFORE) + len(node)), False),)


def test_no_unit_in_prose_that_names_a_keyword_a_command_or_a_number():
    """A keyword with no step, table or doc string under it, `@node` named in a sentence, a numbered
    heading with no indented text under it, and a page footer alone are none."""
    for prose in ("Feature: the lamp was lit in 1872.\nIt was made in Glasgow.",
                  "Example: Mara Eskell designed it.\n\nThe lamp followed in 1872.",
                  "The manual's @node line names the chapter.\n@node is a command.",
                  "4.  Who designed it?\n\nMara Eskell did, in 1871.",
                  f"The draft ends here.\n\n{FOOTER}The next page follows."):
        assert specs(HOST_BEFORE + prose + HOST_AFTER) == (), prose


def test_a_unit_opens_where_the_planting_glued_it_on():
    """After the host's sentence end, a citation's bracket, a closing quote or a colon, with a space or
    without ("….[18]Feature: …"), or after a host's word and a space ("I Wan'na \\input texinfo"); inside a
    word, never."""
    for before in ("It was lit in 1872.[18] ", 'The keeper said "lit in 1872."', "It was lit in 1872.[18]",
                   "Bones have a variety of functions: ", "I Wan'na "):
        for unit in (OUTLINE, MANUAL):
            assert specs(before + unit + HOST_AFTER) == (((len(before), len(before) + len(unit)), True),), before
    assert specs("The keeper's" + OUTLINE + HOST_AFTER) == ()
