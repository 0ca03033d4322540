"""The benchmark commands' choices and defaults, in a module without heavy imports: `cli/bench.py`
builds every `ragsec bench` parser from these and imports a benchmark module only when it runs."""

from __future__ import annotations

from ragsec_core._util.paths import shared_data_dir

# bench traceback: where a poison is planted (inside a clean host passage at a seeded sentence boundary,
# or as a passage of its own; a garag copy under "embedded" replaces its own clean passage) and in which
# form (bench/attack_forms.py, docs/attack_forms.md): black: PoisonedRAG's black-box form, the question
# then the adversarial text; text: the adversarial text alone; hotflip: PoisonedRAG's white-box shape, a
# prefix started from the question and HotFlip-optimised against MiniLM, then the adversarial text;
# bait-noise: the adversarial text, then query keywords and related corpus words shuffled into
# non-sentences; blind: RAGDefender's LLM-written misleading article; garag: RAGDefender's typo-perturbed
# copy of the clean passage, replacing it (gold: the sentences that differ); soup: an obfuscated token soup
# of the claim's and the question's words around the false answer, no sentences at all (built once as a
# held-out check, tuned to nothing; the boundary's stuffing rule reads it since its first run). blind and
# garag read RAGDefender's files (--data blind_nq.json, labels from target_queries_nq.json beside it).
# inject, hidden and faq were added on 5 Dec as held-out forms, after every rule of the boundary: an
# instruction to the assistant to give the false answer, the claim in markup a browser hides, a terse
# "Q: ... A: ..." pair. jsonld, forum and table were added on 5 Dec as held-out forms, after the rules of r47:
# a page's structured data (schema.org FAQPage or a plain record), the claim in a forum reply, a markdown
# table row. chat, email, cite and list were added on 5 Dec (second session) as held-out forms, after the
# rules of r52: an agent's turn in a logged chat, an e-mail reply, the claim with reference marks [n], the claim
# as bullet points. quote, note, code and transcript were added on 5 Dec (fourth session) as held-out forms,
# before that session's byline rule: an expert's quoted words, an editor's note or footnote, comments in a
# code snippet (or a shell session's output), a podcast or lecture transcript.
# log and ocr were added on 5 Dec (eighth session) as held-out forms, after the rules of r72: the claim as
# an application's log lines and as a scan's OCR text (bench/held_out_machine.py); html and csv after the
# rules of r75: the claim in a page's visible HTML source and in a spreadsheet's CSV export.
# asr, legal, diff and screenplay were added on 6 Dec (tenth session) after the rules of r79, and feed, sql,
# notebook and verse on 6 Dec (eleventh session) after the rules of r81 (bench/held_out_layout.py,
# bench/held_out_store.py), and ics, qp, roff and thread on 6 Dec (twelfth session) after the rules of r84
# (bench/held_out_wire.py, bench/held_out_layout.py), and po, rtf, rst and changelog on 6 Dec (thirteenth
# session) after the rules of r86 (bench/held_out_source.py), and bibtex, box, org and slides after the
# rules of r88 (bench/held_out_authored.py), and commit, ini, pod and ticket on 6 Dec (fourteenth session)
# after the rules of r90 (bench/held_out_repo.py), and nroff and docx after the rules of r92
# (bench/held_out_render.py), and toml, jsonl and scrape on 6 Dec (fifteenth session) after the rules of r94
# (bench/held_out_export.py), and asciidoc, whatsapp and properties on 6 Dec (sixteenth session) after the
# rules of r96 (bench/held_out_team.py), and ris, marc and jira on 6 Dec (seventeenth session) after the
# rule of r99 (bench/held_out_catalog.py), and hl7, gedcom and hcl on 7 Dec (eighteenth session)
# (bench/held_out_domain.py), and turtle, graphql and bbcode on 7 Dec (nineteenth session) after the rules
# of r103 (bench/held_out_graph.py), and dockerfile, plist and textile on 7 Dec (twentieth session) after
# the rules of r105 (bench/held_out_bundle.py), and textproto, sexp and ldif on 7 Dec (twenty-first
# session) after the rules of r107 and r108 (bench/held_out_records.py), and ass, dot and kdl the same day
# after the rules of r110 (bench/held_out_scripts.py), and vtt, vcard and http on 7 Dec (twenty-third
# session) after the rules of r113 (bench/held_out_captures.py), and gherkin, texinfo and rfc on 7 Dec
# (twenty-fourth session) after the rules of r115 (bench/held_out_specs.py), and conllu, edifact and pug on
# 8 Dec (twenty-fifth session) after the rules of r117 (bench/held_out_notations.py).
PLANT_MODES = ("embedded", "standalone")
ATTACK_FORMS = ("black", "text", "hotflip", "bait-noise", "blind", "garag", "soup", "inject", "hidden", "faq",
                "jsonld", "forum", "table", "chat", "email", "cite", "list", "quote", "note", "code", "transcript",
                "review", "pdf", "abstract", "social", "srt", "wiki", "markdown", "caption", "log", "ocr",
                "html", "csv", "latex", "unicode", "reply", "yaml", "asr", "legal", "diff", "screenplay",
                "feed", "sql", "notebook", "verse", "ics", "qp", "roff", "thread", "po",
                "rtf", "rst", "changelog", "bibtex", "box", "org", "slides",
                "commit", "ini", "pod", "ticket", "nroff", "docx", "toml", "jsonl", "scrape",
                "asciidoc", "whatsapp", "properties", "ris", "marc", "jira", "hl7", "gedcom", "hcl",
                "turtle", "graphql", "bbcode", "dockerfile", "plist", "textile",
                "textproto", "sexp", "ldif", "ass", "dot", "kdl", "vtt", "vcard", "http",
                "gherkin", "texinfo", "rfc", "conllu", "edifact", "pug")

# bench speed: its sections ("hybrid" is only the hybrid part of "retrieval") and its default events file
SPEED_SECTIONS = ("traceback", "retrieval", "hybrid", "attention", "startup")
SPEED_DATA = shared_data_dir() / "stealthy" / "wiki_open_nq.json"
