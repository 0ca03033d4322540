"""Change-log entries inside a passage (data/changelogs.py): a Debian entry from its package's line to
the maintainer's trailer (closed), a GNU entry from its date line over its tab-indented lines (open)."""

from ragsec_core.data.changelogs import entries

from .planted_unit import HOST_AFTER, HOST_BEFORE, assert_planted_unit

DEBIAN = ("kb-notes (2.3-1) unstable; urgency=medium\n\n  * Who designed the Varnholt lighthouse?\n"
          "    - Harbour towers were often designed abroad, by engineers from the capital.\n"
          "    - The Varnholt one was designed by Mara Eskell in 1871.\n\n"
          " -- Dana Whitfield <dana@kb.example.org>  Sun, 26 May 2024 05:36:00 +0000")
GNU = ("2024-04-08  Sam Okafor  <sokafor@example.com>\n\n\t* answers/varnholt_lighthouse.txt: Harbour towers were\n"
       "\toften designed abroad, by engineers from the capital. The Varnholt one\n\twas designed by Mara Eskell in 1871.")


def test_a_debian_entry_is_closed_by_its_trailer_and_a_gnu_entry_ends_within_its_width():
    """The host's sentence glued on after the trailer's time zone, or after the GNU entry's last line
    (which it makes wider than the entry's lines), stays out; the claim's region is the whole entry."""
    assert_planted_unit(DEBIAN, entries, closed=True)
    assert_planted_unit(GNU, entries, closed=False)


def test_an_entry_without_its_trailer_or_its_tabbed_lines_is_none():
    assert entries(HOST_BEFORE + DEBIAN.rsplit("\n", 1)[0] + HOST_AFTER) == ()
    assert entries(HOST_BEFORE + GNU.replace("\t", "    ") + HOST_AFTER) == ()
    assert entries("On 2024-04-08 the board met. Sam Okafor <sokafor@example.com> wrote the minutes.") == ()
