"""Safe display of attacker-controlled text (corpus passages, model output).

Invisible characters (zero-width, bidi overrides, other format/control code points) are a known way
to hide poison from a human reader (Trojan-Source style), so views show them as explicit markers
instead of passing them through.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Callable

Span = tuple[int, int]  # a half-open (start, end) character interval of a text
Unit = tuple[Span, bool]  # a format's unit in a text, with whether its writer closed it (`data/formats.py`)

_HIDDEN_CATEGORIES = {"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"}


def is_hidden(ch: str) -> bool:
    return unicodedata.category(ch) in _HIDDEN_CATEGORIES and ch not in "\n\t"


def escape_controls(text: str, keep_newlines: bool = False) -> str:
    """Replace hidden characters with `\\xNN` / `\\uNNNN` escapes (for terminals and plain text)."""
    out = []
    for ch in text:
        if ch == "\n" and keep_newlines:
            out.append(ch)
        elif ch in "\n\t" or is_hidden(ch):
            cp = ord(ch)
            out.append(f"\\x{cp:02x}" if cp < 0x100 else f"\\u{cp:04x}" if cp < 0x10000 else f"\\U{cp:08x}")
        else:
            out.append(ch)
    return "".join(out)


def html_visible(text: str) -> str:
    """HTML-escaped text with each hidden character shown as a marked `[U+XXXX]` badge."""
    out = []
    for ch in text:
        if is_hidden(ch):
            out.append(f'<span class="hidden-char" title="invisible character">[U+{ord(ch):04X}]</span>')
        else:
            out.append(html.escape(ch, quote=True))
    return "".join(out)


# Characters a writer slips inside a word to hide it from a word match while a reader still sees the word
# whole (zero-width space, non-joiner and joiner, word joiner, byte-order mark, soft hyphen): a word runs on
# over them and is read without them.
IN_WORD_INVISIBLE = "\u00ad\u200b\u200c\u200d\u2060\ufeff"
_DROP_INVISIBLE = str.maketrans("", "", IN_WORD_INVISIBLE)
# Cyrillic and Greek letters a reader takes for Latin ones (the letter pairs of Unicode's confusables, TR39,
# that look alike in common fonts): folded to Latin in a word that also holds a Latin letter. A word of
# mixed scripts is a spoof; a Cyrillic or Greek word stays itself.
_LOOK_ALIKE_PAIRS = ("а a", "с c", "е e", "о o", "р p", "х x", "у y", "і i", "ј j", "ѕ s", "ԁ d", "һ h", "ӏ l",
                     "А A", "В B", "С C", "Е E", "Н H", "І I", "Ј J", "К K", "М M", "О O", "Р P", "Ѕ S", "Т T",
                     "Х X", "У Y", "α a", "ο o", "ρ p", "ι i", "ν v", "Α A", "Β B", "Ε E", "Η H", "Ι I", "Κ K",
                     "Μ M", "Ν N", "Ο O", "Ρ P", "Τ T", "Χ X", "Υ Y", "Ζ Z")
LOOK_ALIKES = str.maketrans({pair[0]: pair[2] for pair in _LOOK_ALIKE_PAIRS})
_LATIN = re.compile(r"[A-Za-z]")
_TOKEN = re.compile(rf"\w+(?:[{IN_WORD_INVISIBLE}]+\w+)*", re.UNICODE)
STOPWORDS = frozenset(
    "a an and are as at be by for from has have he her his in is it its of on or she that the their them "
    "they this to was were what when where which who whom why will with how does did do".split()
)


# Small numbers written as words, by the digits they stand for: matching reads "two seasons" as stating the
# answer "2" ("one" stays a word: as a pronoun it is far commoner than the number).
NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero - two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split()) if w != "-"}
DIGIT_WORDS = {d: w for w, d in NUMBER_WORDS.items()}


# A citation marker of Wikipedia-style text ("[18]", "[a]"): a pointer to a note, never a statement of its
# digits ("[2]" does not state the answer "2").
CITATION_MARKER = r"\[\w{1,4}\]"
# An editor's inline tag of Wikipedia-style text ("[citation needed]", "[when?]"): like a marker, it closes
# the sentence it follows and states nothing.
EDITOR_TAG = r"\[[a-z][a-z ]{1,30}(?:needed|\?)\]"
# Either of them: a note mark, which closes a sentence and states nothing
NOTE_MARK = CITATION_MARKER + "|" + EDITOR_TAG
# What may follow a sentence's closing mark at the end of a text: closing quotes or brackets, then any
# markers and tags (".[18]", ".[citation needed]")
CLOSING_MARKS = r"[\"'”’)\]]*"  # closing quotes and brackets after a sentence's closing mark
AFTER_CLOSE = CLOSING_MARKS + r"(?:" + NOTE_MARK + r")*$"
# Text that closes a sentence: a full stop, "!" or "?", then what may follow it.
CLOSES_SENTENCE = re.compile(r"[.!?]" + AFTER_CLOSE)


# Words that open an English clause besides the stopwords' articles, pronouns and prepositions: capitalised
# in the middle of a sentence, after a word and no full stop, one marks a seam where text was glued on.
# Of them, the connective adverbs, which open a sentence with a comma after them ("Also, …", "However, …").
CONNECTIVES = frozenset("however moreover furthermore additionally also surprisingly remarkably interestingly notably "
                        "indeed thus therefore".split())
CLAUSE_OPENERS = STOPWORDS | CONNECTIVES | frozenset(
    "within during after before despite although while since upon according contrary "
    "there these those our one many some most all each every".split())


# Words that, opening a sentence, point back to text before it: pronouns and determiners with an antecedent
# ("This waiver period …", "It has …") and connectives that continue an argument ("However, …", "Instead of
# …"). A text written to stand alone does not open with one.
REFERRING_OPENERS = frozenset(
    "it its this these those that they them their he him his she her such however instead thus therefore "
    "hence moreover furthermore also additionally consequently nevertheless nonetheless meanwhile likewise "
    "similarly otherwise besides accordingly but and yet so".split())


def as_read(word: str) -> str:
    """A word as a reader sees it: without the invisible characters inside it, and its look-alike letters
    folded to Latin when it mixes them with Latin ones ("c\u200bhicago", "еpisodes" with a Cyrillic е)."""
    if word.isascii():
        return word
    word = word.translate(_DROP_INVISIBLE)
    return word.translate(LOOK_ALIKES) if _LATIN.search(word) else word


def word_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, lower-cased word as read, `as_read`) of every word token, stopwords included: regions of
    a prompt are marked by the same words `tokenize` produces."""
    return [(m.start(), m.end(), w.lower() if (w := m.group()).isascii() else as_read(w).lower())
            for m in _TOKEN.finditer(text)]


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens as read (`as_read`), without stopwords: BM25, the monitor and the attacks
    must agree on words, and a word hidden from a match by an invisible character or a look-alike letter is
    still the word."""
    words = _TOKEN.findall(text.lower())
    if not text.isascii():  # only a word with a letter outside ASCII may hide one
        words = [w if w.isascii() else as_read(w) for w in words]
    return [t for t in words if t not in STOPWORDS]


def bare_question(question: str) -> str:
    """The question as an attack text quotes it: without its closing mark or surrounding space, so the
    writer adds its own ('?', '.')."""
    return question.strip().rstrip("?. ")


def black_box_text(question: str, adv: str) -> str:
    """PoisonedRAG's black-box form: the question as a sentence of its own (retrieval bait), then the
    adversarial text."""
    return f"{bare_question(question)}. {adv}"


# where a format's unit opens: after a space or a line break (the planting may glue it on after a host's word: "I
# Wan'na \input texinfo"), or glued on after a sentence end, a colon, a closing mark or a citation's bracket
# ("….[18]Feature: …"); inside a word, never. The readers of `outermost` prefix their openers with it.
OWN_LINE = r"(?<![^\s.!?:\]\"”’)])"


def outermost(pattern: re.Pattern[str], text: str, read: Callable[[str, re.Match[str]], Unit | None]) -> tuple[Unit, ...]:
    """The units that `read` makes of the pattern's matches in the text (None: no unit there), outermost
    only: a match that opens inside the unit found before it is that unit's (a nested block, a paragraph of
    a document), not one of its own. The format readers share it."""
    found: list[Unit] = []
    for m in pattern.finditer(text):
        if found and m.start() < found[-1][0][1]:
            continue
        if (unit := read(text, m)) is not None:
            found.append(unit)
    return tuple(found)


def outermost_of(*found: tuple[Unit, ...]) -> tuple[Unit, ...]:
    """The units that several readers' `outermost` found in one text, in order, outermost across them all:
    a unit that opens inside one found before it (a request inside a capture, a scenario quoted in a
    manual) is that one's. The readers of one family of formats share it."""
    units = sorted(unit for part in found for unit in part)
    return tuple(unit for k, unit in enumerate(units) if not any(o[0][0] <= unit[0][0] < o[0][1] for o in units[:k]))
