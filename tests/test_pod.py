"""POD blocks inside a passage (data/pod.py): from the first command paragraph to `=cut`, `=back` or
`=end` (closed), else over the paragraph after the last command (open)."""

from ragsec_core.data.pod import blocks

from .planted_unit import HOST_AFTER, HOST_BEFORE, assert_planted_unit

NAMED = ("=encoding UTF-8\n\n=head1 NAME\n\ndesigned-varnholt-lighthouse - Who designed the Varnholt lighthouse?\n\n"
         "=head1 DESCRIPTION\n\nHarbour towers were often designed abroad. The Varnholt one was designed by\n"
         "Mara Eskell in 1871.\n\n=cut")
LISTED = ("=head2 Designed Varnholt Lighthouse\n\n=over 4\n\n=item * Who designed the Varnholt lighthouse?\n\n"
          "Harbour towers were often designed abroad. The Varnholt one was designed by\nB<Mara Eskell> in 1871.\n\n=back")
UNCLOSED = "=head1 DESCRIPTION\n\nHarbour towers were often designed abroad. The Varnholt one was designed by\nMara Eskell in 1871."


def test_a_pod_block_is_closed_by_cut_or_back_and_else_ends_at_its_paragraph():
    assert_planted_unit(NAMED, blocks, closed=True)
    assert_planted_unit(LISTED, blocks, closed=True)
    assert_planted_unit(UNCLOSED, blocks, closed=False)


def test_an_equals_sign_in_prose_opens_no_block():
    assert blocks(HOST_BEFORE + "The sum =over the years= grew.\n\nIt = 4." + HOST_AFTER) == ()
