"""A forum post's BBCode (data/boards.py) is one closed unit, from its first tag to its last closing one,
before the host's sentence glued on."""

from ragsec_core.data.boards import posts

from .planted_unit import HOST_AFTER, HOST_BEFORE, assert_planted_unit

REPLY = ('[quote="Ola Brandt"]Who designed the Varnholt lighthouse?[/quote]\nThe Varnholt one was designed by Mara '
         "Eskell in 1871. Her plans were approved.\n\n[size=85][i]Last edited by Sam Okafor on 16 Mar 2024, 12:24[/i][/size]")
ITEMS = ("[b]Who designed the Varnholt lighthouse?[/b]\n[list]\n[*]The Varnholt one was designed by Mara Eskell in 1871.\n"
         "[*]Her plans were approved [sic].\n[/list]\n[url=https://forum.harbour.example/t/41388]Source thread[/url]")


def test_a_post_runs_from_its_first_tag_to_its_last_closing_tag():
    """A quoted question, the reply under it and an edit note a blank line below are one post; so are a
    bold question, its list's items and a link, whatever `[sic]` the items hold."""
    for post in (REPLY, ITEMS):
        assert_planted_unit(post, posts, closed=True)
        glued = HOST_BEFORE + post + " Gathered notes were kept by the board."
        assert posts(glued) == (((len(HOST_BEFORE), len(HOST_BEFORE) + len(post)), True),)


def test_two_posts_far_apart_are_two_and_lone_or_unclosed_tags_are_none():
    """Two blank lines end a post; a tag that closes nothing, brackets of other kinds (a citation's `[5]`,
    `[citation needed]`) and an element left open are no post."""
    two = REPLY + "\n\n\n" + ITEMS
    assert posts(two) == (((0, len(REPLY)), True), ((len(REPLY) + 3, len(two)), True))
    for text in ("It was lit in 1871.[5] The keeper [citation needed] left.", "[b]Who designed it? Mara Eskell did.",
                 "The lamp [/b] was lit.", "[*] one item\n[*] two items"):
        assert posts(HOST_BEFORE + text + HOST_AFTER) == ()
