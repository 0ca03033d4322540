"""The units of formats that a tool wrote, each read by a module of its own, gathered in one registry.

Each module of `FORMAT_UNITS` reads one family of files as a RAG system's ingestion leaves them inside a
passage (roff source, a thread's posts, reStructuredText, a change log, an Org outline, a slide, a commit in
`git log`, an INI or TOML section, a resource bundle or a Terraform block, a POD block, a tracker's ticket, a
rendered manual page, an XML document or a namespaced XML element, a crawled web page's text, a chat's or a
log's stamped lines, AsciiDoc source, an RIS or MARC record, a Jira issue's wiki markup or a Redmine page's
Textile, an HL7 message or a GEDCOM record, a Turtle, a GraphQL schema or a Graphviz DOT document, a forum
post's BBCode, a Dockerfile, a Protocol Buffers text-format file, an S-expression form, an LDIF entry, a KDL
node, an ASS subtitle script, WebVTT captions, an HTTP exchange, a Gherkin feature, a Texinfo source, an RFC's
sections, a CoNLL-U annotation, an EDIFACT interchange or a Pug template) and gives each unit it finds with
whether the writer closed it: a closed unit ends at a mark of its own, an open one's last line runs to a
sentence end. `markup` reads them all through `format_units` beside its own marks; a new format's reader is
added here, not in `markup`.
"""

from __future__ import annotations

from collections.abc import Callable

from ragsec_core._util.text import Unit
from ragsec_core.data.asciidoc import units as asciidoc_units
from ragsec_core.data.boards import posts
from ragsec_core.data.builds import dockerfiles
from ragsec_core.data.catalogue import records as catalogue_records
from ragsec_core.data.changelogs import entries as changelog_entries
from ragsec_core.data.commits import commits
from ragsec_core.data.configs import blocks, sections
from ragsec_core.data.datafiles import data_files
from ragsec_core.data.exchanges import exchanges
from ragsec_core.data.graphs import graphs
from ragsec_core.data.interchange import messages
from ragsec_core.data.notations import notations
from ragsec_core.data.outline import entries as org_entries
from ragsec_core.data.pod import blocks as pod_blocks
from ragsec_core.data.rendered import pages
from ragsec_core.data.restructured import units as rst_units
from ragsec_core.data.roff import sources
from ragsec_core.data.scraped import pages as scraped_pages
from ragsec_core.data.slides import slides
from ragsec_core.data.specs import specs
from ragsec_core.data.stamped import excerpts
from ragsec_core.data.subtitles import captions, scripts
from ragsec_core.data.threads import threads
from ragsec_core.data.tickets import tickets
from ragsec_core.data.wikimarkup import issues
from ragsec_core.data.wikimarkup import pages as wiki_pages
from ragsec_core.data.xmlparts import documents, elements

FormatReader = Callable[[str], tuple[Unit, ...]]
FORMAT_UNITS: tuple[FormatReader, ...] = (sources, threads, rst_units, changelog_entries, org_entries, slides,
                                          commits, sections, pod_blocks, tickets, pages,
                                          documents, elements, scraped_pages, excerpts, asciidoc_units, catalogue_records, issues,
                                          messages, blocks, graphs, posts, dockerfiles, wiki_pages, data_files, scripts,
                                          captions, exchanges, specs, notations)


def format_units(text: str) -> tuple[Unit, ...]:
    """Every unit the readers of `FORMAT_UNITS` find in the text, each with whether it is closed, in the
    registry's order (`markup` sorts them with its own)."""
    return tuple(unit for read in FORMAT_UNITS for unit in read(text))
