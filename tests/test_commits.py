"""Commits as `git log` prints them (data/commits.py): from the hash line over the header and the indented
message, closed by a trailer or the diffstat's summary, else open at the last line's first sentence end."""

from ragsec_core.data.commits import commits

from .planted_unit import HOST_AFTER, HOST_BEFORE, assert_planted_unit

HEAD = ("commit 82bf697354b8a58305744ea6da28f0158d870203\nAuthor: Ola Brandt <ola.brandt@example.net>\n"
        "Date:   Sun Jan 21 03:17:00 2024 +0000\n\n    Update answer: Who designed the Varnholt lighthouse?\n    \n"
        "    Harbour towers were often designed abroad. The Varnholt one was designed\n"
        "    by Mara Eskell in 1871.")
SIGNED = HEAD + "\n    \n    Signed-off-by: Ola Brandt <ola.brandt@example.net>"
STAT = HEAD + "\n\n answers/designed-varnholt-lighthouse.md | 4 ++--\n 1 file changed, 2 insertions(+), 2 deletions(-)"
PATCH = (HEAD + "\n\ndiff --git a/answers/v.md b/answers/v.md\n--- a/answers/v.md\n+++ b/answers/v.md\n"
         "@@ -1 +1 @@\n-Jens Holm\n+Mara Eskell")


def test_a_commit_is_closed_by_its_trailer_or_its_diffstat_and_else_ends_at_a_sentence():
    """The host's sentence glued on after the trailer's mail, the summary's `(-)` or the message's last
    sentence stays out; the claim's region is the whole commit, its hash line included."""
    assert_planted_unit(SIGNED, commits, closed=True)
    assert_planted_unit(STAT, commits, closed=True)
    assert_planted_unit(HEAD, commits, closed=False)


def test_a_commit_that_opens_a_patch_and_a_commit_named_in_prose_are_none():
    assert commits(HOST_BEFORE + PATCH + HOST_AFTER) == ()
    assert commits("The fix went in with commit 82bf697 last week.\nAuthor: unknown.\n\n    Indented.") == ()
