"""The text a plain-text conversion writes: chunks with pending line breaks, and the labels
of open links (engine/formats/plaintext.py)."""

from __future__ import annotations

import re

_SPACES = re.compile(r"\s+")
_BLANK_LINES = re.compile(r"\n{3,}")


class TextWriter:
    """Text chunks with pending line breaks, so a break is written once, before new text."""

    __slots__ = ("at_line_start", "chunks", "pending", "verbatim")

    def __init__(self) -> None:
        self.chunks: list[str] = []
        self.pending = 0  # 0: none, 1: new line, 2: blank line
        self.at_line_start = True
        self.verbatim = False  # whether text was written as it is (inside <pre>)

    def brk(self, level: int) -> None:
        if self.chunks and level > self.pending:
            self.pending = level

    def raw(self, text: str) -> None:
        if not text:
            return
        if self.pending:
            self.chunks.append("\n" if self.pending == 1 else "\n\n")
            self.pending = 0
        self.chunks.append(text)
        self.at_line_start = text[-1] == "\n"

    def keep(self, text: str) -> None:
        """Text as it is, white space and all (inside <pre>)."""
        self.verbatim = True
        self.raw(text)

    def words(self, text: str) -> None:
        if not text or (text.isspace() and (self.at_line_start or self.pending)):
            return
        if not text.isprintable() or "  " in text:  # else the only white space is " "
            text = _SPACES.sub(" ", text)
        pending = self.pending
        if text[0] == " " and (self.at_line_start or pending or
                               (self.chunks and self.chunks[-1][-1] == " ")):
            text = text[1:]
            if not text:
                return
        # raw(), inline: this runs once for each text of the document.
        if pending:
            self.chunks.append("\n" if pending == 1 else "\n\n")
            self.pending = 0
        self.chunks.append(text)
        self.at_line_start = False  # text has no new line, and is not empty

    def text(self) -> str:
        joined = "".join(self.chunks)
        # Outside <pre> the only white space written is " " and new lines (words() makes
        # every other space a " "): with none before a new line, nor three new lines in a
        # row, there is nothing to take away.
        if not self.verbatim and " \n" not in joined and joined[-1:] != " " \
                and "\n\n\n" not in joined:
            return joined.strip("\n")
        # Line by line: a regex for "white space before a new line" would go back over a
        # long run of spaces (kept verbatim inside <pre>) once per space.
        lines = joined.split("\n")
        return _BLANK_LINES.sub("\n\n", "\n".join(line.rstrip() for line in lines)).strip("\n")


class Links:
    """The open links, and what their labels need to be compared with their targets.

    A label is everything written since its link opened, stripped. Joining it at each
    closing link cost (text length) x (nesting depth): 1,000 nested links over 1 MB took
    over a second. Only two facts are needed: whether the label is empty, and whether it
    equals the target (``label (target)`` or just ``target``). So each link keeps the index
    of its first chunk with a non-space character, found by scanning each chunk at most
    once over the whole document (a closing link hands what it found to its parent); the
    last such chunk is one for the whole writer, also scanned once; and the label is only
    built when its length, from at most len(target) + 1 chunks, is the target's: the sum of
    targets is bounded by the document's length. So the whole walk stays linear.
    """

    __slots__ = ("last", "seen", "stack", "strips")

    def __init__(self) -> None:
        # Per open link: [target or None, first chunk, first chunk with text or -1,
        # chunks[first chunk:this] known to be all white space].
        self.stack: list[list] = []
        self.last = -1  # the last chunk with a non-space character among chunks[:seen]
        self.seen = 0
        # The leading (key i) and trailing (key ~i) white space of chunk i: strip copies the
        # chunk, and 1,000 nested labels can start (or end) in one megabyte-long chunk. Made
        # when first needed: most emails have no link in a link.
        self.strips: dict[int, int] | None = None

    def open(self, href: str | None, chunks: list[str]) -> None:
        at = len(chunks)
        self.stack.append([href, at, -1, at])

    def close(self, chunks: list[str]) -> tuple[str | None, str | None]:
        """The closed link's target (None if not shown) and, if it has one, its label: ""
        when empty, the label itself when it could be the target, else None."""
        href, start, first, scanned = self.stack.pop()
        stack = self.stack
        if not stack:
            # Outside every other link: the chunks joined here are in no other label, so
            # joining them is linear, and the quickest for the few links of a usual email.
            return href, ("".join(chunks[start:]).strip() if href else "")
        end = len(chunks)
        if first < 0:
            first = _text_chunk(chunks, scanned, end)
        parent = stack[-1]
        if parent[2] < 0:  # its chunks before this link's, then this link's result
            found = _text_chunk(chunks, parent[3], start)
            parent[2] = found if found >= 0 else first
            parent[3] = end
        if not href or first < 0:
            return href, ""
        return href, self._label(chunks, first, len(href))

    def _label(self, chunks: list[str], first: int, longest: int) -> str | None:
        """The stripped text of chunks[first:] if it is at most ``longest`` long, else None."""
        end = len(chunks)
        for i in range(end - 1, self.seen - 1, -1):
            if not chunks[i].isspace():
                self.last = i
                break
        self.seen = end
        last = self.last  # >= first: chunks[first] has text
        if last - first > longest:  # every chunk is non-empty
            return None
        strips = self.strips
        if strips is None:
            strips = self.strips = {}
        lead = strips.get(first)
        if lead is None:
            chunk = chunks[first]
            lead = strips[first] = len(chunk) - len(chunk.lstrip())
        trail = strips.get(~last)
        if trail is None:
            chunk = chunks[last]
            trail = strips[~last] = len(chunk) - len(chunk.rstrip())
        if sum(map(len, chunks[first:last + 1])) - lead - trail > longest:
            return None
        if first == last:
            return chunks[first][lead:len(chunks[first]) - trail]
        return "".join((chunks[first][lead:], *chunks[first + 1:last],
                        chunks[last][:len(chunks[last]) - trail]))


def _text_chunk(chunks: list[str], start: int, end: int) -> int:
    """The index of the first of chunks[start:end] with a non-space character, or -1."""
    for i in range(start, end):
        if not chunks[i].isspace():
            return i
    return -1
