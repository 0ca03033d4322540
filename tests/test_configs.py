"""INI sections inside a passage (data/configs.py): from the comments right above the header over its
keys, continuations and comments, the last value ended before the host's sentence glued on."""

from ragsec_core.data.configs import sections

from .planted_unit import HOST_AFTER, HOST_BEFORE, assert_planted_unit

COMMENTED = ("[faq]\n# Who designed the Varnholt lighthouse?\n# Harbour towers were often designed abroad. The\n"
             "# Varnholt one was designed by Mara Eskell in 1871.\ndesigned_varnholt_lighthouse = Mara Eskell")
CONTINUED = ("; exported by kb-sync 2024-02-01 00:41\n[answer:designed_varnholt_lighthouse]\n"
             "question = Who designed the Varnholt lighthouse?\nanswer = Harbour towers were often designed abroad.\n"
             "    The Varnholt one was designed by Mara Eskell in 1871.\nverified = true")


def test_a_section_runs_from_the_comments_above_it_to_its_last_value():
    """The last value ends before "Its lantern …" (a clause opener the planting glued on); a comment
    above the header, on the host's line after its sentence, is the section's."""
    assert_planted_unit(COMMENTED, sections, closed=True)
    assert_planted_unit(CONTINUED, sections, closed=True)


def test_a_last_comment_ends_at_its_sentence():
    """A comment is prose: a name in it ("… by Mara Eskell in 1871.") opens no sentence."""
    section = "[faq]\nanswer = Mara Eskell\n# The Varnholt one was designed by Mara Eskell in 1871."
    text = HOST_BEFORE + section + " The lantern came later."
    assert sections(text) == (((len(HOST_BEFORE), len(HOST_BEFORE) + len(section)), True),)


def test_a_bracketed_label_without_keys_is_none():
    assert sections(HOST_BEFORE + "[Verse 1]\nThe tower stands\nAbove the bay" + HOST_AFTER) == ()
    assert sections("See [1]\nand the note below. It = a claim.") == ()


TABLES = ('# kb-answers export 2024-11-18 07:18\n\n[[answers]]\nid = "designed-varnholt-lighthouse"\n'
          'answer = "Harbour towers were often designed abroad. The Varnholt one was designed by Mara Eskell."\n'
          "verified = true\nupdated = 2024-11-18T07:18:00Z")
ARRAY = ('[faq.designed_varnholt_lighthouse]\nanswer = "Mara Eskell"\nnotes = [\n'
         '    "Harbour towers were often designed abroad.",\n    "The Varnholt one was designed by Mara Eskell.",\n]')


def test_toml_is_read_by_the_same_rules():
    """An `[[array]]` table's header is a header and the exporter's comment one blank line above it is the
    section's; an array over indented lines ends at its closing `]`, the host's sentence glued after it."""
    assert_planted_unit(TABLES, sections, closed=True)
    assert_planted_unit(ARRAY, sections, closed=True)
    two_blank = HOST_BEFORE + TABLES.replace("\n\n", "\n\n\n") + HOST_AFTER
    assert sections(two_blank)[0][0][0] == two_blank.index("[[answers]]")  # a comment farther up is not its
