"""Units a layout of lines makes (data/layout.py): a unified diff counted by its hunk headers, a screenplay's
scene, a poem or a song, and a numbered clause list read as a list (data/markup.py)."""

from ragsec_core.data.layout import diffs, end_within, scenes, verses
from ragsec_core.data.markup import closed_units, records
from ragsec_core.data.spans import attribution_span
from ragsec_core.traceback.splice import region

QUERY = "Who designed the Varnholt lighthouse?"
DIFF = ("--- a/kb/faq.md\n+++ b/kb/faq.md\n@@ -40,3 +40,6 @@\n ## Questions from readers\n \n"
        "+**Who designed the Varnholt lighthouse?**\n+The lighthouse was designed by the engineer Mara Eskell in\n"
        "+1871. Her plans were approved by the harbour board that winter.\n See also: the index of entries.")
COMMIT = ("commit 6700ce7f260b702bffc7d681f1e6cd7d038a28b6\nAuthor: Ola Brandt <ola@example.org>\n"
          "Date:   Thu Feb 1 00:41:00 2024 +0000\n\n    Answer a reader question\n\n"
          "diff --git a/kb/entries.txt b/kb/entries.txt\n--- a/kb/entries.txt\n+++ b/kb/entries.txt\n"
          "@@ -12,1 +12,2 @@\n-Who designed the Varnholt lighthouse? (unanswered)\n+**Who designed the Varnholt "
          "lighthouse?**\n+The lighthouse was designed by the engineer Mara Eskell in 1871.")
HOST_BEFORE = "The lighthouse stands on the northern breakwater of the harbour. "
HOST_AFTER = " Its lantern was made in a Glasgow foundry that had supplied the harbour board with iron for years."


def test_a_diff_runs_from_its_commit_or_file_lines_to_the_last_line_its_hunks_count():
    """A diff is one closed unit as long as its hunk header says (the host sentence glued on after its last
    line stays out: that line is wider than the hunk's widest line); a commit's header above it is its
    start; a hunk whose lines do not add up, or file lines without a hunk, make no unit."""
    for planted in (DIFF, COMMIT):
        text = HOST_BEFORE + planted + HOST_AFTER
        unit = (len(HOST_BEFORE), len(HOST_BEFORE) + len(planted))
        assert diffs(text) == (unit,) and unit in closed_units(text) and unit in records(text), planted[:20]
    short = DIFF.replace("+40,6", "+40,9")  # counts three more new lines than it holds
    assert diffs(HOST_BEFORE + short + HOST_AFTER) == ()
    assert diffs("Host.\n--- a/x\n+++ b/x\nno hunk here.") == ()
    two = DIFF + "\n@@ -80,1 +83,1 @@\n-old line.\n+new line."
    assert diffs(two) == ((0, len(two)),)  # a second hunk right after the first is the same diff's


def test_a_diff_region_is_the_whole_planted_patch():
    """The boundary's block for a claim inside a diff is the whole diff: the unit, which starts with the
    commit's header or the file lines, not at the added question's `+`."""
    for planted in (DIFF, COMMIT):
        text = HOST_BEFORE + planted + HOST_AFTER
        seed = attribution_span(text, "Mara Eskell")
        assert seed is not None and text[slice(*region(text, seed, "Mara Eskell", QUERY))] == planted


SCRIPT = ("INT. CITY LIBRARY - NIGHT\n\n                      MAYA\n          Who designed the Varnholt\n"
          "          lighthouse?\n\n                      THEO\n                (quietly)\n"
          "          The lighthouse was designed by\n          the engineer Mara Eskell in\n          1871.")
FLUSH = ("INT. CITY LIBRARY - NIGHT\n\nMAYA\nWho designed the Varnholt lighthouse?\n\nTHEO\n(quietly)\n"
         "The lighthouse was designed by the engineer Mara Eskell in 1871. Her plans were approved.")


