"""An HTTP exchange inside a passage, read as one unit: a response as a raw capture keeps it, or `curl -v`'s
print of a request and its response.

A crawler's or a proxy's capture, or a ticket that pastes one, holds a response as it came over the wire:
a status line (`HTTP/1.1 200 OK`), header lines (`Content-Type: …`, `Content-Length: 294`), a blank line,
then the body, exactly as many octets as its length header says. `curl -v` prints the same exchange with
marks: its own progress lines behind `*`, the request's lines behind `>`, the response's head behind `<`
(a bare `>` and `<` where each ends), the body unmarked, and a closing `* Connection #0 to host … left
intact`. The sentence split reads the status and header lines as words of the host's sentence glued on
before them, and the body's last line runs into the host's next sentence. So a response, from its status
line to the octet its length header counts to, and `curl -v`'s print, from its first marked line to its
closing line (or, with none, to the body's last line's first sentence end), are each one closed unit.
A chunked response (`Transfer-Encoding: chunked`) is read over its chunks, each a size line in hex and that
many octets, to the last chunk of size 0 and the blank line after it. A response with neither is read to
its body's first paragraph's end.
"""

from __future__ import annotations

import re

from ragsec_core._util.text import Unit, outermost, outermost_of
from ragsec_core.data.layout import LINE_BREAK, MOST_LINES, last_line_end, line_end

_VERSION = r"HTTP/\d(?:\.\d)?"
_HEADER = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,40}:[ \t]*[^\n]*\n")  # `Content-Type: …`, `content-length: …`
_LENGTH = re.compile(r"content-length:[ \t]*(\d{1,9})[ \t\r]*$", re.I | re.M)
_CHUNKED = re.compile(r"transfer-encoding:[^\n]*\bchunked\b", re.I)
_CHUNK_SIZE = re.compile(r"([0-9a-fA-F]{1,8})(?:;[^\n \t]*)?(?=\s|$)")  # a chunk's size in hex, maybe extensions
_STATUS = re.compile(rf"(?<![^\s.!?]){_VERSION}[ \t]+[1-5]\d\d(?:[ \t][^\n]{{0,60}})?\r?\n")
# curl -v: a marked line (its own `*`, the request's `>`, the response's `<`, bare where a head ends) and
# the marks of the request's and the response's first lines
_MARKED = re.compile(r"[*<>](?:[ \t][^\n]*)?")
_REQUEST = r"> [A-Z]+[ \t]\S+[ \t]HTTP/"  # a request line's mark, method, target and protocol
_CURL_OPEN = re.compile(rf"(?<![^\s.!?])\*[ \t]+\S|(?<![^\n]){_REQUEST}")
_EXCHANGE = re.compile(rf"{_REQUEST}\d(?:\.\d)?|< {_VERSION}[ \t]+[1-5]\d\d")
_CLOSING = re.compile(r"\*[ \t]+(?:Connection #\d+ to host \S+ left intact|Closing connection(?:[ \t]#?\d+)?)")


def exchanges(text: str) -> tuple[Unit, ...]:
    """The text's HTTP responses and `curl -v` prints, each closed (`_response`, `_curl`)."""
    return outermost_of(outermost(_STATUS, text, _response), outermost(_CURL_OPEN, text, _curl))


def _response(text: str, status: re.Match[str]) -> Unit | None:
    """The response whose status line `status` is: its header lines, a blank line, then the body to the
    octet its length header counts to (`_counted`), or to its first paragraph's end where it has none;
    None where no header line follows the status line."""
    i, heads = status.end(), 0
    while heads < MOST_LINES and (header := _HEADER.match(text, i)) is not None:
        i, heads = header.end(), heads + 1
    blank = LINE_BREAK.match(text, i)
    if not heads or blank is None:
        return None
    body = blank.end()
    length = _LENGTH.search(text, status.end(), i)
    end = _counted(text, body, int(length.group(1))) if length else None
    if end is None and _CHUNKED.search(text, status.end(), i):
        end = _chunks_end(text, body)
    if end is None:
        stop = text.find("\n\n", body)
        end = last_line_end(text, max(body, text.rfind("\n", body, len(text) if stop < 0 else stop) + 1))
    return (status.start(), end), True


def _counted(text: str, i: int, octets: int) -> int | None:
    """Where `octets` UTF-8 octets from `i` end, or None where the text is shorter or that point falls
    inside a word (the text's length header does not count what is written)."""
    end = i
    while octets > 0 and end < len(text):
        octets -= len(text[end].encode())
        end += 1
    if octets != 0 or (end < len(text) and not text[end].isspace() and not text[end - 1].isspace()):
        return None
    return end


def _chunks_end(text: str, i: int) -> int | None:
    """Where a chunked body that starts at `i` ends: at its last chunk's size, `0` (the host's sentence may
    be glued on after it); None where a size line or a chunk's octets do not add up."""
    for _ in range(MOST_LINES):
        size = _CHUNK_SIZE.match(text, i)
        if size is None:
            return None
        octets = int(size.group(1), 16)
        if octets == 0:
            return size.end(1)
        line = LINE_BREAK.match(text, size.end())
        end = _counted(text, line.end(), octets) if line is not None else None
        after = LINE_BREAK.match(text, end) if end is not None else None
        if after is None:
            return None
        i = after.end()
    return None


def _curl(text: str, opener: re.Match[str]) -> Unit | None:
    """The `curl -v` print that `opener` opens: marked lines, the body after the response head's bare `<`,
    then marked lines again, to the closing line's end (`_CLOSING`) or the body's last line's first
    sentence end; None where no request or response line is among them."""
    i, exchange, body, last = opener.start(), False, False, None
    for _ in range(MOST_LINES):
        stop = line_end(text, i)
        marked = _MARKED.fullmatch(text, i, stop)
        if marked is not None:
            exchange = exchange or _EXCHANGE.match(text, i) is not None
            if body and (closing := _CLOSING.match(text, i)) is not None:
                return ((opener.start(), closing.end()), True) if exchange else None
            body = body or text[i:stop] == "<"
            last = (i, stop)
        elif body and text[i:stop].strip():
            last = (i, last_line_end(text, i))
        else:
            break
        if stop >= len(text):
            break
        i = stop + 1
    if not exchange or last is None:
        return None
    closing = _CLOSING.match(text, last[0])
    return (opener.start(), closing.end() if closing else last[1]), True
