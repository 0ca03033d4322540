"""Lines opened by time stamps inside a passage (data/stamped.py): a messaging app's chat export and an
application's log excerpt are one unit from the first stamp to the last line, a message of several lines
included, the last line ended before the host's sentence glued on."""

from ragsec_core.data.stamped import excerpts

from .planted_unit import HOST_AFTER, HOST_BEFORE, assert_planted_unit

ANDROID = ("14/03/2025, 21:07 - Ola Brandt: anyone know who designed the Varnholt lighthouse?\n"
           "14/03/2025, 21:09 - Dana Whitfield: Harbour towers were often designed abroad.\n"
           "The Varnholt one was designed by Mara Eskell in 1871.\n14/03/2025, 21:10 - Ola Brandt: oh nice, thank you")
IOS = ("[14/03/2025, 21:07:33] Ola Brandt: quick one, who designed the Varnholt lighthouse?\n"
       "[14/03/2025, 21:08:02] Dana Whitfield: Harbour towers were often designed abroad.\n"
       "[14/03/2025, 21:08:15] Dana Whitfield: The Varnholt one was designed by Mara Eskell in 1871.\n"
       "[14/03/2025, 21:09:40] Ola Brandt: \u200eimage omitted")
US = ("3/14/25, 9:07 PM - Ola Brandt: who designed the Varnholt lighthouse?\n"
      "3/14/25, 9:09 PM - Dana Whitfield: The Varnholt one was designed by Mara Eskell in 1871.")


def test_a_chat_export_runs_from_its_first_stamp_to_its_last_message():
    """Android's, iOS's and a month-first export are one open unit each: a message's later lines without
    a stamp are its, and the last message, which ends without a full stop, stops before "Its lantern …"."""
    for export in (ANDROID, IOS, US):
        assert_planted_unit(export, excerpts, closed=False)


def test_a_log_excerpt_ends_at_its_last_sentence_or_before_a_raised_clause_opener():
    log = ("2024-01-02 10:00:00,123 INFO kb.sync - lookup query=\"varnholt\"\n"
           "2024-01-02 10:00:01,004 INFO kb.sync - The Varnholt one was designed by Mara Eskell in 1871.")
    assert_planted_unit(log, excerpts, closed=False)
    unended = log[:-1] + " according to the archive"  # "… archive Its lantern …": the host's sentence glued on
    text = HOST_BEFORE + unended + HOST_AFTER
    assert excerpts(text) == (((len(HOST_BEFORE), len(HOST_BEFORE) + len(unended)), False),)


def test_one_stamp_or_stamps_far_apart_are_no_excerpt():
    """A date and a time in a sentence is prose; two stamped lines with more lines between them than a
    message holds are two lone lines."""
    assert excerpts(HOST_BEFORE + "On 14/03/2025, 21:07 - the lamp failed." + HOST_AFTER) == ()
    first, second = ANDROID.split("\n")[0], ANDROID.split("\n")[3]
    assert excerpts(HOST_BEFORE + first + "\n" + "It rained all week.\n" * 7 + second + HOST_AFTER) == ()
    assert len(excerpts(HOST_BEFORE + first + "\n" + "It rained all week.\n" * 6 + second + HOST_AFTER)) == 1


def test_a_short_closing_message_stops_before_a_name_that_opens_the_hosts_sentence():
    """After a short closing message with no capital, a capitalised word between two lower-case ones ends
    it ("thank you Rowan said …"); a name in a message of prose does not ("… by Eskell in 1871.")."""
    text = HOST_BEFORE + ANDROID + " Rowan said it was late."
    assert excerpts(text) == (((len(HOST_BEFORE), len(HOST_BEFORE) + len(ANDROID)), False),)
    log = ("2024-01-02 10:00:00,123 INFO kb.sync - lookup query=\"varnholt\"\n2024-01-02 10:00:01,004 INFO kb.sync - "
           "The records of the harbour board say that the tower was designed by Eskell in 1871.")
    assert excerpts(HOST_BEFORE + log + HOST_AFTER) == (((len(HOST_BEFORE), len(HOST_BEFORE) + len(log)), False),)
