"""The plain-text alternative of an HTML email (D6), from libxml2's parse of the HTML.

Every preview and every email without a text part needs one. html2text, which we used
first, parses in pure Python (about 2 ms for a 1.4 KB receipt); this walks lxml's tree
without recursion in a tenth of that. The rules are those of a readable text email:

- ``head``, ``script``, ``style`` and other non-content elements are left out, as are images;
- block elements (paragraphs, headings, lists, tables, ...) start on a new line, and
  paragraphs and headings are separated by a blank line; ``br`` breaks the line;
- list items start with ``- `` (``1. ``, ``2. `` in an ordered list);
- table rows are lines and their cells are separated by two spaces;
- a link keeps its text and shows its target after it in parentheses (http, https and
  mailto targets only, and not when the text already is the target);
- whitespace runs collapse to one space, except inside ``pre``; ``hr`` is a line of dashes.
"""

from __future__ import annotations

import html as entities
import re
import threading

import lxml.etree

SKIPPED = frozenset({"head", "title", "script", "style", "template", "noscript", "iframe",
                     "object", "embed", "svg", "math", "canvas", "audio", "video", "select",
                     "button", "img", "map"})
PARAGRAPHS = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "table",
                        "blockquote", "pre", "dl", "figure", "hr", "address", "fieldset"})
LINES = frozenset({"div", "li", "tr", "dt", "dd", "section", "article", "header", "footer",
                   "main", "nav", "aside", "center", "form", "figcaption", "caption",
                   "tbody", "thead", "tfoot", "details", "summary", "html", "body"})
CELLS = frozenset({"td", "th"})
LINK_SCHEMES = ("http://", "https://", "mailto:")
_SPACES = re.compile(r"\s+")
_BLANK_LINES = re.compile(r"\n{3,}")
_TAG = re.compile(r"<[^<>]*>")  # no '<' inside: linear on any input
_parsers = threading.local()  # an lxml parser serves one thread at a time

# libxml2 builds an element's attributes as a list it walks to the end to add each one, so
# k attributes on one element cost k² (80,000 took 7 s, a 1 MB tag of them 24 s). Past this
# budget of the sum of k² over the elements (~20 ms of that work) the text comes from the
# stripped tags, as for nesting libxml2 refuses; real mail is many orders of magnitude below.
ATTRIBUTE_BUDGET = 1 << 24
# What libxml2's tokenizer (HTML5's) can have just before an attribute's first character:
# the space or "/" ending the tag name or the previous name or value, or a value's closing
# quote. So no document has more attributes than these characters, and one with at most
# sqrt(ATTRIBUTE_BUDGET) of them is within the budget without being parsed twice.
_BEFORE_ATTRIBUTE = ("\t", "\n", "\f", "\r", " ", "/", '"', "'")

# What each tag does to the text: a table lookup, one per element, instead of set tests.
SKIP, PARAGRAPH, LIST, RULE, LINE, ITEM, BREAK, CELL, LINK, PRE = range(10)
KINDS: dict[str, int] = {
    **dict.fromkeys(SKIPPED, SKIP), **dict.fromkeys(PARAGRAPHS, PARAGRAPH),
    **dict.fromkeys(LINES, LINE), **dict.fromkeys(CELLS, CELL),
    "ul": LIST, "ol": LIST, "hr": RULE, "li": ITEM, "br": BREAK, "a": LINK, "pre": PRE,
}


def _parser() -> lxml.etree.HTMLParser:
    parser = getattr(_parsers, "parser", None)
    if parser is None:
        # lxml.etree's parser, not lxml.html's: its elements need no Python class lookup
        # each. Bytes in a declared encoding: a str with an XML declaration is refused.
        parser = _parsers.parser = lxml.etree.HTMLParser(encoding="utf-8", remove_comments=True,
                                                         remove_pis=True, no_network=True,
                                                         huge_tree=True)
    return parser


class _AttributeWork:
    """An lxml parser target: the sum over the elements of their number of attributes,
    squared. A target gets each start tag's attributes from the tokenizer, without the tree
    whose building is quadratic in them."""

    __slots__ = ("total",)

    def __init__(self) -> None:
        self.total = 0

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        self.total += len(attrib) ** 2

    def close(self) -> int:
        return self.total


def _over_attribute_budget(html: str, data: bytes) -> bool:
    """Whether building ``data``'s tree would do more than ATTRIBUTE_BUDGET attribute work."""
    # The common cases, without a second parse: a short document (the bench's 1.5 KB), or
    # too few of those characters (about 25 KB of ordinary HTML has 4,096).
    if len(html) ** 2 <= ATTRIBUTE_BUDGET or \
            sum(map(html.count, _BEFORE_ATTRIBUTE)) ** 2 <= ATTRIBUTE_BUDGET:
        return False
    parser = lxml.etree.HTMLParser(encoding="utf-8", no_network=True, huge_tree=True,
                                   target=_AttributeWork())
    return lxml.etree.fromstring(data, parser=parser) > ATTRIBUTE_BUDGET


