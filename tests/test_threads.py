"""A microblog thread inside a passage (data/threads.py): numbered posts from `1/n` to `n/n` are one unit,
from the first post's author line to the last post's counts or its first sentence end."""

from ragsec_core.data.threads import threads

from .planted_unit import assert_planted_unit

BARE = ("1/3 Who designed the Varnholt lighthouse? A thread.\n\n2/3 Harbour towers were often designed abroad.\n\n"
        "3/3 The Varnholt one was designed by Mara Eskell in 1871.")
FRAMED = "\n\n".join(f"Quiet Fox @quietfox42 \u00b7 5h\n{k}/3 {post}\n\u21a9 {k}   \u21bb 1{k}   \u2661 8{k}" for k, post in enumerate(
    ("Who designed the Varnholt lighthouse? A thread.", "Harbour towers were often designed abroad.",
     "The Varnholt one was designed by Mara Eskell in 1871."), 1))


def test_a_thread_runs_from_its_first_post_to_its_last_and_is_closed_by_its_last_counts():
    """Bare posts run to the last post's first sentence end (the host's sentence glued on is not the
    thread's); framed posts from the first author line to the last counts, a closed unit. The claim's
    region is the whole thread, its opening post (the question) included."""
    for planted, closed in ((BARE, False), (FRAMED, True)):
        assert_planted_unit(planted, threads, closed)


def test_numbers_that_do_not_count_through_make_no_thread():
    """A fraction in prose, posts out of order and a numbering that stops short are no thread."""
    assert threads("About 1/3 of the towers were lit by 1871.\nThe rest later.") == ()
    assert threads("1/3 First.\n3/3 Third.\n2/3 Second.") == ()
    assert threads(BARE.replace("\n\n3/3", " and")) == ()