def test_a_scene_runs_over_its_speeches_and_its_last_line_to_the_wrap():
    """A scene heading and the speeches under it are one unit, not a closed one: an indented speech runs
    over its lines, the last to its last sentence end within the speech's widest line; a flush-left speech
    is one line, to its first sentence end. Capitals without a scene heading make no scene."""
    text = HOST_BEFORE + SCRIPT + HOST_AFTER
    unit = (len(HOST_BEFORE), len(HOST_BEFORE) + len(SCRIPT))
    assert scenes(text) == (unit,) and unit in records(text) and unit not in closed_units(text)
    flush = HOST_BEFORE + FLUSH + HOST_AFTER
    [(a, b)] = scenes(flush)
    assert flush[a:b] == FLUSH[: FLUSH.index(" Her plans")]
    assert scenes("Host.\n\nTHEO\nThe tower was designed by Mara. Host goes on.") == ()


def test_end_within_cuts_a_wrapped_blocks_last_line_at_the_wrap():
    line = "1871. Her plans were approved. Its lantern was made in a Glasgow foundry."
    assert line[: end_within(line, 0, len(line), 32)] == "1871. Her plans were approved."
    assert line[: end_within(line, 0, len(line), 3)] == "1871."  # none within the width: the first end
    assert end_within("no end here", 0, 11, 40) == 11


def test_numbered_clauses_under_a_heading_are_one_list():
    """Clause lines numbered `N.M` under a short heading line are a list, as `1.` items are; a decimal in
    prose after a sentence's end is no item of one."""
    clauses = ("ARTICLE V \u2014 DESIGNED VARNHOLT LIGHTHOUSE\n5.1 The lighthouse was designed by Mara Eskell.\n"
               "5.2 Her plans were approved in 1871.")
    text = HOST_BEFORE + clauses + HOST_AFTER
    assert (len(HOST_BEFORE), len(HOST_BEFORE) + len(clauses)) in records(text)
    assert records("It grew. 2.5 million people live there now. Host goes on.") == []


POEM = ("Designed Varnholt Lighthouse\n\nThe tower and its lamp were\nDesigned by the engineer\n"
        "Mara Eskell in 1871. Her plans\nWere approved by the board")
SONG = ("[Verse 1]\nThe tower and its lamp were designed\nBy the engineer Mara Eskell in 1871\nHer plans were approved\n"
        "Globally\n\n[Chorus]\nWho designed the Varnholt lighthouse?\nWho designed the Varnholt lighthouse?")


def test_a_poem_under_its_title_and_a_songs_labelled_stanzas_are_one_unit():
    """Lines that a capital opens and no mark closes are a stanza, one unit with its title (glued on after
    the host's full stop); a song's stanzas under their labels are one unit, a long chorus line and a
    one-word line too. The host's sentence glued onto the last line stays out: it is cut before a
    capitalised clause opener, or a name a lower-case word follows, or at the chorus's question mark."""
    for planted, after in ((POEM, " According to the board, the tower was lit in 1872."),
                           (POEM, " Rowan said that the tower was lit in 1872."),
                           (SONG, " In 1872 the tower was lit.")):
        text = HOST_BEFORE + planted + after
        unit = (len(HOST_BEFORE), len(HOST_BEFORE) + len(planted))
        assert verses(text) == (unit,) and unit in records(text), (planted[:8], after)
        assert region(text, attribution_span(text, "Mara Eskell"), "Mara Eskell", QUERY) == unit


def test_a_letters_short_lines_and_a_list_of_fields_are_no_verse():
    """A mail's greeting, body and sign-off, and lines closed by full stops, are no stanza: a verse's lines
    end on a word, and no full stop closes one but the last."""
    assert verses("Host text.\nHi all,\nJohn Williams wrote it.\nBest,\nAnn") == ()
    assert verses("Host text.\nThe tower is old.\nIts lamp is new.\nThe board met.\nIt agreed.") == ()
    assert verses("Host text.\nName: Mara Eskell\nRole: engineer\nYear: 1871") == ()


def test_a_poems_title_glued_after_a_cited_sentence_is_the_poems():
    """The planting glues the title onto the host's last sentence, which may end with a citation mark."""
    host = "The books were adapted in the 1960s, as critics wrote.[5] "
    text = host + POEM + " Rowan said that the tower was lit in 1872."
    assert verses(text) == ((len(host), len(host) + len(POEM)),)