class _Writer:
    """Text chunks with pending line breaks, so a break is written once, before new text."""

    __slots__ = ("at_line_start", "chunks", "pending")

    def __init__(self) -> None:
        self.chunks: list[str] = []
        self.pending = 0  # 0: none, 1: new line, 2: blank line
        self.at_line_start = True

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

    def words(self, text: str) -> None:
        if not text or (text.isspace() and (self.at_line_start or self.pending)):
            return
        if not text.isprintable() or "  " in text:  # else the only white space is " "
            text = _SPACES.sub(" ", text)
        if text[0] == " " and (self.at_line_start or self.pending or
                               (self.chunks and self.chunks[-1][-1] == " ")):
            text = text[1:]
        self.raw(text)

    def text(self) -> str:
        # Line by line: a regex for "white space before a new line" would go back over a
        # long run of spaces (kept verbatim inside <pre>) once per space.
        lines = "".join(self.chunks).split("\n")
        return _BLANK_LINES.sub("\n\n", "\n".join(line.rstrip() for line in lines)).strip("\n")


class _Links:
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


def html_to_text(html: str) -> str:
    """The text part for ``html``: never empty, ends with one newline."""
    if not html or not html.strip():
        return "\n"
    parser = _parser()
    data = html.encode("utf-8", "surrogatepass")
    try:
        if _over_attribute_budget(html, data):
            return _stripped(html)
        root = lxml.etree.fromstring(data, parser=parser)
    except (lxml.etree.ParserError, ValueError):
        return _stripped(html)
    if root is None or any(error.level_name == "FATAL" for error in parser.error_log):
        # Nothing parsed, or libxml2 gave up part-way (nesting deeper than it allows): keep
        # every word anyway.
        return _stripped(html)
    out = _Writer()
    words = out.words
    skipping = 0  # depth inside a left-out element
    preformatted = 0
    lists: list[int | None] = []  # None: unordered; else the next number
    links = _Links()
    kinds = KINDS
    for event, element in lxml.etree.iterwalk(root, events=("start", "end")):
        tag = element.tag
        kind = kinds.get(tag) if tag.__class__ is str else SKIP  # SKIP: comment or PI
        if event == "start":
            if skipping or kind == SKIP:
                skipping += 1
                continue
            if kind is not None:
                _open(out, element, kind, tag, lists, links)
                if kind == PRE:
                    preformatted += 1
            text = element.text
            if text and preformatted:
                out.raw(text)
            elif text:
                words(text)
            continue
        if skipping:
            skipping -= 1
            if skipping:
                continue
        elif kind is not None:
            _close(out, kind, lists, links)
            if kind == PRE:
                preformatted -= 1
        text = element.tail
        if text and preformatted:
            out.raw(text)
        elif text:
            words(text)
    return out.text() + "\n"


def _stripped(html: str) -> str:
    """Tags removed, entities decoded: the text of a document libxml2 would not parse whole."""
    text = entities.unescape(_TAG.sub(" ", html))
    return _SPACES.sub(" ", text).strip() + "\n"


def _open(out: _Writer, element: lxml.etree._Element, kind: int, tag: str,
          lists: list[int | None], links: _Links) -> None:
    if kind in (PARAGRAPH, PRE):
        out.brk(2)
    elif kind == LIST:
        out.brk(1 if lists else 2)
        lists.append(1 if tag == "ol" else None)
    elif kind == RULE:
        out.brk(2)
        out.raw("-" * 20)
        out.brk(2)
    elif kind in (LINE, ITEM):
        out.brk(1)
        if kind == ITEM:
            number = lists[-1] if lists else None
            out.raw("- " if number is None else f"{number}. ")
            if number is not None:
                lists[-1] = number + 1
    elif kind == BREAK:
        out.raw("\n")
    elif kind == CELL:
        if element.getprevious() is not None:
            out.raw("  ")
    elif kind == LINK:
        href = (element.get("href") or "").strip()
        links.open(href if href.lower().startswith(LINK_SCHEMES) else None, out.chunks)


def _close(out: _Writer, kind: int, lists: list[int | None],
           links: _Links) -> None:
    if kind == LIST and lists:
        lists.pop()
        out.brk(1 if lists else 2)
    elif kind in (PARAGRAPH, PRE, LIST, RULE):
        out.brk(2)
    elif kind in (LINE, ITEM):
        out.brk(1)
    elif kind == LINK and links.stack:
        href, label = links.close(out.chunks)
        if href:
            shown = href[7:] if href.lower().startswith("mailto:") else href
            # label is None: longer than href, so neither href nor shown.
            if label not in (href, shown):
                out.words(shown if label == "" else f" ({shown})")
